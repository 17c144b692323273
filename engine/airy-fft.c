#define G_LOG_DOMAIN "airy-fft"

#include "config.h"

#include <stdlib.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "airy-fft-private.h"
#include "airy-run.h"

typedef struct
{
  int    kind;      /* 0 c2c 2-D, 1 r2c 2-D, 2 c2r 2-D, 3 c2c 1-D many, 4 r2c 1-D, 5 c2r 1-D */
  int    sign;
  guint  height;    /* 2-D: rows; 1-D many: howmany */
  guint  width;     /* 2-D: columns; 1-D: length */
  guint  threads;
  guint  stride;    /* 1-D many: element stride and distance, in place or not */
  guint  dist;
  guint  in_place;
  guint  unaligned; /* planned with FFTW_UNALIGNED */
} PlanKey;

static GMutex      plan_lock;
static GHashTable *plans;        /* PlanKey* → fftwf_plan */
static gboolean    wisdom_dirty;

static guint
plan_key_hash (gconstpointer p)
{
  const PlanKey *k = p;
  return ((((((k->kind * 31u + (guint) k->sign) * 131u + k->height) * 8191u + k->width) * 17u
            + k->threads) * 257u + k->stride) * 65537u + k->dist) * 3u + k->in_place * 2u + k->unaligned;
}

static gboolean
plan_key_equal (gconstpointer a, gconstpointer b)
{
  const PlanKey *x = a, *y = b;
  return x->kind == y->kind && x->sign == y->sign && x->height == y->height
         && x->width == y->width && x->threads == y->threads && x->stride == y->stride
         && x->dist == y->dist && x->in_place == y->in_place && x->unaligned == y->unaligned;
}

const char *
_airy_fft_wisdom_path (void)
{
  static char *path;

  if (g_once_init_enter (&path))
    g_once_init_leave (&path, g_build_filename (g_get_user_cache_dir (), "airy",
                                                        "fftwf-wisdom", NULL));
  return path;
}

static unsigned
planner_flags (void)
{
  const char *mode = g_getenv ("AIRY_FFTW_PLANNER");

  /* Tests and quick checks may trade speed for planning time. */
  if (mode != NULL && g_str_equal (mode, "estimate"))
    return FFTW_ESTIMATE;
  return FFTW_MEASURE;
}

typedef struct
{
  void *(*work) (char *);
  char  *data;
} LoopJob;

static gpointer
loop_job_run (gpointer data)
{
  LoopJob *job = data;

  job->work (job->data);
  return NULL;
}

/* FFTW's parallel loops on threads of Airy's own, joined before the loop
 * returns: FFTW keeps no pool of worker threads then, which would still
 * be waiting (alive) when the program exits. */
static void
parallel_loop (void *(*work) (char *), char *jobdata, size_t elsize, int njobs, void *data)
{
  g_autofree GThread **threads = g_new0 (GThread *, MAX (njobs, 1));
  g_autofree LoopJob *jobs = g_new0 (LoopJob, MAX (njobs, 1));
  int i;

  for (i = 1; i < njobs; i++)
    {
      jobs[i] = (LoopJob) { work, jobdata + (gsize) i * elsize };
      threads[i] = g_thread_new ("airy-fftw", loop_job_run, &jobs[i]);
    }
  if (njobs > 0)
    work (jobdata);
  for (i = 1; i < njobs; i++)
    g_thread_join (threads[i]);
}

static void
ensure_init_locked (void)
{
  if (plans != NULL)
    return;
  fftwf_init_threads ();
  fftwf_threads_set_callback (parallel_loop, NULL);
  /* plans are made while other threads execute theirs */
  fftwf_make_planner_thread_safe ();
  plans = g_hash_table_new_full (plan_key_hash, plan_key_equal, g_free, NULL);
  fftwf_import_wisdom_from_filename (_airy_fft_wisdom_path ());
}

void
_airy_fft_save_wisdom (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *tmp = NULL;

  g_mutex_lock (&plan_lock);
  if (wisdom_dirty)
    {
      dir = g_path_get_dirname (_airy_fft_wisdom_path ());
      /* one temporary per process: the ranks of a run may save at once */
      tmp = g_strdup_printf ("%s.%d.tmp", _airy_fft_wisdom_path (), (int) getpid ());
      if (g_mkdir_with_parents (dir, 0755) == 0
          && fftwf_export_wisdom_to_filename (tmp))
        g_rename (tmp, _airy_fft_wisdom_path ());
      else
        g_unlink (tmp);
      wisdom_dirty = FALSE;
    }
  g_mutex_unlock (&plan_lock);
}

/* The wisdom this process holds (its own plans and what it imported), as
 * FFTW's text; g_free it. */
char *
_airy_fft_export_wisdom (void)
{
  char *text, *copy;

  g_mutex_lock (&plan_lock);
  ensure_init_locked ();
  text = fftwf_export_wisdom_to_string ();
  g_mutex_unlock (&plan_lock);
  copy = g_strdup (text != NULL ? text : "");
  free (text);
  return copy;
}

/* Another process's wisdom joins this one's: later plans of the same
 * transforms are those plans, not measured again. */
gboolean
_airy_fft_import_wisdom (const char *text)
{
  gboolean ok;

  g_mutex_lock (&plan_lock);
  ensure_init_locked ();
  ok = text[0] == '\0' || fftwf_import_wisdom_from_string (text);
  g_mutex_unlock (&plan_lock);
  return ok;
}

/* The plans go, and FFTW's thread state: nothing of FFTW is left at exit.
 * A later transform sets it up again. */
void
_airy_fft_shutdown (void)
{
  GHashTableIter iter;
  gpointer plan;

  _airy_fft_save_wisdom ();
  g_mutex_lock (&plan_lock);
  if (plans != NULL)
    {
      g_hash_table_iter_init (&iter, plans);
      while (g_hash_table_iter_next (&iter, NULL, &plan))
        fftwf_destroy_plan (plan);
      g_clear_pointer (&plans, g_hash_table_destroy);
      fftwf_cleanup_threads ();
    }
  g_mutex_unlock (&plan_lock);
}

/* The plan of key on scratch arrays; flags for the complex transforms,
 * real_flags for the real ones (always aligned) */
static fftwf_plan
plan_for (const PlanKey *key, unsigned flags, unsigned real_flags, fftwf_complex *c, fftwf_complex *c2, float *r)
{
  int len = (int) key->width;

  switch (key->kind)
    {
    case 0:
      return fftwf_plan_dft_2d ((int) key->height, (int) key->width, c, c, key->sign, flags);
    case 1:
      return fftwf_plan_dft_r2c_2d ((int) key->height, (int) key->width, r, c, real_flags);
    case 2:
      return fftwf_plan_dft_c2r_2d ((int) key->height, (int) key->width, c, r, real_flags);
    case 3:
      return fftwf_plan_many_dft (1, &len, (int) key->height, c, NULL, (int) key->stride, (int) key->dist,
                                  c2, NULL, (int) key->stride, (int) key->dist, key->sign, flags);
    case 4:
      return fftwf_plan_dft_r2c_1d (len, r, c, real_flags);
    default:
      return fftwf_plan_dft_c2r_1d (len, c, r, real_flags);
    }
}

static fftwf_plan
plan_get_full (PlanKey key)
{
  fftwf_plan plan;

  g_mutex_lock (&plan_lock);
  ensure_init_locked ();
  plan = g_hash_table_lookup (plans, &key);
  if (plan == NULL)
    {
      guint height = key.height, width = key.width;
      int kind = key.kind;
      gsize n = (gsize) height * width;
      gsize span = kind == 3 ? (gsize) (key.height - 1) * key.dist + (gsize) (key.width - 1) * key.stride + 1 : 0;
      /* Plan on scratch arrays: MEASURE overwrites them. Execution uses the
       * new-array interface on fftwf_malloc'd buffers of the same alignment. */
      fftwf_complex *c = fftwf_alloc_complex (kind == 0 ? n : kind == 3 ? span
                                              : kind >= 4 ? width / 2 + 1 : (gsize) height * (width / 2 + 1));
      fftwf_complex *c2 = kind == 3 && !key.in_place ? fftwf_alloc_complex (span) : c;
      float *r = kind == 0 || kind == 3 ? NULL : fftwf_alloc_real (kind >= 4 ? width : n);
      unsigned flags = planner_flags () | (key.unaligned ? FFTW_UNALIGNED : 0);

      fftwf_plan_with_nthreads ((int) key.threads);
      /* from the wisdom alone where it has this transform: then nothing
       * new is learnt, and no run has to save the wisdom again */
      plan = plan_for (&key, flags | FFTW_WISDOM_ONLY, planner_flags () | FFTW_WISDOM_ONLY, c, c2, r);
      if (plan == NULL)
        {
          plan = plan_for (&key, flags, planner_flags (), c, c2, r);
          wisdom_dirty = TRUE;
        }
      if (c2 != c)
        fftwf_free (c2);
      fftwf_free (c);
      fftwf_free (r);
      if (plan == NULL)
        g_error ("FFTW could not plan a %u × %u transform (kind %d)", height, width, kind);
      g_hash_table_insert (plans, g_memdup2 (&key, sizeof key), plan);
    }
  g_mutex_unlock (&plan_lock);
  return plan;
}

static fftwf_plan
plan_get (int kind, int sign, guint height, guint width, guint threads)
{
  PlanKey key = { kind, sign, height, width, MAX (threads, 1), 0, 0, 0, 0 };
  return plan_get_full (key);
}

/* FFTW's new-array execute needs the alignment the plan was made with;
 * planes inside one allocation (wavelength l at data + l·H·W) need not have
 * it, so those get a plan made for any alignment. */
void
_airy_fft_c2c_execute (guint          height,
                       guint          width,
                       AiryFftSign    sign,
                       guint          threads,
                       fftwf_complex *in,
                       fftwf_complex *out)
{
  gboolean aligned = fftwf_alignment_of ((float *) in) == 0 && fftwf_alignment_of ((float *) out) == 0;
  PlanKey key = { 0, sign, height, width, MAX (threads, 1), 0, 0, 0, aligned ? 0 : 1 };

  fftwf_execute_dft (plan_get_full (key), in, out);
}

fftwf_plan
_airy_fft_plan_many (guint       length,
                     guint       howmany,
                     guint       stride,
                     guint       dist,
                     gboolean    in_place,
                     AiryFftSign sign,
                     guint       threads)
{
  PlanKey key = { 3, sign, howmany, length, MAX (threads, 1), stride, dist, in_place ? 1 : 0, 0 };
  return plan_get_full (key);
}

fftwf_plan
_airy_fft_plan_r2c_1d (guint length,
                       guint threads)
{
  return plan_get (4, 0, 1, length, threads);
}

fftwf_plan
_airy_fft_plan_c2r_1d (guint length,
                       guint threads)
{
  return plan_get (5, 0, 1, length, threads);
}

fftwf_plan
_airy_fft_plan_c2c (guint height, guint width, AiryFftSign sign, guint threads)
{
  return plan_get (0, sign, height, width, threads);
}

fftwf_plan
_airy_fft_plan_r2c (guint height, guint width, guint threads)
{
  return plan_get (1, 0, height, width, threads);
}

fftwf_plan
_airy_fft_plan_c2r (guint height, guint width, guint threads)
{
  return plan_get (2, 0, height, width, threads);
}

void
_airy_fft_centred (AiryField  *field,
                   AiryFftSign sign,
                   guint       threads)
{
  guint h = field->height, w = field->width, l;
  gsize n = airy_field_plane_size (field);

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * n;
      fftwf_complex *s = field->scratch + l * n;

      /* ifftshift moves pixel ⌊N/2⌋ to 0: a roll by −⌊N/2⌋ = N − ⌊N/2⌋ */
      airy_roll_c2d (u, s, h, w, h - h / 2, w - w / 2);
      _airy_fft_c2c_execute (h, w, sign, threads, s, s);
      /* fftshift moves 0 to ⌊N/2⌋ */
      airy_roll_c2d (s, u, h, w, h / 2, w / 2);
    }
}

guint
_airy_fft_good_size (guint n)
{
  guint m;

  for (m = MAX (n, 1);; m++)
    {
      guint r = m;

      while (r % 2 == 0) r /= 2;
      while (r % 3 == 0) r /= 3;
      while (r % 5 == 0) r /= 5;
      while (r % 7 == 0) r /= 7;
      if (r == 1)
        return m;
    }
}

double
airy_bench_fft_floor (guint h,
                      guint w,
                      guint planes,
                      guint threads)
{
  gsize n = (gsize) h * w, i;
  fftwf_complex *buf = fftwf_alloc_complex (n);
  fftwf_plan plan = _airy_fft_plan_c2c (h, w, AIRY_FFT_FORWARD, threads);
  gint64 t0;
  guint p;

  for (i = 0; i < n; i++)
    buf[i] = (float) (i % 7) * 0.1f;
  fftwf_execute_dft (plan, buf, buf);
  t0 = g_get_monotonic_time ();
  for (p = 0; p < planes; p++)
    fftwf_execute_dft (plan, buf, buf);
  fftwf_free (buf);
  return (g_get_monotonic_time () - t0) / 1e6;
}

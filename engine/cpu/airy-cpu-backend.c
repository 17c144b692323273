#define G_LOG_DOMAIN "airy-cpu"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <string.h>

#include "airy-cpu-backend.h"
#include "airy-cpu-private.h"
#include "airy-error.h"
#include "airy-run.h"
#include "airy-fft-private.h"

/* The built-in backend: FFTW single precision with threads. AIRY_CPU_DEVICES=N
 * splits the machine into N virtual devices so that sharding and the
 * cross-device reduction run (and are tested) without GPUs.
 *
 * It runs the plan's program (airy-ops-private.h) and nothing else: each
 * thread produces one plane's intensity at a time, with its pruned FFTW
 * kernels for FUSED_PSF (airy-cpu-psf.c) or through the engine's reference
 * interpreter of the field ops, and consumes it by the intensity stage:
 * CONVOLVE (airy-cpu-conv.c), SUM, SENSOR, or the plane of the stack. */

typedef struct
{
  float         *intensity;  /* reduce: Σ_z I (psf geometry) */
  fftwf_complex *spectrum;   /* imaging: Σ_z V̂_z·P̂_z */
} Slot;

/* The sample's spectra V̂_z, kept across runs: when only the optics change
 * (the GUI editing an NA or a mask), re-imaging the same sample skips its
 * transforms. One entry, the last sample imaged; a z-varying sample is kept
 * only when all its planes fit in min(1 GiB, budget/4). */
typedef struct
{
  gint            ref;
  char           *key;
  guint           n;          /* 1 for a constant sample */
  fftwf_complex **planes;
  gboolean        complete;
} VolumeCache;

static GMutex       volume_cache_lock;
static VolumeCache *volume_cache;

static void
volume_cache_unref (VolumeCache *c)
{
  guint i;

  if (c == NULL || !g_atomic_int_dec_and_test (&c->ref))
    return;
  for (i = 0; i < c->n; i++)
    fftwf_free (c->planes[i]);
  g_free (c->planes);
  g_free (c->key);
  g_free (c);
}

/* The entry for this plan's sample: complete (use it), or new and to be
 * filled by this run (*fill), or NULL when it cannot be kept. */
static VolumeCache *
volume_cache_get (const AiryConvolveOp *cv, gboolean *fill)
{
  gsize nspec = (gsize) cv->pad_height * (cv->pad_width / 2 + 1);
  guint n = cv->kind == AIRY_SAMPLE_CONSTANT ? 1 : cv->n_planes, i;
  guint64 cap = MIN (G_GUINT64_CONSTANT (1) << 30, airy_memory_budget () / 4);
  g_autofree char *key = NULL;
  VolumeCache *c = NULL;

  *fill = FALSE;
  if (cv->key == NULL || g_getenv ("AIRY_NO_VOLUME_CACHE") != NULL)
    return NULL;
  key = g_strdup_printf ("%s | %u × %u in %u × %u", cv->key, cv->vol_height,
                         cv->vol_width, cv->pad_height, cv->pad_width);
  g_mutex_lock (&volume_cache_lock);
  if (volume_cache && volume_cache->complete && g_str_equal (volume_cache->key, key))
    {
      c = volume_cache;
      g_atomic_int_inc (&c->ref);
    }
  else if ((guint64) n * nspec * sizeof (fftwf_complex) <= cap)
    {
      c = g_new0 (VolumeCache, 1);
      c->ref = 2;                 /* the cache's and this run's */
      c->key = g_steal_pointer (&key);
      c->n = n;
      c->planes = g_new0 (fftwf_complex *, n);
      for (i = 0; i < n; i++)
        c->planes[i] = fftwf_alloc_complex (nspec);
      volume_cache_unref (volume_cache);
      volume_cache = c;
      *fill = TRUE;
    }
  g_mutex_unlock (&volume_cache_lock);
  return c;
}

typedef struct
{
  AiryStages   stages;       /* the shape of the plan's program */
  const AiryConvolveOp *conv; /* CONVOLVE's data, or NULL */
  Slot        *slots;
  VolumeCache *volume;       /* may be NULL */
  gboolean     volume_fill;  /* this run computes the entry */
  gboolean     psf_sum;      /* Σ_z I first: SUM, or CONVOLVE with a sample constant in z */
  AiryPsfShared *fused;      /* FUSED_PSF's shared part, made once per run (a
                              * run with a preview executes three chunks) */
} CpuRun;

/* Padded forward transforms of intensity planes (or of their sum) since
 * the start: the counter "convolutions" (airy_backend_get_counter). */
static guint convolutions;

/* A sample constant in z convolves every plane with the same V:
 * Σ_z (P_z ⊛ V) = (Σ_z P_z) ⊛ V, so the planes are summed first and one
 * transform of the sum replaces one per plane (on CUDA alike). */
static gboolean
sums_first (const AiryStages *stages)
{
  return stages->sum != NULL || (stages->convolve != NULL && stages->convolve->convolve->kind == AIRY_SAMPLE_CONSTANT);
}

/* a wrong value is reported by airy_run () */
static guint
cpu_device_count (void)
{
  guint n;

  if (!airy_cpu_devices_from_env (&n, NULL))
    n = 1;
  return n;
}

static gboolean
cpu_open (AiryBackend *backend, GError **error)
{
  return TRUE;
}

static guint
cpu_n_devices (AiryBackend *backend)
{
  return cpu_device_count ();
}

static void
cpu_device_info (AiryBackend *backend, guint device, AiryDeviceInfo *info)
{
  guint n = cpu_device_count ();
  guint threads = MAX (1, g_get_num_processors () / n);
  g_autofree char *meminfo = NULL;
  const char *p;

  info->name = n > 1 ? g_strdup_printf ("CPU (virtual device %u of %u)", device, n) : g_strdup ("CPU");
  info->threads = threads;
  info->detail = g_strdup_printf ("%u thread%s, FFTW %s", threads, threads == 1 ? "" : "s",
                                  fftwf_version);
  if (g_file_get_contents ("/proc/meminfo", &meminfo, NULL, NULL)
      && (p = strstr (meminfo, "MemTotal:")) != NULL)
    info->memory = g_ascii_strtoull (p + strlen ("MemTotal:"), NULL, 10) * 1024 / n;
}

static gboolean
cpu_prepare (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CpuRun *run = g_new0 (CpuRun, 1);
  guint i;

  state->backend_data = run;
  _airy_ops_stages (state->ops, &run->stages);
  if (!_airy_run_state_check_channels (state, &run->stages, "cpu", error))
    return FALSE;
  if (!_airy_run_state_alloc_outputs (state, error))
    return FALSE;
  run->psf_sum = sums_first (&run->stages);
  run->conv = run->stages.convolve ? run->stages.convolve->convolve : NULL;
  /* the fallback's planes come made (state->input): no field stage here */
  if (run->stages.fused && state->input == NULL)
    run->fused = _airy_psf_shared_new (run->stages.fused, plan->z, plan->n_planes);

  if (run->stages.convolve)
    {
      /* a process with a part of the planes would fill a part of a
       * z-varying entry: it keeps none */
      const AiryConvolveOp *cv = run->conv;

      if (state->part_count == plan->n_planes || cv->kind == AIRY_SAMPLE_CONSTANT)
        run->volume = volume_cache_get (cv, &run->volume_fill);
      if (run->volume && run->volume_fill && run->volume->n == 1)
        {
          /* a constant sample has one spectrum for every plane */
          g_autofree float *plane = g_new (float, (gsize) cv->vol_height * cv->vol_width);
          AiryConvWorker *conv = _airy_conv_worker_new (cv->vol_height, cv->vol_width,
                                                        cv->pad_height, cv->pad_width, 1);

          _airy_convolve_volume_plane (cv, 0, plane);
          _airy_conv_rows (conv, 0, plane);
          _airy_conv_columns (conv, NULL, 1, run->volume->planes[0], NULL, NULL, NULL);
          _airy_conv_worker_free (conv);
          run->volume->complete = TRUE;
          run->volume_fill = FALSE;
        }
    }
  run->slots = g_new0 (Slot, state->n_slots);
  for (i = 0; i < state->n_slots; i++)
    {
      if (run->psf_sum)
        run->slots[i].intensity = g_new0 (float, (gsize) plan->psf_height * plan->psf_width);
      else if (run->stages.convolve)
        {
          gsize n = (gsize) run->conv->pad_height * (run->conv->pad_width / 2 + 1);
          run->slots[i].spectrum = fftwf_alloc_complex (n);
          memset (run->slots[i].spectrum, 0, n * sizeof (fftwf_complex));
        }
    }
  return TRUE;
}

static void
cpu_release (AiryBackend *backend, AiryRunState *state)
{
  CpuRun *run = state->backend_data;
  guint i;

  if (run == NULL)
    return;
  volume_cache_unref (run->volume);
  _airy_psf_shared_free (run->fused);
  /* also after a failed prepare: slots may not exist yet */
  for (i = 0; run->slots && i < state->n_slots; i++)
    {
      fftwf_free (run->slots[i].spectrum);
      g_free (run->slots[i].intensity);
    }
  g_free (run->slots);
  g_free (run);
  state->backend_data = NULL;
}

static void
set_field_geometry (AiryField *field, AiryPlan *plan)
{
  guint l;

  if (field->height != plan->in_height || field->width != plan->in_width)
    airy_field_resize (field, plan->in_height, plan->in_width);
  for (l = 0; l < field->n_lambda; l++)
    {
      field->dy[l] = plan->in_dy[l];
      field->dx[l] = plan->in_dx[l];
    }
}

/* One host thread's share of a device chunk: planes [first, first + count).
 * Planes are independent, so a device's threads split its planes (each
 * transform single-threaded and in cache) rather than each transform. */
typedef struct
{
  AiryRunState        *state;
  const AiryStages    *stages;
  const AiryConvolveOp *conv;       /* CONVOLVE's data, or NULL */
  Slot                *slot;
  GMutex              *slot_lock;
  gboolean             psf_sum;     /* Σ_z I (CpuRun.psf_sum) */
  AiryPsfShared       *fused;       /* FUSED_PSF's shared part, or NULL: the field ops */
  VolumeCache         *volume;      /* the sample's spectra, or NULL */
  gboolean             volume_fill; /* … to be computed by this run */
  guint                first;
  guint                count;
  guint                threads;
  GError              *error;
} Job;

/* What a thread keeps from plane to plane. */
typedef struct
{
  AiryPsfWorker  *fused;      /* FUSED_PSF */
  AiryField      *field;      /* the field ops' field */
  float          *sum;        /* SUM: this thread's Σ_z I */
  fftwf_complex  *acc;        /* CONVOLVE: this thread's Σ_z V̂_z·P̂_z */
  AiryConvWorker *psf_conv;
  AiryConvWorker *vol_conv;   /* the sample's planes, when their spectra are not known */
  float          *vol_plane;
  AiryStack      *vol_batch;  /* a streamed sample: the batch of planes this thread holds */
  guint           pending;    /* planes in the convolution's batch */
  const fftwf_complex *mul[4];
  fftwf_complex  *store[4];
} Thread;

static void
thread_init (Job *job, Thread *t)
{
  AiryPlan *plan = job->state->plan;
  gsize npsf = (gsize) plan->psf_height * plan->psf_width;

  memset (t, 0, sizeof *t);
  if (job->fused)
    t->fused = _airy_psf_worker_new (job->fused);
  else if (job->state->input == NULL)
    t->field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 1.0);
  if (job->psf_sum)
    t->sum = g_new0 (float, npsf);
  else if (job->stages->convolve)
    {
      /* planes pass the second stage in batches (see _airy_conv_columns) */
      const AiryConvolveOp *cv = job->conv;
      gsize nspec = (gsize) cv->pad_height * (cv->pad_width / 2 + 1);
      gboolean known = job->volume && !job->volume_fill;
      guint batch = MAX (1, MIN (known ? 4 : 2, job->count));

      t->acc = fftwf_alloc_complex (nspec);
      memset (t->acc, 0, nspec * sizeof (fftwf_complex));
      t->psf_conv = _airy_conv_worker_new (cv->psf_height, cv->psf_width, cv->pad_height,
                                           cv->pad_width, batch);
      if (!known)
        {
          t->vol_plane = g_new (float, (gsize) cv->vol_height * cv->vol_width);
          t->vol_conv = _airy_conv_worker_new (cv->vol_height, cv->vol_width, cv->pad_height,
                                               cv->pad_width, batch);
        }
    }
}

static void
thread_clear (Thread *t)
{
  _airy_psf_worker_free (t->fused);
  g_clear_pointer (&t->field, airy_field_free);
  g_free (t->sum);
  fftwf_free (t->acc);
  _airy_conv_worker_free (t->psf_conv);
  _airy_conv_worker_free (t->vol_conv);
  g_free (t->vol_plane);
  g_clear_pointer (&t->vol_batch, airy_stack_free);
}

/* Produce: the intensity of plane b. */
static gboolean
produce_plane (Job *job, Thread *t, guint b, float *out, GError **error)
{
  AiryPlan *plan = job->state->plan;
  AiryPlane plane = { b, plan->z[b], job->threads };

  if (job->state->input)
    {
      /* the fallback: the plane another backend made */
      AiryStack *in = job->state->input;

      memcpy (out, airy_stack_plane (in, b - job->state->part_first), airy_stack_plane_size (in) * sizeof (float));
      return TRUE;
    }
  if (t->fused && job->state->n_channels > 0)
    {
      AiryRunState *state = job->state;
      g_autofree float **outs = g_new (float *, state->n_channels);
      gsize n = (gsize) plan->psf_height * plan->psf_width, k;
      guint l;

      /* one plane per wavelength, and their sum */
      for (l = 0; l < state->n_channels; l++)
        outs[l] = _airy_run_state_channel_plane (state, l, b);
      _airy_psf_worker_plane_split (t->fused, b, plan->z[b], outs);
      memcpy (out, outs[0], n * sizeof (float));
      for (l = 1; l < state->n_channels; l++)
        for (k = 0; k < n; k++)
          out[k] += outs[l][k];
      return TRUE;
    }
  if (t->fused)
    {
      _airy_psf_worker_plane (t->fused, b, plan->z[b], out);
      return TRUE;
    }
  set_field_geometry (t->field, plan);
  return _airy_ops_run_intensity (job->state->ops, t->field, &plane, out, error);
}

/* Consume: what the intensity stage makes of plane b; returns the planes
 * it finished (the convolution finishes a batch at a time). */
static guint
consume_plane (Job *job, Thread *t, guint b, float *in, gboolean last)
{
  AiryRunState *state = job->state;
  AiryPlan *plan = state->plan;
  const AiryStages *st = job->stages;
  gsize npsf = (gsize) plan->psf_height * plan->psf_width, k;

  if (state->psf)
    memcpy (_airy_run_state_psf_plane (state, b), in, npsf * sizeof (float));
  if (st->convolve && !job->psf_sum)
    {
      guint done;

      _airy_conv_rows (t->psf_conv, t->pending, in);
      if (t->vol_conv != NULL)
        {
          /* a streamed sample: this thread's batch of planes */
          if (job->conv->stream)
            _airy_volume_stream_plane (job->conv->stream, &t->vol_batch, b, t->vol_plane,
                                       job->error ? NULL : &job->error);
          else
            _airy_convolve_volume_plane (job->conv, b, t->vol_plane);
          _airy_conv_rows (t->vol_conv, t->pending, t->vol_plane);
        }
      if (job->volume)
        {
          fftwf_complex *v = job->volume->planes[job->volume->n == 1 ? 0 : b];
          t->mul[t->pending] = v;
          t->store[t->pending] = job->volume_fill ? v : NULL;
        }
      /* Σ_z V̂_z·P̂_z, a batch of planes at a time */
      if (++t->pending < _airy_conv_worker_batch (t->psf_conv) && !last)
        return 0;
      _airy_conv_columns (t->psf_conv, t->vol_conv, t->pending, NULL, t->acc, t->mul, t->store);
      g_atomic_int_add (&convolutions, (gint) t->pending);
      done = t->pending;
      t->pending = 0;
      return done;
    }
  if (job->psf_sum)
    for (k = 0; k < npsf; k++)
      t->sum[k] += in[k];
  else if (st->sensor)
    {
      g_autofree float *img = _airy_op_sensor_process (st->sensor, in, b);
      memcpy (_airy_run_state_out_plane (state, b), img, airy_stack_plane_size (state->out) * sizeof (float));
    }
  else if (in != _airy_run_state_out_plane (state, b))
    memcpy (_airy_run_state_out_plane (state, b), in, npsf * sizeof (float));
  return 1;
}

static gpointer
job_run (gpointer data)
{
  Job *job = data;
  AiryRunState *state = job->state;
  AiryPlan *plan = state->plan;
  const AiryStages *st = job->stages;
  gsize npsf = (gsize) plan->psf_height * plan->psf_width;
  gsize nspec = job->conv ? (gsize) job->conv->pad_height * (job->conv->pad_width / 2 + 1) : 0;
  /* write straight into the result when nothing else needs the plane */
  gboolean direct = !st->convolve && !st->sum && !st->sensor && state->psf == NULL;
  g_autofree float *intensity = g_new (float, npsf);
  gboolean ok = TRUE;
  Thread t;
  guint b, k;

  thread_init (job, &t);
  for (b = job->first; ok && b < job->first + job->count; b++)
    {
      float *target = direct ? _airy_run_state_out_plane (state, b) : intensity;
      guint done;

      if (g_cancellable_set_error_if_cancelled (state->cancellable, &job->error)
          || !produce_plane (job, &t, b, target, &job->error))
        {
          ok = FALSE;
          break;
        }
      done = consume_plane (job, &t, b, target, b + 1 == job->first + job->count);
      for (k = 0; k < done; k++)
        _airy_run_state_plane_done (state);
      if (job->error != NULL)   /* a streamed sample's read */
        {
          ok = FALSE;
          break;
        }
    }

  /* this thread's partial sum joins the device's */
  if (ok && (t.acc || t.sum))
    {
      gsize i;

      g_mutex_lock (job->slot_lock);
      if (t.acc)
        for (i = 0; i < nspec; i++)
          job->slot->spectrum[i] += t.acc[i];
      else
        for (i = 0; i < npsf; i++)
          job->slot->intensity[i] += t.sum[i];
      g_mutex_unlock (job->slot_lock);
    }
  thread_clear (&t);
  if (!ok)
    g_cancellable_cancel (state->cancellable);
  return NULL;
}

static gboolean
cpu_execute (AiryBackend *backend, AiryRunState *state, const AiryChunk *chunk, GError **error)
{
  CpuRun *run = state->backend_data;
  Slot *slot = &run->slots[chunk->slot];
  AiryPsfShared *fused = run->fused;
  guint jobs = MAX (1, MIN (chunk->threads, chunk->count)), i, first = chunk->first;
  g_autofree Job *job = g_new0 (Job, jobs);
  g_autofree GThread **threads = g_new0 (GThread *, jobs);
  GMutex slot_lock;
  gboolean ok = TRUE;

  g_mutex_init (&slot_lock);
  for (i = 0; i < jobs; i++)
    {
      guint count = chunk->count / jobs + (i < chunk->count % jobs);

      job[i] = (Job) { state, &run->stages, run->conv, slot, &slot_lock, run->psf_sum, fused, run->volume,
                       run->volume_fill && run->volume->n > 1, first, count,
                       MAX (1, chunk->threads / jobs), NULL };
      first += count;
      threads[i] = jobs == 1 ? NULL : g_thread_new ("airy-cpu", job_run, &job[i]);
    }
  if (jobs == 1)
    job_run (&job[0]);
  for (i = 0; i < jobs; i++)
    {
      if (threads[i])
        g_thread_join (threads[i]);
      if (job[i].error)
        {
          if (ok)
            g_propagate_error (error, job[i].error);
          else
            g_error_free (job[i].error);
          ok = FALSE;
        }
    }
  g_mutex_clear (&slot_lock);
  return ok;
}

/* The slot the image is made from: the first with planes (slot 0, all
 * zeros, on a process without planes). */
static Slot *
root_slot (AiryRunState *state)
{
  CpuRun *run = state->backend_data;
  g_autofree guint *active = g_new (guint, state->n_slots);

  return &run->slots[_airy_run_state_active_slots (state, active) > 0 ? active[0] : 0];
}

/* Virtual devices sum into the root (the first slot with planes), like an
 * all-reduce whose result is read there; slots without planes take no
 * part, as on GPUs. Then the root's sum meets the other processes' in one
 * all-reduce (airy-comm.h). */
static gboolean
cpu_all_reduce (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CpuRun *run = state->backend_data;
  g_autofree guint *active = g_new (guint, state->n_slots);
  guint n_active = _airy_run_state_active_slots (state, active), i;
  Slot *root = root_slot (state);

  for (i = 1; i < n_active; i++)
    {
      Slot *slot = &run->slots[active[i]];
      gsize k;

      if (root->spectrum)
        {
          gsize n = (gsize) run->conv->pad_height * (run->conv->pad_width / 2 + 1);
          for (k = 0; k < n; k++)
            root->spectrum[k] += slot->spectrum[k];
        }
      else
        {
          gsize n = (gsize) plan->psf_height * plan->psf_width;
          for (k = 0; k < n; k++)
            root->intensity[k] += slot->intensity[k];
        }
    }
  if (root->spectrum)
    return _airy_run_state_reduce_ranks (state, (float *) root->spectrum,
                                         2 * (gsize) run->conv->pad_height * (run->conv->pad_width / 2 + 1), error);
  return _airy_run_state_reduce_ranks (state, root->intensity, (gsize) plan->psf_height * plan->psf_width,
                                       error);
}

/* CONVOLVE's end: one inverse transform for the whole image, then the
 * "same" crop that keeps the PSF centre: out[p] = full[p + ⌊N_psf/2⌋]. */
static float *
convolve_image (AiryRunState *state, const fftwf_complex *acc_t)
{
  const AiryConvolveOp *cv = ((CpuRun *) state->backend_data)->conv;
  guint ph = cv->pad_height, pw = cv->pad_width, nh = pw / 2 + 1, k, c, y, x;
  guint cy = cv->psf_height / 2, cx = cv->psf_width / 2, h = cv->vol_height, w = cv->vol_width;
  float *full = fftwf_alloc_real ((gsize) ph * pw);
  fftwf_complex *spec = fftwf_alloc_complex ((gsize) ph * nh);
  float norm = 1.0f / ((float) ph * pw);
  float *image;

  /* the accumulator is kept transposed (nh × ph): back to ph × nh */
  for (k = 0; k < ph; k += 32)
    for (c = 0; c < nh; c++)
      {
        guint kk;
        for (kk = k; kk < MIN (k + 32, ph); kk++)
          spec[(gsize) kk * nh + c] = acc_t[(gsize) c * ph + kk];
      }
  fftwf_execute_dft_c2r (_airy_fft_plan_c2r (ph, pw, state->chunks[0].threads * state->n_slots), spec, full);
  fftwf_free (spec);
  image = g_new (float, (gsize) h * w);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      image[(gsize) y * w + x] = airy_conv_crop_at (full, pw, cy, cx, y, x, norm);
  fftwf_free (full);
  return image;
}

/* CONVOLVE of a sample constant in z: (Σ_z P_z)^ · V̂ (transposed, as the
 * per-plane accumulator), V̂ from the volume cache or transformed here. */
static fftwf_complex *
convolve_sum (AiryRunState *state, const float *sum)
{
  CpuRun *run = state->backend_data;
  const AiryConvolveOp *cv = run->conv;
  gsize nspec = (gsize) cv->pad_height * (cv->pad_width / 2 + 1);
  fftwf_complex *acc = fftwf_alloc_complex (nspec);
  AiryConvWorker *psf = _airy_conv_worker_new (cv->psf_height, cv->psf_width, cv->pad_height,
                                               cv->pad_width, 1);
  AiryConvWorker *vol = NULL;
  const fftwf_complex *v = NULL;
  g_autofree float *plane = NULL;

  memset (acc, 0, nspec * sizeof (fftwf_complex));
  _airy_conv_rows (psf, 0, sum);
  if (run->volume && run->volume->complete)
    v = run->volume->planes[0];
  else
    {
      plane = g_new (float, (gsize) cv->vol_height * cv->vol_width);
      vol = _airy_conv_worker_new (cv->vol_height, cv->vol_width, cv->pad_height, cv->pad_width, 1);
      _airy_convolve_volume_plane (cv, 0, plane);
      _airy_conv_rows (vol, 0, plane);
    }
  _airy_conv_columns (psf, vol, 1, NULL, acc, &v, NULL);
  g_atomic_int_inc (&convolutions);
  _airy_conv_worker_free (psf);
  _airy_conv_worker_free (vol);
  return acc;
}

static gboolean
cpu_finish (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CpuRun *run = state->backend_data;
  g_autofree float *image = NULL;
  Slot *root = root_slot (state);

  /* a streamed sample read by another path (the reference ops) that failed */
  if (run->conv && run->conv->stream && !_airy_volume_stream_check (run->conv->stream, error))
    return FALSE;
  /* every plane's V̂_z was stored: later runs may use them */
  if (run->volume && run->volume_fill)
    {
      g_mutex_lock (&volume_cache_lock);
      run->volume->complete = TRUE;
      g_mutex_unlock (&volume_cache_lock);
    }

  if (!run->stages.convolve && !run->stages.sum)
    {
      _airy_run_state_set_metadata (state);
      return TRUE;
    }

  /* the one image of a reduction, through the sensor when there is one */
  if (run->stages.convolve && root->spectrum == NULL)
    {
      fftwf_complex *acc = convolve_sum (state, root->intensity);

      image = convolve_image (state, acc);
      fftwf_free (acc);
    }
  else if (run->stages.convolve)
    image = convolve_image (state, root->spectrum);
  else
    image = g_memdup2 (root->intensity, (gsize) plan->psf_height * plan->psf_width * sizeof (float));
  state->out = airy_stack_new (1, state->out_height, state->out_width);
  if (run->stages.sensor)
    {
      g_autofree float *img = _airy_op_sensor_process (run->stages.sensor, image, 0);
      memcpy (state->out->data, img, airy_stack_plane_size (state->out) * sizeof (float));
    }
  else
    memcpy (state->out->data, image, airy_stack_plane_size (state->out) * sizeof (float));
  _airy_run_state_set_metadata (state);
  return TRUE;
}

static guint64
cpu_counter (AiryBackend *backend, const char *name)
{
  if (g_str_equal (name, "convolutions"))
    return (guint) g_atomic_int_get (&convolutions);
  return 0;
}

/* every op: the CPU is the fallback of the others */
static gboolean
cpu_supports_op (AiryBackend *backend, const AiryOp *op)
{
  return TRUE;
}

static const AiryBackendOps cpu_ops = {
  .name = "cpu",
  .description = N_("CPU (FFTW single precision, threads)"),
  .open = cpu_open,
  .n_devices = cpu_n_devices,
  .device_info = cpu_device_info,
  .prepare = cpu_prepare,
  .execute = cpu_execute,
  .all_reduce = cpu_all_reduce,
  .finish = cpu_finish,
  .release = cpu_release,
  .per_wavelength = TRUE,
  .supports_op = cpu_supports_op,
  .counter = cpu_counter,
  .gl_release = NULL,      /* slices reach GL through glTexSubImage2D: nothing registered */
};

const AiryBackendOps *
_airy_cpu_backend_ops (void)
{
  return &cpu_ops;
}

#define G_LOG_DOMAIN "airy-cpu"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <string.h>

#include "airy-cpu-backend.h"
#include "airy-error.h"
#include "airy-run.h"
#include "airy-fft-private.h"
#include "airy-plan-private.h"
#include "airy-sensor-private.h"
#include "airy-cpu-fast-private.h"

/* The built-in backend: FFTW single precision with threads. AIRY_CPU_DEVICES=N
 * splits the machine into N virtual devices so that sharding and the
 * cross-device reduction run (and are tested) without GPUs. */

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
volume_cache_get (AiryPlan *plan, gboolean *fill)
{
  gsize nspec = (gsize) plan->pad_height * (plan->pad_width / 2 + 1);
  guint n = plan->sample.kind == AIRY_SAMPLE_CONSTANT ? 1 : plan->n_planes, i;
  guint64 cap = MIN (G_GUINT64_CONSTANT (1) << 30, airy_memory_budget () / 4);
  g_autofree char *key = NULL;
  VolumeCache *c = NULL;

  *fill = FALSE;
  if (plan->volume_key == NULL || g_getenv ("AIRY_NO_VOLUME_CACHE") != NULL)
    return NULL;
  key = g_strdup_printf ("%s | %u × %u in %u × %u", plan->volume_key, plan->vol_height,
                         plan->vol_width, plan->pad_height, plan->pad_width);
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
  Slot        *slots;
  VolumeCache *volume;       /* may be NULL */
  gboolean     volume_fill;  /* this run computes the entry */
} CpuRun;

gboolean
airy_cpu_devices_from_env (guint   *n_devices,
                           GError **error)
{
  const char *env = g_getenv ("AIRY_CPU_DEVICES");
  guint64 n = 1;

  if (env != NULL && *env != '\0' && !g_ascii_string_to_unsigned (env, 10, 1, 64, &n, NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("AIRY_CPU_DEVICES: must be a whole number of virtual CPU devices in [1, 64], got \"%s\""),
                   env);
      return FALSE;
    }
  if (n_devices)
    *n_devices = (guint) n;
  return TRUE;
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
  if (!_airy_run_state_alloc_outputs (state, error))
    return FALSE;

  if (plan->imaging)
    {
      run->volume = volume_cache_get (plan, &run->volume_fill);
      if (run->volume && run->volume_fill && run->volume->n == 1)
        {
          /* a constant sample has one spectrum for every plane */
          g_autofree float *plane = g_new (float, (gsize) plan->vol_height * plan->vol_width);
          AiryConvWorker *conv = _airy_conv_worker_new (plan->vol_height, plan->vol_width,
                                                        plan->pad_height, plan->pad_width, 1);

          _airy_plan_volume_plane (plan, 0, plane);
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
      if (plan->imaging)
        {
          gsize n = (gsize) plan->pad_height * (plan->pad_width / 2 + 1);
          run->slots[i].spectrum = fftwf_alloc_complex (n);
          memset (run->slots[i].spectrum, 0, n * sizeof (fftwf_complex));
        }
      else if (plan->reduce)
        run->slots[i].intensity = g_new0 (float, (gsize) plan->psf_height * plan->psf_width);
    }
  return TRUE;
}

static void
cpu_release (AiryBackend *backend, AiryRunState *state)
{
  AiryPlan *plan = state->plan;
  CpuRun *run = state->backend_data;
  guint i;

  if (run == NULL)
    return;
  volume_cache_unref (run->volume);
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
  AiryPlan            *plan;
  Slot                *slot;
  GMutex              *slot_lock;
  AiryPsfShared       *fast;        /* NULL: the generic element chain */
  VolumeCache         *volume;      /* the sample's spectra, or NULL */
  gboolean             volume_fill; /* … to be computed by this run */
  guint                first;
  guint                count;
  guint                threads;
  GError              *error;
} Job;

/* The generic path: every element's apply() on a field, then |u|². */
typedef struct
{
  AiryField *field;
  gpointer  *states;
} Generic;

static void
generic_free (AiryPlan *plan, Generic *g)
{
  guint i;

  for (i = 0; g->states && i < plan->chain->len; i++)
    {
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (plan->chain, i));
      if (g->states[i] && klass->free_state)
        klass->free_state (g->states[i]);
    }
  g_free (g->states);
  airy_field_free (g->field);
}

static gboolean
generic_init (AiryPlan *plan, Generic *g, GError **error)
{
  guint i;

  g->field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 1.0);
  g->states = g_new0 (gpointer, plan->chain->len);
  for (i = 0; i < plan->chain->len; i++)
    {
      AiryElement *e = g_ptr_array_index (plan->chain, i);
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);
      g_autofree char *path = g_strdup_printf ("chain[%u]", i);
      AiryContext ctx = plan->contexts[i];

      ctx.path = path;
      if (klass->prepare && (g->states[i] = klass->prepare (e, &ctx, error)) == NULL)
        return FALSE;
    }
  return TRUE;
}

static gboolean
generic_plane (AiryPlan *plan, Generic *g, const AiryPlane *plane, float *out, GError **error)
{
  guint i;

  set_field_geometry (g->field, plan);
  for (i = 0; i < plan->chain->len; i++)
    {
      AiryElement *e = g_ptr_array_index (plan->chain, i);
      if (!AIRY_ELEMENT_GET_CLASS (e)->apply (e, g->states[i], g->field, plane, error))
        return FALSE;
    }
  airy_field_intensity (g->field, out, FALSE);
  return TRUE;
}

static gpointer
job_run (gpointer data)
{
  Job *job = data;
  AiryRunState *state = job->state;
  AiryPlan *plan = job->plan;
  gsize npsf = (gsize) plan->psf_height * plan->psf_width;
  gsize nspec = plan->imaging ? (gsize) plan->pad_height * (plan->pad_width / 2 + 1) : 0;
  AiryPsfWorker *fast = NULL;
  Generic generic = { NULL, NULL };
  g_autofree float *intensity = NULL;
  g_autofree float *sum = NULL;
  g_autofree float *vol_plane = NULL;
  AiryConvWorker *psf_conv = NULL, *vol_conv = NULL;
  fftwf_complex *acc = NULL;
  gboolean ok = TRUE;
  guint b, pending = 0;
  const fftwf_complex *mul[4] = { NULL };
  fftwf_complex *store[4] = { NULL };

  if (job->fast)
    fast = _airy_psf_worker_new (job->fast);
  else
    ok = generic_init (plan, &generic, &job->error);
  intensity = g_new (float, npsf);
  if (plan->imaging)
    {
      /* planes pass the second stage in batches (see _airy_conv_columns) */
      gboolean known = job->volume && !job->volume_fill;
      guint batch = MAX (1, MIN (known ? 4 : 2, job->count));

      acc = fftwf_alloc_complex (nspec);
      memset (acc, 0, nspec * sizeof (fftwf_complex));
      psf_conv = _airy_conv_worker_new (plan->psf_height, plan->psf_width, plan->pad_height,
                                        plan->pad_width, batch);
      if (!known)
        {
          vol_plane = g_new (float, (gsize) plan->vol_height * plan->vol_width);
          vol_conv = _airy_conv_worker_new (plan->vol_height, plan->vol_width, plan->pad_height,
                                            plan->pad_width, batch);
        }
    }
  else if (plan->reduce)
    sum = g_new0 (float, npsf);

  for (b = job->first; ok && b < job->first + job->count; b++)
    {
      AiryPlane plane = { b, plan->z[b], job->threads };
      /* write straight into the result when nothing else needs the plane */
      gboolean direct = !plan->reduce && plan->sensor == NULL && state->psf == NULL;
      float *target = direct ? airy_stack_plane (state->out, b) : intensity;

      if (g_cancellable_set_error_if_cancelled (state->cancellable, &job->error))
        {
          ok = FALSE;
          break;
        }
      if (fast)
        _airy_psf_worker_plane (fast, b, plan->z[b], target);
      else if (!generic_plane (plan, &generic, &plane, target, &job->error))
        {
          ok = FALSE;
          break;
        }
      if (state->psf)
        memcpy (airy_stack_plane (state->psf, b), target, npsf * sizeof (float));

      if (plan->imaging)
        {
          guint k;

          _airy_conv_rows (psf_conv, pending, target);
          if (vol_conv != NULL)
            {
              _airy_plan_volume_plane (plan, b, vol_plane);
              _airy_conv_rows (vol_conv, pending, vol_plane);
            }
          if (job->volume)
            {
              fftwf_complex *v = job->volume->planes[job->volume->n == 1 ? 0 : b];
              mul[pending] = v;
              store[pending] = job->volume_fill ? v : NULL;
            }
          /* Σ_z V̂_z·P̂_z, a batch of planes at a time */
          if (++pending == _airy_conv_worker_batch (psf_conv) || b + 1 == job->first + job->count)
            {
              _airy_conv_columns (psf_conv, vol_conv, pending, NULL, acc, mul, store);
              for (k = 0; k < pending; k++)
                _airy_run_state_plane_done (state);
              pending = 0;
            }
          continue;
        }
      else if (plan->reduce)
        {
          gsize k;
          for (k = 0; k < npsf; k++)
            sum[k] += target[k];
        }
      else if (plan->sensor)
        {
          g_autofree float *img = _airy_sensor_process (plan->sensor, target, plan->psf_height,
                                                        plan->psf_width, plan->psf_dy, plan->psf_dx, b);
          memcpy (airy_stack_plane (state->out, b), img, airy_stack_plane_size (state->out) * sizeof (float));
        }
      else if (!direct)
        memcpy (airy_stack_plane (state->out, b), target, npsf * sizeof (float));
      _airy_run_state_plane_done (state);
    }

  /* this thread's partial sum joins the device's */
  if (ok && (acc || sum))
    {
      gsize k;

      g_mutex_lock (job->slot_lock);
      if (acc)
        for (k = 0; k < nspec; k++)
          job->slot->spectrum[k] += acc[k];
      else
        for (k = 0; k < npsf; k++)
          job->slot->intensity[k] += sum[k];
      g_mutex_unlock (job->slot_lock);
    }
  if (fast)
    _airy_psf_worker_free (fast);
  else
    generic_free (plan, &generic);
  fftwf_free (acc);
  _airy_conv_worker_free (psf_conv);
  _airy_conv_worker_free (vol_conv);
  if (!ok)
    g_cancellable_cancel (state->cancellable);
  return NULL;
}

static gboolean
cpu_execute (AiryBackend *backend, AiryRunState *state, const AiryChunk *chunk, GError **error)
{
  AiryPlan *plan = state->plan;
  CpuRun *run = state->backend_data;
  Slot *slot = &run->slots[chunk->slot];
  AiryPsfShared *fast = NULL;
  guint jobs = MAX (1, MIN (chunk->threads, chunk->count)), i, first = chunk->first;
  g_autofree Job *job = g_new0 (Job, jobs);
  g_autofree GThread **threads = g_new0 (GThread *, jobs);
  GMutex slot_lock;
  gboolean ok = TRUE;

  if (_airy_psf_fast_supported (plan) && (fast = _airy_psf_shared_new (plan, error)) == NULL)
    return FALSE;
  g_mutex_init (&slot_lock);
  for (i = 0; i < jobs; i++)
    {
      guint count = chunk->count / jobs + (i < chunk->count % jobs);

      job[i] = (Job) { state, plan, slot, &slot_lock, fast, run->volume,
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
  _airy_psf_shared_free (fast);
  return ok;
}

/* Virtual devices sum into the root (the first slot with planes), like an
 * all-reduce whose result is read there; slots without planes take no
 * part, as on GPUs. */
static gboolean
cpu_all_reduce (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CpuRun *run = state->backend_data;
  g_autofree guint *active = g_new (guint, state->n_slots);
  guint n_active = _airy_run_state_active_slots (state, active), i;
  Slot *root = &run->slots[active[0]];

  for (i = 1; i < n_active; i++)
    {
      Slot *slot = &run->slots[active[i]];
      gsize k;

      if (plan->imaging)
        {
          gsize n = (gsize) plan->pad_height * (plan->pad_width / 2 + 1);
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
  return TRUE;
}

static gboolean
cpu_finish (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CpuRun *run = state->backend_data;
  g_autofree float *image = NULL;
  g_autofree guint *active = g_new (guint, state->n_slots);
  Slot *root = &run->slots[_airy_run_state_active_slots (state, active) > 0 ? active[0] : 0];
  guint h, w, y, x;
  double dy, dx;

  /* every plane's V̂_z was stored: later runs may use them */
  if (run->volume && run->volume_fill)
    {
      g_mutex_lock (&volume_cache_lock);
      run->volume->complete = TRUE;
      g_mutex_unlock (&volume_cache_lock);
    }

  if (!plan->reduce)
    {
      _airy_run_state_set_metadata (state);
      return TRUE;
    }

  if (plan->imaging)
    {
      /* One inverse transform for the whole image, then the "same" crop that
       * keeps the PSF centre: out[p] = full[p + ⌊N_psf/2⌋]. */
      guint ph = plan->pad_height, pw = plan->pad_width, nh = pw / 2 + 1, k, c;
      guint cy = plan->psf_height / 2, cx = plan->psf_width / 2;
      float *full = fftwf_alloc_real ((gsize) ph * pw);
      fftwf_complex *spec = fftwf_alloc_complex ((gsize) ph * nh);
      const fftwf_complex *acc_t = root->spectrum;
      float norm = 1.0f / ((float) ph * pw);

      /* the accumulator is kept transposed (nh × ph): back to ph × nh */
      for (k = 0; k < ph; k += 32)
        for (c = 0; c < nh; c++)
          {
            guint kk;
            for (kk = k; kk < MIN (k + 32, ph); kk++)
              spec[(gsize) kk * nh + c] = acc_t[(gsize) c * ph + kk];
          }
      fftwf_execute_dft_c2r (_airy_fft_plan_c2r (ph, pw, state->chunks[0].threads * state->n_slots),
                             spec, full);
      fftwf_free (spec);
      h = plan->vol_height;
      w = plan->vol_width;
      image = g_new (float, (gsize) h * w);
      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          image[(gsize) y * w + x] = full[(gsize) (y + cy) * pw + x + cx] * norm;
      fftwf_free (full);
      dy = dx = airy_system_get_spacing (plan->system);
    }
  else
    {
      h = plan->psf_height;
      w = plan->psf_width;
      image = g_memdup2 (root->intensity, (gsize) h * w * sizeof (float));
      dy = plan->psf_dy;
      dx = plan->psf_dx;
    }

  state->out = airy_stack_new (1, plan->out_height, plan->out_width);
  if (plan->sensor)
    {
      g_autofree float *img = _airy_sensor_process (plan->sensor, image, h, w, dy, dx, 0);
      memcpy (state->out->data, img, airy_stack_plane_size (state->out) * sizeof (float));
    }
  else
    memcpy (state->out->data, image, (gsize) h * w * sizeof (float));
  _airy_run_state_set_metadata (state);
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
  .gl_release = NULL,      /* slices reach GL through glTexSubImage2D: nothing registered */
};

/* ---- the viewer's slot: results in host memory ---- */

typedef struct
{
  float *mip;     /* the projection, made on first use */
} HostResident;

static const float *
host_mip (AiryResident *r)
{
  HostResident *h = r->priv;

  if (h->mip == NULL)
    {
      h->mip = g_new (float, airy_stack_plane_size (r->stack));
      airy_stack_mip (r->stack, h->mip);
    }
  return h->mip;
}

static gboolean
host_read_slice (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  const AiryStack *s = r->stack;

  switch (slice->kind)
    {
    case AIRY_SLICE_XY:
      memcpy (out, airy_stack_plane (s, slice->index), airy_stack_plane_size (s) * sizeof (float));
      break;
    case AIRY_SLICE_XZ:
      airy_stack_section_xz (s, slice->index, out);
      break;
    case AIRY_SLICE_YZ:
      airy_stack_section_yz (s, slice->index, out);
      break;
    case AIRY_SLICE_MIP:
      memcpy (out, host_mip (r), airy_stack_plane_size (s) * sizeof (float));
      break;
    default:
      g_assert_not_reached ();
    }
  return TRUE;
}

static gboolean
host_read_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  const AiryStack *s = r->stack;
  guint z, y;

  for (z = 0; z < box->depth; z++)
    for (y = 0; y < box->height; y++)
      memcpy (out + ((gsize) z * box->height + y) * box->width,
              airy_stack_plane (s, box->z + z) + (gsize) (box->y + y) * s->width + box->x,
              box->width * sizeof (float));
  return TRUE;
}

static gboolean
host_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  const AiryStack *s = r->stack;
  g_autofree float *section = NULL;
  guint w, h;

  switch (slice->kind)
    {
    case AIRY_SLICE_XY:
      airy_values_stats (airy_stack_plane (s, slice->index), airy_stack_plane_size (s), stats);
      return TRUE;
    case AIRY_SLICE_MIP:
      airy_values_stats (host_mip (r), airy_stack_plane_size (s), stats);
      return TRUE;
    case AIRY_SLICE_STACK:
      airy_values_stats (s->data, (gsize) s->depth * airy_stack_plane_size (s), stats);
      return TRUE;
    default:
      airy_slice_size (s, slice, &w, &h);
      section = g_new (float, (gsize) w * h);
      host_read_slice (r, slice, section, error);
      airy_values_stats (section, (gsize) w * h, stats);
      return TRUE;
    }
}

/* An XY plane goes to GL straight from the stack; sections are cut first. */
static gboolean
host_to_texture (AiryResident *r, const AirySlice *slice, AiryTexture *texture, GError **error)
{
  const AiryStack *s = r->stack;
  g_autofree float *section = NULL;
  guint w, h;

  airy_slice_size (s, slice, &w, &h);
  if (slice->kind == AIRY_SLICE_XY)
    texture->upload (airy_stack_plane (s, slice->index), w, h, texture->user_data);
  else if (slice->kind == AIRY_SLICE_MIP)
    texture->upload (host_mip (r), w, h, texture->user_data);
  else
    {
      section = g_new (float, (gsize) w * h);
      host_read_slice (r, slice, section, error);
      texture->upload (section, w, h, texture->user_data);
    }
  return TRUE;
}

static void
host_free (AiryResident *r)
{
  HostResident *h = r->priv;

  g_free (h->mip);
  g_free (h);
}

static const AiryResidentOps host_resident_ops = {
  .read_slice = host_read_slice,
  .read_box = host_read_box,
  .stats = host_stats,
  .to_texture = host_to_texture,
  .free = host_free,
};

AiryResident *
airy_resident_new_host (AiryStack *stack)
{
  g_return_val_if_fail (stack != NULL && stack->data != NULL, NULL);

  return airy_resident_new (airy_backend_lookup ("cpu"), &host_resident_ops, stack, g_new0 (HostResident, 1));
}

const AiryBackendOps *
_airy_cpu_backend_ops (void)
{
  return &cpu_ops;
}

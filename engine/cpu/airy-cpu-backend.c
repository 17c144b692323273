#define G_LOG_DOMAIN "airy-cpu"

#include "config.h"

#include <string.h>

#include "airy-cpu-backend.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-plan-private.h"
#include "airy-sensor-private.h"

/* The built-in backend: FFTW single precision with threads. AIRY_CPU_DEVICES=N
 * splits the machine into N virtual devices so that sharding and the
 * cross-device reduction run (and are tested) without GPUs. */

typedef struct
{
  float         *intensity;  /* reduce: Σ_z I (psf geometry) */
  fftwf_complex *spectrum;   /* imaging: Σ_z V̂_z·P̂_z */
} Slot;

typedef struct
{
  Slot *slots;
} CpuRun;

static guint
cpu_device_count (void)
{
  const char *env = g_getenv ("AIRY_CPU_DEVICES");
  guint64 n = env ? g_ascii_strtoull (env, NULL, 10) : 1;

  return (guint) CLAMP (n, 1, 64);
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
cpu_prepare (AiryBackend *backend, AiryPlan *plan, GError **error)
{
  CpuRun *run = g_new0 (CpuRun, 1);
  guint i;

  plan->backend_data = run;
  if (!plan->reduce)
    {
      plan->out = airy_stack_new (plan->out_depth, plan->out_height, plan->out_width);
      if (plan->out == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET, "not enough memory for the output stack");
          return FALSE;
        }
    }
  if (plan->keep_psf)
    plan->psf = airy_stack_new (plan->n_planes, plan->psf_height, plan->psf_width);

  run->slots = g_new0 (Slot, plan->n_slots);
  for (i = 0; i < plan->n_slots; i++)
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
cpu_release (AiryBackend *backend, AiryPlan *plan)
{
  CpuRun *run = plan->backend_data;
  guint i;

  if (run == NULL)
    return;
  for (i = 0; i < plan->n_slots; i++)
    {
      fftwf_free (run->slots[i].spectrum);
      g_free (run->slots[i].intensity);
    }
  g_free (run->slots);
  g_free (run);
  plan->backend_data = NULL;
}

/* Zero-pads an h × w real plane into the top-left of pad (ph × pw) and
 * transforms it: out = R2C(pad). */
static void
padded_r2c (const float *in, guint h, guint w, float *pad, guint ph, guint pw,
            fftwf_complex *out, guint threads)
{
  guint y;

  memset (pad, 0, (gsize) ph * pw * sizeof (float));
  for (y = 0; y < h; y++)
    memcpy (pad + (gsize) y * pw, in + (gsize) y * w, w * sizeof (float));
  fftwf_execute_dft_r2c (_airy_fft_plan_r2c (ph, pw, threads), pad, out);
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

static gboolean
cpu_execute (AiryBackend *backend, AiryPlan *plan, const AiryChunk *chunk, GError **error)
{
  CpuRun *run = plan->backend_data;
  Slot *slot = &run->slots[chunk->slot];
  g_autoptr(AiryField) field = NULL;
  g_autofree gpointer *states = NULL;
  g_autofree float *intensity = NULL;
  g_autofree float *vol_plane = NULL;
  float *pad = NULL;
  fftwf_complex *psf_hat = NULL, *vol_hat = NULL;
  gsize nspec = 0, npsf = (gsize) plan->psf_height * plan->psf_width;
  gboolean ok = TRUE, vol_hat_valid = FALSE;
  guint i, b;

  field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 1.0);
  states = g_new0 (gpointer, plan->chain->len);
  for (i = 0; i < plan->chain->len && ok; i++)
    {
      AiryElement *e = g_ptr_array_index (plan->chain, i);
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);
      g_autofree char *path = g_strdup_printf ("chain[%u]", i);

      if (klass->prepare)
        {
          plan->contexts[i].path = path;
          states[i] = klass->prepare (e, &plan->contexts[i], error);
          plan->contexts[i].path = NULL;
          ok = states[i] != NULL;
        }
    }
  intensity = g_new (float, npsf);
  if (plan->imaging && ok)
    {
      nspec = (gsize) plan->pad_height * (plan->pad_width / 2 + 1);
      pad = fftwf_alloc_real ((gsize) plan->pad_height * plan->pad_width);
      psf_hat = fftwf_alloc_complex (nspec);
      vol_hat = fftwf_alloc_complex (nspec);
      vol_plane = g_new (float, (gsize) plan->vol_height * plan->vol_width);
    }

  for (b = chunk->first; ok && b < chunk->first + chunk->count; b++)
    {
      AiryPlane plane = { b, plan->z[b], chunk->threads };

      if (g_cancellable_set_error_if_cancelled (plan->cancellable, error))
        {
          ok = FALSE;
          break;
        }
      set_field_geometry (field, plan);
      for (i = 0; i < plan->chain->len && ok; i++)
        {
          AiryElement *e = g_ptr_array_index (plan->chain, i);
          ok = AIRY_ELEMENT_GET_CLASS (e)->apply (e, states[i], field, &plane, error);
        }
      if (!ok)
        break;
      airy_field_intensity (field, intensity, FALSE);
      if (plan->psf)
        memcpy (airy_stack_plane (plan->psf, b), intensity, npsf * sizeof (float));

      if (plan->imaging)
        {
          gsize k;

          /* A constant sample has the same transform on every plane. */
          if (!(vol_hat_valid && plan->sample.kind == AIRY_SAMPLE_CONSTANT))
            {
              _airy_plan_volume_plane (plan, b, vol_plane);
              padded_r2c (vol_plane, plan->vol_height, plan->vol_width, pad, plan->pad_height,
                          plan->pad_width, vol_hat, chunk->threads);
              vol_hat_valid = TRUE;
            }
          padded_r2c (intensity, plan->psf_height, plan->psf_width, pad, plan->pad_height,
                      plan->pad_width, psf_hat, chunk->threads);
          for (k = 0; k < nspec; k++)
            slot->spectrum[k] += psf_hat[k] * vol_hat[k];
        }
      else if (plan->reduce)
        {
          gsize k;
          for (k = 0; k < npsf; k++)
            slot->intensity[k] += intensity[k];
        }
      else if (plan->sensor)
        {
          g_autofree float *img = _airy_sensor_process (plan->sensor, intensity, plan->psf_height,
                                                        plan->psf_width, plan->psf_dy, plan->psf_dx, b);
          memcpy (airy_stack_plane (plan->out, b), img, airy_stack_plane_size (plan->out) * sizeof (float));
        }
      else
        memcpy (airy_stack_plane (plan->out, b), intensity, npsf * sizeof (float));
      _airy_plan_plane_done (plan);
    }

  for (i = 0; i < plan->chain->len; i++)
    {
      AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (plan->chain, i));
      if (states[i] && klass->free_state)
        klass->free_state (states[i]);
    }
  fftwf_free (pad);
  fftwf_free (psf_hat);
  fftwf_free (vol_hat);
  return ok;
}

/* Virtual devices sum into slot 0, like an all-reduce whose result is read
 * from the first device. */
static gboolean
cpu_all_reduce (AiryBackend *backend, AiryPlan *plan, GError **error)
{
  CpuRun *run = plan->backend_data;
  guint i;

  for (i = 1; i < plan->n_slots; i++)
    {
      gsize k;

      if (plan->imaging)
        {
          gsize n = (gsize) plan->pad_height * (plan->pad_width / 2 + 1);
          for (k = 0; k < n; k++)
            run->slots[0].spectrum[k] += run->slots[i].spectrum[k];
        }
      else
        {
          gsize n = (gsize) plan->psf_height * plan->psf_width;
          for (k = 0; k < n; k++)
            run->slots[0].intensity[k] += run->slots[i].intensity[k];
        }
    }
  return TRUE;
}

static gboolean
cpu_finish (AiryBackend *backend, AiryPlan *plan, GError **error)
{
  CpuRun *run = plan->backend_data;
  g_autofree float *image = NULL;
  guint h, w, y, x;
  double dy, dx;

  if (!plan->reduce)
    {
      plan->out->dy = plan->out_dy;
      plan->out->dx = plan->out_dx;
      plan->out->dz = plan->n_planes > 1 ? (plan->z[plan->n_planes - 1] - plan->z[0]) / (plan->n_planes - 1) : 0.0;
      plan->out->z0 = plan->z[0];
      return TRUE;
    }

  if (plan->imaging)
    {
      /* One inverse transform for the whole image, then the "same" crop that
       * keeps the PSF centre: out[p] = full[p + ⌊N_psf/2⌋]. */
      guint ph = plan->pad_height, pw = plan->pad_width;
      guint cy = plan->psf_height / 2, cx = plan->psf_width / 2;
      float *full = fftwf_alloc_real ((gsize) ph * pw);
      float norm = 1.0f / ((float) ph * pw);

      fftwf_execute_dft_c2r (_airy_fft_plan_c2r (ph, pw, plan->chunks[0].threads * plan->n_slots),
                             run->slots[0].spectrum, full);
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
      image = g_memdup2 (run->slots[0].intensity, (gsize) h * w * sizeof (float));
      dy = plan->psf_dy;
      dx = plan->psf_dx;
    }

  plan->out = airy_stack_new (1, plan->out_height, plan->out_width);
  if (plan->sensor)
    {
      g_autofree float *img = _airy_sensor_process (plan->sensor, image, h, w, dy, dx, 0);
      memcpy (plan->out->data, img, airy_stack_plane_size (plan->out) * sizeof (float));
    }
  else
    memcpy (plan->out->data, image, (gsize) h * w * sizeof (float));
  plan->out->dy = plan->out_dy;
  plan->out->dx = plan->out_dx;
  if (plan->psf)
    {
      plan->psf->dy = plan->psf_dy;
      plan->psf->dx = plan->psf_dx;
      plan->psf->dz = plan->n_planes > 1 ? (plan->z[plan->n_planes - 1] - plan->z[0]) / (plan->n_planes - 1) : 0.0;
      plan->psf->z0 = plan->z[0];
    }
  return TRUE;
}

static const AiryBackendOps cpu_ops = {
  .name = "cpu",
  .description = "CPU (FFTW single precision, threads)",
  .open = cpu_open,
  .n_devices = cpu_n_devices,
  .device_info = cpu_device_info,
  .prepare = cpu_prepare,
  .execute = cpu_execute,
  .all_reduce = cpu_all_reduce,
  .finish = cpu_finish,
  .release = cpu_release,
  .gl_copy_slice = NULL,   /* slices reach GL through glTexSubImage2D */
};

const AiryBackendOps *
_airy_cpu_backend_ops (void)
{
  return &cpu_ops;
}

#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <gmodule.h>
#include <string.h>

#include "airy-cuda-backend-private.h"

/* The CUDA backend module (DESIGN §4). It links the CUDA runtime, cuFFT and
 * NCCL but never libcuda, so it loads on machines without an NVIDIA driver
 * and then reports "no CUDA device: …".
 *
 * A run executes the plan's program (airy-ops-private.h) on each device's
 * chunk of planes, in batches (the slot's buffers and plans:
 * airy-cuda-slot.c, kept from the last run): a batch of intensity planes is
 * produced — by FUSED_PSF (airy-cuda-psf.c: the op's pupil rows copied once
 * per device, u = F·e^{i z G} generated on the band for every entry of
 * every plane, the pruned transform as two batched cuFFT calls, |u|²
 * summed in one pass) or by the field ops one plane at a time
 * (airy-cuda-ops.c) — and then consumed by the intensity stage: kept as
 * the device's share of the stack, summed (SUM), or for a microscope
 * padded, transformed real-to-complex and multiplied with the sample's
 * spectrum (CONVOLVE, airy-cuda-imaging.c), summed on the device and then
 * across devices with one NCCL all-reduce (airy-cuda-nccl.c); one inverse
 * transform on the root makes the image, and SENSOR its recorded form.
 *
 * A stack for the host is downloaded while the next batch computes (pinned
 * staging buffers on a copy stream); a result for the viewer stays on the
 * devices (AiryResident, airy-cuda-interop.c) and its slices go to GL
 * device to device. */

static gboolean
alloc_outputs (AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;

  if (!state->want_resident)
    return _airy_run_state_alloc_outputs (state, error);
  /* the sum stays on the devices; each wavelength's stack comes home */
  state->out = _airy_cuda_geometry_new (_airy_cuda_run_reduces (run) ? 1 : plan->out_depth, state->out_height,
                                        state->out_width);
  if (state->keep_psf)
    state->psf = airy_stack_new (plan->n_planes, plan->psf_height, plan->psf_width);
  return _airy_run_state_alloc_channels (state, error);
}

static gboolean
cuda_prepare (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run;
  guint i;

  run = g_new0 (CudaRun, 1);
  run->backend = backend->priv;
  state->backend_data = run;
  _airy_ops_stages (state->ops, &run->stages);
  run->slots = g_new0 (Slot, state->n_slots);
  run->active = g_new0 (guint, state->n_slots);
  run->n_active = _airy_run_state_active_slots (state, run->active);
  for (i = 0; i < state->n_slots; i++)
    {
      /* a slot without planes has no stream, no buffers and takes no part
       * in the reduction */
      run->slots[i].backend = run->backend;
      run->slots[i].device = (int) state->chunks[i].device;
      run->slots[i].active = state->chunks[i].count > 0;
      /* the fused PSF's batch entries: wavelengths × vectorial components */
      run->slots[i].n_lambda = run->stages.fused ? run->stages.fused->n_lambda : plan->spectrum->n;
    }
  run->slots[run->active[0]].root = TRUE;
  /* across ranks every rank's devices join the NCCL reduction: a rank
   * needs a device with planes (found here, before the ranks agree) */
  if (_airy_cuda_run_reduces (run) && state->comm->size > 1 && run->n_active == 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("cuda backend: rank %u has no planes to reduce; run on at most as many ranks as planes"),
                   state->comm->rank);
      return FALSE;
    }
  /* FUSED_PSF with the device copies of the last run of the same optics,
   * or the field ops */
  if (run->stages.fused)
    {
      run->pupil = _airy_cuda_pupil_get (run->backend, run->stages.fused);
      run->z0 = run->stages.fused->psf->z0;
    }
  else if (!_airy_cuda_ops_check (state->ops, run, error))
    return FALSE;
  if (!_airy_run_state_check_channels (state, &run->stages, "cuda", error))
    return FALSE;
  /* Σ_z I first: SUM, or a sample constant in z, whose image is
   * (Σ_z P_z) ⊛ V: one convolution instead of one per plane */
  run->conv = run->stages.convolve ? run->stages.convolve->convolve : NULL;
  run->sum_first = run->stages.sum != NULL || (run->conv != NULL && run->conv->kind == AIRY_SAMPLE_CONSTANT);
  return alloc_outputs (state, error);
}

/* Produce: the intensity of planes [b0, b0 + nb) into out[b][y][x]. */
static gboolean
produce_batch (AiryRunState *state, Slot *s, const AiryChunk *chunk, guint b0, guint nb, float *out, GError **error)
{
  CudaRun *run = state->backend_data;
  const double *z = s->zbuf + (b0 - chunk->first);

  if (run->pupil)
    return _airy_cuda_psf_produce (state, s, nb, z, out, error);
  return _airy_cuda_ops_produce (state, s, b0, nb, z, out, error);
}

/* Consume: the intensity stage of the batch in `in` (the kept PSF, then
 * CONVOLVE, SUM, SENSOR, or this device's planes of the stack). */
static gboolean
consume_batch (AiryRunState *state, Slot *s, const AiryChunk *chunk, guint b0, guint nb, float *in, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  gsize no = (gsize) state->out_height * state->out_width;
  guint k;

  /* the kept PSF and each wavelength's planes: their buffers are reused by
   * the next batch, so the compute stream waits for these copies */
  if (state->psf || state->n_channels > 0)
    {
      cudaEvent_t ready = s->dl.ready[0];

      if (!CHECK (cudaEventRecord (ready, s->stream), error)
          || (state->psf
              && !_airy_cuda_dl_push (s, ready, in, _airy_run_state_psf_plane (state, b0), nb * n * sizeof (float),
                                      TRUE, error)))
        return FALSE;
      for (k = 0; k < state->n_channels; k++)
        if (!_airy_cuda_dl_push (s, ready, s->chan + (gsize) k * nb * n, _airy_run_state_channel_plane (state, k, b0),
                                 nb * n * sizeof (float), TRUE, error))
          return FALSE;
    }
  if (run->sum_first)
    return CHECK (airy_cuda_launch_sum_planes (in, nb, n, s->img, s->stream), error);
  if (run->stages.convolve)
    return _airy_cuda_imaging_consume (state, s, b0, nb, in, error);
  if (run->stages.sensor)
    {
      for (k = 0; k < nb; k++)
        if (!_airy_cuda_sensor_plane (state, s, in + k * n, s->out + (gsize) (b0 - chunk->first + k) * no, b0 + k,
                                      error))
          return FALSE;
      return TRUE;
    }
  return in == s->out + (gsize) (b0 - chunk->first) * n
         || CHECK (cudaMemcpyAsync (s->out + (gsize) (b0 - chunk->first) * n, in, nb * n * sizeof (float),
                                    cudaMemcpyDeviceToDevice, s->stream), error);
}

/* Planes [b0, b0 + nb) of this device's chunk, enqueued on its stream;
 * written straight into the device's planes when nothing else needs them. */
static gboolean
execute_batch (AiryRunState *state, Slot *s, const AiryChunk *chunk, guint b0, guint nb, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  gboolean direct = !_airy_cuda_run_reduces (run) && run->stages.sensor == NULL && state->psf == NULL;
  float *target = direct ? s->out + (gsize) (b0 - chunk->first) * n : s->inten;

  return produce_batch (state, s, chunk, b0, nb, target, error)
         && consume_batch (state, s, chunk, b0, nb, target, error);
}

/* A device's chunk in batches. The host stack (when wanted) is downloaded
 * one batch behind: while the device computes batch k, the copy stream
 * brings batch k − 1 home through pinned memory. */
static gboolean
cuda_execute (AiryBackend *backend, AiryRunState *state, const AiryChunk *chunk, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  Slot *s = &run->slots[chunk->slot];
  gsize nout = (gsize) state->out_height * state->out_width;
  g_autofree double *zhost = g_new (double, chunk->count);
  cudaEvent_t done[2] = { NULL, NULL };
  guint b0, k, i = 0, prev_b0 = 0, prev_nb = 0;
  gboolean ok = FALSE;

  /* an earlier failure on this thread must not surface in this run */
  cudaGetLastError ();
  s->host_out = !_airy_cuda_run_reduces (run) && !state->want_resident;
  s->transfers = s->host_out || state->psf != NULL || state->n_channels > 0
                 || (run->conv && run->conv->volume != NULL);
  if (!CHECK (cudaSetDevice (s->device), error)
      || !CHECK (cudaStreamCreateWithFlags (&s->stream, cudaStreamNonBlocking), error)
      || !_airy_cuda_slot_alloc (state, s, chunk, error)
      || !CHECK (cudaEventCreateWithFlags (&done[0], cudaEventDisableTiming), error)
      || !CHECK (cudaEventCreateWithFlags (&done[1], cudaEventDisableTiming), error))
    goto out;

  /* every plane's z, once (pageable, but before any work on the stream) */
  for (k = 0; k < chunk->count; k++)
    zhost[k] = plan->z[chunk->first + k] + run->z0;
  if (!CHECK (cudaMemcpyAsync (s->zbuf, zhost, chunk->count * sizeof (double), cudaMemcpyHostToDevice, s->stream),
              error))
    goto out;
  if (run->stages.convolve && !_airy_cuda_imaging_start (state, s, error))
    goto out;

  for (b0 = chunk->first; ; b0 += s->batch, i++)
    {
      guint nb = b0 < chunk->first + chunk->count ? MIN (s->batch, chunk->first + chunk->count - b0) : 0;

      if (nb > 0
          && (g_cancellable_set_error_if_cancelled (state->cancellable, error)
              || !execute_batch (state, s, chunk, b0, nb, error)
              || !CHECK (cudaEventRecord (done[i % 2], s->stream), error)))
        goto out;
      /* the previous batch: home while this one computes, then counted */
      if (prev_nb > 0)
        {
          cudaEvent_t prev = done[(i + 1) % 2];

          if ((s->host_out
               && !_airy_cuda_dl_push (s, prev, s->out + (gsize) (prev_b0 - chunk->first) * nout,
                                       _airy_run_state_out_plane (state, prev_b0), prev_nb * nout * sizeof (float), FALSE,
                                       error))
              || !CHECK (cudaEventSynchronize (prev), error)
              || (s->transfers && !_airy_cuda_dl_poll (&s->dl, error)))
            goto out;
          for (k = 0; k < prev_nb; k++)
            _airy_run_state_plane_done (state);
        }
      if (nb == 0)
        break;
      prev_b0 = b0;
      prev_nb = nb;
    }
  ok = !s->transfers || _airy_cuda_dl_finish (&s->dl, error);

out:
  if (done[0])
    cudaEventDestroy (done[0]);
  if (done[1])
    cudaEventDestroy (done[1]);
  return ok;
}

static void
keep_resident (AiryBackend *backend, AiryRunState *state, GPtrArray *parts)
{
  state->resident = _airy_cuda_resident_new (backend, g_steal_pointer (&state->out), parts);
}

static gboolean
cuda_finish (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  Slot *s0 = &run->slots[run->active[0]];
  gsize no = (gsize) state->out_height * state->out_width;
  guint h = run->conv ? run->conv->vol_height : plan->psf_height;
  guint w = run->conv ? run->conv->vol_width : plan->psf_width;
  float *image = NULL, *shown = NULL;
  guint i;

  if (!_airy_cuda_run_reduces (run))
    {
      /* downloaded while computing; or kept on the devices for the viewer */
      _airy_run_state_set_metadata (state);
      if (state->want_resident)
        {
          GPtrArray *parts = g_ptr_array_new_with_free_func (g_free);

          for (i = 0; i < run->n_active; i++)
            {
              Slot *s = &run->slots[run->active[i]];
              ResultPart *part = g_new0 (ResultPart, 1);

              *part = (ResultPart) { s->device, g_steal_pointer (&s->out), state->chunks[run->active[i]].first,
                                     state->chunks[run->active[i]].count };
              g_ptr_array_add (parts, part);
            }
          keep_resident (backend, state, parts);
        }
      return TRUE;
    }

  /* one image, made on the root */
  if (!CHECK (cudaSetDevice (s0->device), error)
      || !CHECK (cudaMalloc ((void **) &image, (gsize) h * w * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &shown, no * sizeof (float)), error))
    goto fail;
  if (run->stages.convolve)
    {
      if (!_airy_cuda_imaging_image (state, s0, image, error))
        goto fail;
    }
  else if (!CHECK (cudaMemcpyAsync (image, s0->img, (gsize) h * w * sizeof (float), cudaMemcpyDeviceToDevice, s0->stream), error))
    goto fail;
  if (run->stages.sensor)
    {
      if (!_airy_cuda_sensor_plane (state, s0, image, shown, 0, error))
        goto fail;
    }
  else if (!CHECK (cudaMemcpyAsync (shown, image, no * sizeof (float), cudaMemcpyDeviceToDevice, s0->stream), error))
    goto fail;
  if (!state->want_resident)
    state->out = airy_stack_new (1, state->out_height, state->out_width);
  if ((!state->want_resident
       && !CHECK (cudaMemcpyAsync (state->out->data, shown, no * sizeof (float), cudaMemcpyDeviceToHost, s0->stream), error))
      || !CHECK (cudaStreamSynchronize (s0->stream), error))
    goto fail;
  cudaFree (image);
  _airy_run_state_set_metadata (state);
  if (state->want_resident)
    {
      GPtrArray *parts = g_ptr_array_new_with_free_func (g_free);
      ResultPart *part = g_new0 (ResultPart, 1);

      *part = (ResultPart) { s0->device, shown, 0, 1 };
      g_ptr_array_add (parts, part);
      keep_resident (backend, state, parts);
    }
  else
    cudaFree (shown);
  return TRUE;

fail:
  cudaFree (image);
  cudaFree (shown);
  return FALSE;
}

/* After every prepare, also a failed one: the slots' buffers and plans, the
 * pupil reference. */
static void
cuda_release (AiryBackend *backend, AiryRunState *state)
{
  CudaRun *run = state->backend_data;
  guint i;

  if (run == NULL)
    return;
  for (i = 0; run->slots && i < state->n_slots; i++)
    if (run->slots[i].stream || run->slots[i].taken)
      _airy_cuda_slot_free (&run->slots[i]);
  _airy_cuda_pupil_unref (run->pupil);
  g_free (run->slots);
  g_free (run->active);
  g_free (run);
  state->backend_data = NULL;
}

/* Every op but APPLY (an element type with neither compile() nor a
 * pixelwise apply() has no device form: the engine gives such a system to
 * the CPU backend). JONES runs as a kernel (airy-cuda-ops.c). */
static gboolean
cuda_supports_op (AiryBackend *backend, const AiryOp *op)
{
  /* a sample streamed from its file is convolved on the CPU, batch by batch */
  return op->kind != AIRY_OP_APPLY
         && !(op->kind == AIRY_OP_CONVOLVE && op->convolve->stream != NULL);
}

static const AiryBackendOps cuda_ops = {
  .name = "cuda",
  .description = N_("NVIDIA GPUs (CUDA runtime, cuFFT, NCCL)"),
  .open = _airy_cuda_open,
  .close = _airy_cuda_close,
  .n_devices = _airy_cuda_n_devices,
  .device_info = _airy_cuda_device_info,
  .free_memory = _airy_cuda_free_memory,
  .prepare = cuda_prepare,
  .execute = cuda_execute,
  .all_reduce = _airy_cuda_all_reduce,
  .finish = cuda_finish,
  .release = cuda_release,
  .per_wavelength = TRUE,
  .supports_op = cuda_supports_op,
  .fft_floor = _airy_cuda_fft_floor,
  .download_floor = _airy_cuda_download_floor,
  .peak_memory = _airy_cuda_peak_memory,
  .gl_release = _airy_cuda_gl_release,
  .counter = _airy_cuda_counter,
  .fit_new = _airy_cuda_fit_new,
  .fit_set_data = _airy_cuda_fit_set_data,
  .fit_pass = _airy_cuda_fit_pass,
  .fit_free = _airy_cuda_fit_free,
};

G_MODULE_EXPORT gboolean airy_module_register (const char *path, GError **error);

G_MODULE_EXPORT gboolean
airy_module_register (const char *path,
                      GError    **error)
{
  airy_backend_register (&cuda_ops, path);
  return TRUE;
}

#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <string.h>

#include "airy-cuda-backend-private.h"

/* The intensity stage on the GPU: CONVOLVE (each plane padded and
 * transformed real-to-complex, multiplied with the sample's spectrum and
 * accumulated on the device; after the all-reduce one inverse transform
 * and the "same" crop on the root; a sample constant in z convolves the
 * planes' sum once instead, Σ_z (P_z ⊛ V) = (Σ_z P_z) ⊛ V) and SENSOR
 * (resampling and the noise chain with the CPU's counter-based random
 * numbers). */

/* The padded real-to-complex transforms (and on the root the inverse). */
void
_airy_cuda_imaging_specs (AiryRunState *state, Slot *s, guint batch, guint rest, GArray *specs)
{
  CudaRun *run = state->backend_data;
  guint ph = run->conv->pad_height, pw = run->conv->pad_width;

  if (!run->sum_first)
    {
      _airy_cuda_spec_add (specs, &s->r2c, 2, ph, pw, FALSE, 1, 0, CUFFT_R2C, batch);
      _airy_cuda_spec_add (specs, &s->r2c_rest, 2, ph, pw, FALSE, 1, 0, CUFFT_R2C, rest);
    }
  _airy_cuda_spec_add (specs, &s->r2c_one, 2, ph, pw, FALSE, 1, 0, CUFFT_R2C, 1);
  if (s->root)
    _airy_cuda_spec_add (specs, &s->c2r, 2, ph, pw, FALSE, 1, 0, CUFFT_C2R, 1);
}

static gboolean
sample_varies (const AiryConvolveOp *conv)
{
  return conv->kind != AIRY_SAMPLE_CONSTANT;
}

/* The accumulator starts at zero (the buffers come from the list). */
gboolean
_airy_cuda_imaging_alloc (AiryRunState *state, Slot *s, GError **error)
{
  return CHECK (cudaMemsetAsync (s->acc, 0, s->bytes[AIRY_SLOT_ACC], s->stream), error);
}

/* Before the first batch: a constant sample has one spectrum for every plane. */
gboolean
_airy_cuda_imaging_start (AiryRunState *state, Slot *s, GError **error)
{
  const AiryConvolveOp *cv = ((CudaRun *) state->backend_data)->conv;
  gsize nvol = (gsize) cv->vol_height * cv->vol_width;

  if (sample_varies (cv))
    return TRUE;
  return CHECK (airy_cuda_launch_fill (s->vol, nvol, (float) cv->value, s->stream), error)
         && CHECK (airy_cuda_launch_pad (s->vol, cv->vol_height, cv->vol_width, 1, s->pad,
                                         cv->pad_height, cv->pad_width, s->stream), error)
         && CUFFT (cufftExecR2C (s->r2c_one, s->pad, (cufftComplex *) s->vconst), error);
}

/* acc += Σ_b P̂_b·V̂_b for the intensity planes [b0, b0 + nb) in `in`. */
gboolean
_airy_cuda_imaging_consume (AiryRunState *state, Slot *s, guint b0, guint nb, const float *in, GError **error)
{
  const AiryConvolveOp *cv = ((CudaRun *) state->backend_data)->conv;
  gsize nspec = (gsize) cv->pad_height * (cv->pad_width / 2 + 1);
  gsize nvol = (gsize) cv->vol_height * cv->vol_width;
  guint k;

  g_assert (sample_varies (cv));
  g_atomic_int_add (&s->backend->convolutions, (gint) nb);
  if (!CHECK (airy_cuda_launch_pad (in, cv->psf_height, cv->psf_width, nb, s->pad,
                                    cv->pad_height, cv->pad_width, s->stream), error)
      || !CUFFT (cufftExecR2C (nb == s->batch ? s->r2c : s->r2c_rest, s->pad, (cufftComplex *) s->spec), error))
    return FALSE;
  for (k = 0; k < nb; k++)
    {
      float *plane = s->vol + k * nvol;
      gboolean ok = cv->kind == AIRY_SAMPLE_BEADS
        ? CHECK (airy_cuda_launch_beads (plane, cv->vol_height, cv->vol_width, b0 + k, cv->n_planes,
                                         cv->count, cv->seed, (float) cv->intensity, s->stream), error)
        : _airy_cuda_dl_upload (s, plane, _airy_convolve_volume_data (cv, b0 + k), nvol * sizeof (float), error);
      if (!ok)
        return FALSE;
    }
  /* the volume planes go through the same padded transform */
  if (!CHECK (airy_cuda_launch_pad (s->vol, cv->vol_height, cv->vol_width, nb, s->pad,
                                    cv->pad_height, cv->pad_width, s->stream), error)
      || !CUFFT (cufftExecR2C (nb == s->batch ? s->r2c : s->r2c_rest, s->pad, (cufftComplex *) s->vspec), error))
    return FALSE;
  return CHECK (airy_cuda_launch_mac (s->spec, s->vspec, TRUE, nb, nspec, s->acc, s->stream), error);
}

/* On the root, after the all-reduce: the inverse transform of Σ_z V̂_z·P̂_z
 * (a constant sample: of (Σ_z P_z)^·V̂, the sum's one transform made here),
 * then the "same" crop that keeps the PSF centre (vol_height × vol_width). */
gboolean
_airy_cuda_imaging_image (AiryRunState *state, Slot *s, float *image, GError **error)
{
  CudaRun *run = state->backend_data;
  const AiryConvolveOp *cv = run->conv;
  gsize nspec = (gsize) cv->pad_height * (cv->pad_width / 2 + 1);

  if (run->sum_first)
    {
      g_atomic_int_inc (&s->backend->convolutions);
      if (!CHECK (airy_cuda_launch_pad (s->img, cv->psf_height, cv->psf_width, 1, s->pad, cv->pad_height,
                                        cv->pad_width, s->stream), error)
          || !CUFFT (cufftExecR2C (s->r2c_one, s->pad, (cufftComplex *) s->spec), error)
          || !CHECK (airy_cuda_launch_mac (s->spec, s->vconst, FALSE, 1, nspec, s->acc, s->stream), error))
        return FALSE;
    }
  return CUFFT (cufftExecC2R (s->c2r, (cufftComplex *) s->acc, s->pad), error)
         && CHECK (airy_cuda_launch_crop (s->pad, cv->pad_width, cv->vol_height, cv->vol_width,
                                          cv->psf_height / 2, cv->psf_width / 2,
                                          1.0f / ((float) cv->pad_height * cv->pad_width), image, s->stream),
                   error);
}

/* The sensor of a plane or of the image (SENSOR: resampling into out, then
 * the noise chain of plane stream_id). */
gboolean
_airy_cuda_sensor_plane (AiryRunState *state, Slot *s, const float *in, float *out, guint64 stream_id,
                         GError **error)
{
  CudaRun *run = state->backend_data;
  const AirySensorOp *op = run->stages.sensor->sensor;
  gsize no = (gsize) op->out_height * op->out_width;
  AiryNoiseParams noise = op->noise;

  switch (op->resample)
    {
    case AIRY_SENSOR_BLOCK_SUM:
      if (!CHECK (airy_cuda_launch_block_sum (in, op->in_height, op->in_width, op->factor, out, op->out_height,
                                              op->out_width, s->stream), error))
        return FALSE;
      break;
    case AIRY_SENSOR_LINEAR:
      if (!CHECK (airy_cuda_launch_linear (in, op->in_height, op->in_width, op->in_dy, op->in_dx, out, op->out_height,
                                           op->out_width, op->out_dy, op->out_dx, op->scale, s->stream), error))
        return FALSE;
      break;
    case AIRY_SENSOR_COPY:
    default:
      if (!CHECK (cudaMemcpyAsync (out, in, no * sizeof (float), cudaMemcpyDeviceToDevice, s->stream), error))
        return FALSE;
      break;
    }
  noise.stream = stream_id;
  return CHECK (airy_cuda_launch_noise (out, no, &noise, s->stream), error);
}

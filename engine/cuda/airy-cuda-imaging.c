#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <string.h>

#include "airy-cuda-backend-private.h"

/* The intensity stage on the GPU: CONVOLVE (each plane padded and
 * transformed real-to-complex, multiplied with the sample's spectrum and
 * accumulated on the device; after the all-reduce one inverse transform
 * and the "same" crop on the root) and SENSOR (resampling and the noise
 * chain with the CPU's counter-based random numbers). */

/* The padded real-to-complex transforms (and on the root the inverse). */
void
_airy_cuda_imaging_specs (AiryRunState *state, Slot *s, guint batch, guint rest, GArray *specs)
{
  AiryPlan *plan = state->plan;
  int ph = (int) plan->pad_height, pw = (int) plan->pad_width;

  _airy_cuda_spec_add (specs, &s->r2c, 2, ph, pw, FALSE, 1, 0, CUFFT_R2C, batch);
  _airy_cuda_spec_add (specs, &s->r2c_rest, 2, ph, pw, FALSE, 1, 0, CUFFT_R2C, rest);
  _airy_cuda_spec_add (specs, &s->r2c_one, 2, ph, pw, FALSE, 1, 0, CUFFT_R2C, 1);
  if (s->root)
    _airy_cuda_spec_add (specs, &s->c2r, 2, ph, pw, FALSE, 1, 0, CUFFT_C2R, 1);
}

static gboolean
sample_varies (AiryPlan *plan)
{
  return plan->sample.kind != AIRY_SAMPLE_CONSTANT;
}

gboolean
_airy_cuda_imaging_alloc (AiryRunState *state, Slot *s, GError **error)
{
  AiryPlan *plan = state->plan;
  gsize np = (gsize) plan->pad_height * plan->pad_width;
  gsize nspec = (gsize) plan->pad_height * (plan->pad_width / 2 + 1);
  gsize nvol = (gsize) plan->vol_height * plan->vol_width;

  if (!CHECK (cudaMalloc ((void **) &s->pad, s->batch * np * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &s->spec, s->batch * nspec * sizeof (float2)), error)
      || !CHECK (cudaMalloc ((void **) &s->acc, nspec * sizeof (float2)), error)
      || !CHECK (cudaMemsetAsync (s->acc, 0, nspec * sizeof (float2), s->stream), error)
      || !CHECK (cudaMalloc ((void **) &s->vol, s->batch * nvol * sizeof (float)), error))
    return FALSE;
  if (sample_varies (plan))
    return CHECK (cudaMalloc ((void **) &s->vspec, s->batch * nspec * sizeof (float2)), error);
  return CHECK (cudaMalloc ((void **) &s->vconst, nspec * sizeof (float2)), error);
}

/* Before the first batch: a constant sample has one spectrum for every plane. */
gboolean
_airy_cuda_imaging_start (AiryRunState *state, Slot *s, GError **error)
{
  AiryPlan *plan = state->plan;
  gsize nvol = (gsize) plan->vol_height * plan->vol_width;

  if (sample_varies (plan))
    return TRUE;
  return CHECK (airy_cuda_launch_fill (s->vol, nvol, (float) plan->sample.value, s->stream), error)
         && CHECK (airy_cuda_launch_pad (s->vol, plan->vol_height, plan->vol_width, 1, s->pad,
                                         plan->pad_height, plan->pad_width, s->stream), error)
         && CUFFT (cufftExecR2C (s->r2c_one, s->pad, (cufftComplex *) s->vconst), error);
}

/* acc += Σ_b P̂_b·V̂_b for the intensity planes [b0, b0 + nb) in `in`. */
gboolean
_airy_cuda_imaging_consume (AiryRunState *state, Slot *s, guint b0, guint nb, const float *in, GError **error)
{
  AiryPlan *plan = state->plan;
  gsize nspec = (gsize) plan->pad_height * (plan->pad_width / 2 + 1);
  gsize nvol = (gsize) plan->vol_height * plan->vol_width;
  gboolean varying = sample_varies (plan);
  guint k;

  if (!CHECK (airy_cuda_launch_pad (in, plan->psf_height, plan->psf_width, nb, s->pad,
                                    plan->pad_height, plan->pad_width, s->stream), error)
      || !CUFFT (cufftExecR2C (nb == s->batch ? s->r2c : s->r2c_rest, s->pad, (cufftComplex *) s->spec), error))
    return FALSE;
  if (varying)
    {
      for (k = 0; k < nb; k++)
        {
          float *plane = s->vol + k * nvol;
          gboolean ok = plan->sample.kind == AIRY_SAMPLE_BEADS
            ? CHECK (airy_cuda_launch_beads (plane, plan->vol_height, plan->vol_width, b0 + k, plan->n_planes,
                                             plan->sample.count, plan->sample.seed,
                                             (float) plan->sample.intensity, s->stream), error)
            : _airy_cuda_dl_upload (s, plane, _airy_plan_volume_data (plan, b0 + k), nvol * sizeof (float), error);
          if (!ok)
            return FALSE;
        }
      /* the volume planes go through the same padded transform */
      if (!CHECK (airy_cuda_launch_pad (s->vol, plan->vol_height, plan->vol_width, nb, s->pad,
                                        plan->pad_height, plan->pad_width, s->stream), error)
          || !CUFFT (cufftExecR2C (nb == s->batch ? s->r2c : s->r2c_rest, s->pad, (cufftComplex *) s->vspec), error))
        return FALSE;
    }
  return CHECK (airy_cuda_launch_mac (s->spec, varying ? (void *) s->vspec : (void *) s->vconst, varying, nb,
                                      nspec, s->acc, s->stream), error);
}

/* On the root, after the all-reduce: the inverse transform of Σ_z V̂_z·P̂_z,
 * then the "same" crop that keeps the PSF centre (vol_height × vol_width). */
gboolean
_airy_cuda_imaging_image (AiryRunState *state, Slot *s, float *image, GError **error)
{
  AiryPlan *plan = state->plan;

  return CUFFT (cufftExecC2R (s->c2r, (cufftComplex *) s->acc, s->pad), error)
         && CHECK (airy_cuda_launch_crop (s->pad, plan->pad_width, plan->vol_height, plan->vol_width,
                                          plan->psf_height / 2, plan->psf_width / 2,
                                          1.0f / ((float) plan->pad_height * plan->pad_width), image, s->stream),
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

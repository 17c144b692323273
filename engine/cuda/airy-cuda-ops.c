#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "airy-error.h"

#include "airy-cuda-backend-private.h"

/* The field ops that are not fused, on the GPU, one plane at a time:
 * sources generated on the device, pixelwise factors and Jones matrices
 * uploaded once,
 * centred or plain batched cuFFT transforms over the wavelengths, pad and
 * crop, then INTENSITY (Σ_l w_l |u_l|²). */

/* The field ops a device can run: everything but APPLY (an element type
 * with neither compile() nor a pixelwise apply() runs on the CPU only). */
gboolean
_airy_cuda_ops_check (GPtrArray *ops, CudaRun *run, GError **error)
{
  AiryOp *first = g_ptr_array_index (ops, 0);
  guint i;

  run->n_ops = run->stages.n_field - 1;
  for (i = 0; i < run->n_ops; i++)
    {
      AiryOp *op = g_ptr_array_index (ops, i);

      if (op->kind == AIRY_OP_APPLY)
        {
          g_autofree char *path = g_strdup_printf ("chain[%u]", op->index);

          g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, _("%s (%s): this element has no device form"),
                       path, airy_element_get_type_name (op->element));
          return FALSE;
        }
    }
  run->z0 = first->kind == AIRY_OP_OBJECTIVE ? first->z : 0.0;
  return TRUE;
}

/* A batched 2-D plan over the wavelengths for every FFT op. */
void
_airy_cuda_ops_specs (AiryRunState *state, Slot *s, GArray *specs)
{
  CudaRun *run = state->backend_data;
  guint i;

  for (i = 0; i < run->n_ops; i++)
    {
      AiryOp *op = g_ptr_array_index (state->ops, i);

      if (op->kind == AIRY_OP_FFT)
        _airy_cuda_spec_add (specs, &s->op_plan[i], 2, op->height, op->width, FALSE, 1, 0, CUFFT_C2C, s->n_lambda);
    }
}

/* The field ops on this device: their factors, scales and grids (the two
 * fields of the largest shape and the cuFFT plans come with the slot's). */
gboolean
_airy_cuda_ops_alloc (AiryRunState *state, Slot *s, GError **error)
{
  CudaRun *run = state->backend_data;
  AiryOp *intensity = g_ptr_array_index (state->ops, run->n_ops);
  guint L = s->n_lambda, i, l;
  g_autofree float *weights = g_new (float, L);

  for (l = 0; l < L; l++)
    weights[l] = (float) intensity->weights[l];
  /* the two fields (ga, gb) come with the slot's buffers */
  if (!CHECK (cudaMalloc ((void **) &s->sums, L * sizeof (double)), error)
      || !_airy_cuda_upload ((void **) &s->weights, weights, L * sizeof (float), s->stream, error))
    return FALSE;
  for (i = 0; i < s->n_ops; i++)
    {
      AiryOp *op = g_ptr_array_index (state->ops, i);
      /* a JONES op holds four matrix entries per entry pair: 2 × L planes */
      gsize n = (gsize) (op->kind == AIRY_OP_JONES ? 2 : 1) * L * op->height * op->width;

      if (op->factor && !_airy_cuda_upload (&s->op_factor[i], op->factor, n * sizeof (float2), s->stream, error))
        return FALSE;
      if (op->phase && !_airy_cuda_upload ((void **) &s->op_phase[i], op->phase, n * sizeof (double), s->stream, error))
        return FALSE;
      if (op->scale && !_airy_cuda_upload ((void **) &s->op_scale[i], op->scale, L * sizeof (float2), s->stream, error))
        return FALSE;
      if (op->lambda
          && (!CHECK (cudaMalloc ((void **) &s->op_geom[i], 3 * L * sizeof (double)), error)
              || !CHECK (cudaMemcpyAsync (s->op_geom[i], op->lambda, L * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)
              || !CHECK (cudaMemcpyAsync (s->op_geom[i] + L, op->dy, L * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)
              || !CHECK (cudaMemcpyAsync (s->op_geom[i] + 2 * L, op->dx, L * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)))
        return FALSE;
    }
  /* the host arrays above are pageable: the copies are done on return,
   * but wait for them before the list's buffers can be freed */
  return CHECK (cudaStreamSynchronize (s->stream), error);
}

static cufftResult
fft_exec (cufftHandle plan, float2 *u, AiryFftSign sign)
{
  return cufftExecC2C (plan, (cufftComplex *) u, (cufftComplex *) u,
                       sign == AIRY_FFT_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE);
}

/* One plane through the field ops: the field ends in s->ga or s->gb, its
 * weighted intensity (INTENSITY) in out. z: the source's defocus, on the
 * device. */
static gboolean
ops_plane (AiryRunState *state, Slot *s, guint b, const double *z, float *out, GError **error)
{
  AiryPlan *plan = state->plan;
  float2 *u = s->ga, *t = s->gb, *swap;
  guint L = s->n_lambda, h = plan->in_height, w = plan->in_width, i;
  gboolean ok = TRUE;

  for (i = 0; ok && i < s->n_ops; i++)
    {
      AiryOp *op = g_ptr_array_index (state->ops, i);
      gsize np = (gsize) op->height * op->width;
      double zs = plan->z[b] + op->z;
      const double *g = s->op_geom[i];

      switch (op->kind)
        {
        case AIRY_OP_SET:
          ok = CHECK (cudaMemcpyAsync (u, s->op_factor[i], L * np * sizeof (float2), cudaMemcpyDeviceToDevice,
                                       s->stream), error);
          break;
        case AIRY_OP_OBJECTIVE:
          /* F and φ of all wavelengths are contiguous: one flat batch */
          ok = CHECK (airy_cuda_launch_generate (s->op_factor[i], s->op_phase[i], z, 1, L * np, u, s->stream), error);
          break;
        case AIRY_OP_POINT:
          ok = _airy_point_source_check_z (b, zs, error)
               && CHECK (airy_cuda_launch_point (u, L, op->height, op->width, g, g + L, g + 2 * L, op->n, zs,
                                                 op->power, s->stream), error);
          break;
        case AIRY_OP_GAUSS:
          ok = CHECK (airy_cuda_launch_gauss (u, L, op->height, op->width, g, g + L, g + 2 * L, op->n, zs,
                                              op->waist, op->power, s->sums, s->stream), error);
          break;
        case AIRY_OP_MULTIPLY:
          ok = CHECK (airy_cuda_launch_multiply (u, s->op_factor[i], L, np, s->stream), error);
          break;
        case AIRY_OP_JONES:
          ok = CHECK (airy_cuda_launch_jones (u, s->op_factor[i], L / 2, np, s->stream), error);
          break;
        case AIRY_OP_FFT:
          if (op->centred)
            {
              /* ifftshift, transform, fftshift with the scale, as the CPU */
              ok = CHECK (airy_cuda_launch_roll_scale (u, t, L, h, w, h - h / 2, w - w / 2, NULL, s->stream), error)
                   && CUFFT (fft_exec (s->op_plan[i], t, op->sign), error)
                   && CHECK (airy_cuda_launch_roll_scale (t, u, L, h, w, h / 2, w / 2, s->op_scale[i], s->stream), error);
            }
          else
            {
              ok = CUFFT (fft_exec (s->op_plan[i], u, op->sign), error);
              if (ok && s->op_scale[i])
                {
                  ok = CHECK (airy_cuda_launch_roll_scale (u, t, L, h, w, 0, 0, s->op_scale[i], s->stream), error);
                  swap = u, u = t, t = swap;
                }
            }
          break;
        case AIRY_OP_RESIZE:
          ok = CHECK (airy_cuda_launch_resize (u, h, w, t, op->height, op->width, L, s->stream), error);
          swap = u, u = t, t = swap;
          break;
        default:
          g_return_val_if_reached (FALSE);
        }
      h = op->height;
      w = op->width;
    }
  return ok && CHECK (airy_cuda_launch_weighted_intensity (u, s->weights, L, (gsize) h * w, out, s->stream), error);
}

/* Planes [b0, b0 + nb) into out[b][y][x], one at a time. */
gboolean
_airy_cuda_ops_produce (AiryRunState *state, Slot *s, guint b0, guint nb, const double *z, float *out,
                        GError **error)
{
  AiryPlan *plan = state->plan;
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  guint k;

  for (k = 0; k < nb; k++)
    if (!ops_plane (state, s, b0 + k, z + k, out + k * n, error))
      return FALSE;
  return TRUE;
}

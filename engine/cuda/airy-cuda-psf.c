#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <string.h>

#include "airy-cuda-backend-private.h"

/* FUSED_PSF on the GPU (airy-ops-private.h): the op's pupil field F and
 * defocus phase G on the pupil's rows, copied once per device and kept
 * across runs of the same optics (keyed on the op's hash, which leaves z
 * out); planes generated in batches on the band (u = F·e^{i z G}), every
 * entry (wavelength, vectorial component) of every plane of a batch in one
 * row-interleaved array (airy-cuda-layout.h), so that the pruned 2-D
 * transform is two batched cuFFT calls per batch (the pupil's rows of all
 * of them, then every column), and the intensity Σ_l s_l |u_l|² (and each
 * wavelength's, for channels) one pass over the column pass's output. */

static gsize
pupil_bytes (const Pupil *p)
{
  return p->n_lambda * (p->nband * (sizeof (float2) + sizeof (double)) + sizeof (float));
}

void
_airy_cuda_pupil_unref (Pupil *p)
{
  int d;

  if (p == NULL || !g_atomic_int_dec_and_test (&p->ref))
    return;
  for (d = 0; d < p->count; d++)
    if (p->dF[d])
      {
        cudaSetDevice (d);
        cudaFree (p->dF[d]);
        cudaFree (p->dG[d]);
        cudaFree (p->dS[d]);
        if (p->ready[d])
          cudaEventDestroy (p->ready[d]);
        _airy_cuda_held_add (p->backend, d, -(gint64) pupil_bytes (p));
      }
  g_free (p->dF);
  g_free (p->dG);
  g_free (p->dS);
  g_free (p->ready);
  _airy_op_unref (p->op);
  g_free (p);
}

static gboolean
pupil_matches (const Pupil *p, const AiryOp *fused)
{
  return p->hash == fused->psf->hash && p->n_lambda == fused->n_lambda && p->width == fused->width
         && p->y0 == fused->psf->y0 && p->rows == fused->psf->rows;
}

/* The device copies for this op: those of the last run when the optics
 * are the same (z may differ), else new ones, which replace them. */
Pupil *
_airy_cuda_pupil_get (CudaBackend *self, const AiryOp *fused)
{
  Pupil *p = NULL, *old = NULL;

  g_mutex_lock (&self->lock);
  if (self->pupil && pupil_matches (self->pupil, fused))
    {
      p = self->pupil;
      g_atomic_int_inc (&p->ref);
    }
  g_mutex_unlock (&self->lock);
  if (p != NULL)
    return p;

  p = g_new0 (Pupil, 1);
  p->ref = 2;                       /* the cache's and this run's */
  p->backend = self;
  p->hash = fused->psf->hash;
  p->op = _airy_op_ref ((AiryOp *) fused);
  p->n_lambda = fused->n_lambda;
  p->width = fused->width;
  p->y0 = fused->psf->y0;
  p->rows = fused->psf->rows;
  p->nband = (gsize) p->rows * p->width;
  p->count = self->count;
  p->dF = g_new0 (float2 *, p->count);
  p->dG = g_new0 (double *, p->count);
  p->dS = g_new0 (float *, p->count);
  p->ready = g_new0 (cudaEvent_t, p->count);
  g_atomic_int_inc (&self->pupil_builds);
  g_mutex_lock (&self->lock);
  old = self->pupil;
  self->pupil = p;
  g_mutex_unlock (&self->lock);
  _airy_cuda_pupil_unref (old);
  return p;
}

/* The device's copy of the pupil data, made once, on the slot's stream (the
 * slot's kernels come after it); a later run on another stream waits for
 * the copy through `ready`. */
gboolean
_airy_cuda_pupil_upload (CudaBackend *self, Pupil *p, Slot *s, GError **error)
{
  const AiryFusedPsf *psf = p->op->psf;
  int d = s->device;
  gsize nf = p->n_lambda * p->nband;
  gboolean ok = TRUE;

  g_mutex_lock (&self->lock);
  if (p->dF[d] == NULL)
    {
      ok = CHECK (cudaMalloc ((void **) &p->dF[d], nf * sizeof (float2)), error)
           && CHECK (cudaMalloc ((void **) &p->dG[d], nf * sizeof (double)), error)
           && CHECK (cudaMalloc ((void **) &p->dS[d], p->n_lambda * sizeof (float)), error)
           && CHECK (cudaEventCreateWithFlags (&p->ready[d], cudaEventDisableTiming), error)
           && CHECK (cudaMemcpyAsync (p->dF[d], psf->F, nf * sizeof (float2), cudaMemcpyHostToDevice, s->stream), error)
           && CHECK (cudaMemcpyAsync (p->dG[d], psf->G, nf * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)
           && CHECK (cudaMemcpyAsync (p->dS[d], psf->scale, p->n_lambda * sizeof (float), cudaMemcpyHostToDevice,
                                      s->stream), error)
           && CHECK (cudaEventRecord (p->ready[d], s->stream), error);
      if (!ok)
        {
          cudaFree (p->dF[d]);
          cudaFree (p->dG[d]);
          cudaFree (p->dS[d]);
          if (p->ready[d])
            cudaEventDestroy (p->ready[d]);
          p->dF[d] = NULL;
          p->dG[d] = NULL;
          p->dS[d] = NULL;
          p->ready[d] = NULL;
        }
      else
        {
          _airy_cuda_held_add (self, d, (gint64) pupil_bytes (p));
          g_atomic_int_inc (&self->pupil_uploads);
        }
    }
  else
    ok = CHECK (cudaStreamWaitEvent (s->stream, p->ready[d], 0), error);
  g_mutex_unlock (&self->lock);
  return ok;
}

/* The pruned 2-D transform of a batch of nb planes, T = L·nb transforms
 * in u[y][t][x] (airy-cuda-layout.h): rows: the pupil's rows of all of
 * them, one contiguous block, in place; cols: every column of every one
 * (stride T·w), field → field2. */
void
_airy_cuda_psf_specs (AiryRunState *state, Slot *s, guint batch, guint rest, GArray *specs)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  guint w = plan->psf_width, h = plan->psf_height;
  guint64 rows = run->pupil->rows, L = s->n_lambda;

  _airy_cuda_spec_add (specs, &s->rows, 1, w, 0, FALSE, 1, 0, CUFFT_C2C, rows * L * batch);
  _airy_cuda_spec_add (specs, &s->cols, 1, h, 0, TRUE, L * batch * w, 1, CUFFT_C2C, L * batch * w);
  _airy_cuda_spec_add (specs, &s->rows_rest, 1, w, 0, FALSE, 1, 0, CUFFT_C2C, rows * L * rest);
  _airy_cuda_spec_add (specs, &s->cols_rest, 1, h, 0, TRUE, L * rest * w, 1, CUFFT_C2C, L * rest * w);
}

/* The pupil's copy on this device; the batch's field zero outside the
 * pupil's rows (the row pass writes those only). */
gboolean
_airy_cuda_psf_alloc (AiryRunState *state, Slot *s, GError **error)
{
  CudaRun *run = state->backend_data;

  if (!_airy_cuda_pupil_upload (run->backend, run->pupil, s, error)
      || !CHECK (cudaMemsetAsync (s->field, 0, s->bytes[AIRY_SLOT_FIELD], s->stream), error))
    return FALSE;
  s->F = run->pupil->dF[s->device];     /* borrowed from the pupil cache */
  s->G = run->pupil->dG[s->device];
  s->S = run->pupil->dS[s->device];
  return TRUE;
}

/* nb planes (z: their defocus on the device, the op's z0 included) into
 * out[b][y][x] (and, for channels, s->chan), enqueued on the slot's
 * stream: one generation, two transforms and one intensity pass for all
 * the entries of all the planes. */
gboolean
_airy_cuda_psf_produce (AiryRunState *state, Slot *s, guint nb, const double *z, float *out, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  const AiryFusedPsf *psf = run->pupil->op->psf;
  guint L = s->n_lambda, C = state->n_channels > 0 ? L / state->n_channels : L;
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  float2 *band = s->field + (gsize) psf->y0 * L * nb * plan->psf_width;

  /* the last, smaller batch has its own layout: zero it once */
  return (nb == s->batch || CHECK (cudaMemsetAsync (s->field, 0, nb * L * n * sizeof (float2), s->stream), error))
         && CHECK (airy_cuda_launch_generate_band (s->F, s->G, z, L, nb, psf->rows, plan->psf_width, band, s->stream),
                   error)
         && CUFFT (cufftExecC2C (nb == s->batch ? s->rows : s->rows_rest, (cufftComplex *) band,
                                 (cufftComplex *) band, CUFFT_FORWARD), error)
         && CUFFT (cufftExecC2C (nb == s->batch ? s->cols : s->cols_rest, (cufftComplex *) s->field,
                                 (cufftComplex *) s->field2, CUFFT_FORWARD), error)
         && CHECK (airy_cuda_launch_band_intensity (s->field2, s->S, L, C, nb, plan->psf_height, plan->psf_width, out,
                                                    state->n_channels > 0 ? s->chan : NULL, s->stream), error);
}

#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "airy-cuda-backend-private.h"

/* The fit's model on one GPU (airy-backend-impl.h: AiryFitShape,
 * AiryFitPass): the same pass as the CPU's (airy-fit-model.c), with
 * airy-fit-kernels.h's bodies as kernels and cuFFT's batched 2-D C2C for
 * FFTW's transforms (CUFFT_INVERSE is unnormalised, as the adjoint wants).
 * The constant parts (G, the scales, the data) are uploaded once; a pass
 * uploads base and the planes' defocus, runs the planes in batches of
 * every entry (one forward and, for the gradient, one backward transform
 * of each), and brings back the loss's per-block sums and M. */

typedef struct
{
  CudaBackend  *backend;
  int           device;
  AiryFitShape  shape;       /* the pointers are not kept */
  gsize         nband, np, win;
  cudaStream_t  stream;
  float        *scale;       /* L */
  double       *G;           /* L × nband */
  float2       *base;        /* L × nband */
  float        *dpos;        /* depth × window (Poisson) */
  double       *dconst;
  float        *data;        /* depth × window (least squares) */
  float2       *X;           /* batch × L × h × w */
  double       *zt;          /* batch */
  unsigned     *k;           /* batch */
  float        *mu;          /* batch × window */
  double       *M;           /* L × nband */
  double       *partial;     /* 3 × AIRY_CUDA_FIT_BLOCKS */
  guint         batch;
  cufftHandle   plan;        /* batch · L transforms */
  cufftHandle   plan_rest;   /* rest · L, made when a pass ends with fewer planes */
  guint         rest;
  gboolean      have_plan, have_rest;
} CudaFit;

static gboolean
fit_plan (CudaFit *f, cufftHandle *plan, guint nb, GError **error)
{
  PlanSpec spec = { NULL, 2, { f->shape.height, f->shape.width }, FALSE, 1, 0, CUFFT_C2C,
                    (long long) nb * f->shape.L };
  size_t work = 0;

  if (!CUFFT (cufftCreate (plan), error))
    return FALSE;
  if (_airy_cuda_make_plan (*plan, &spec, &work, error) && CUFFT (cufftSetStream (*plan, f->stream), error))
    return TRUE;
  cufftDestroy (*plan);
  return FALSE;
}

void
_airy_cuda_fit_free (AiryBackend *backend, gpointer data)
{
  CudaFit *f = data;

  if (f == NULL)
    return;
  cudaSetDevice (f->device);
  if (f->stream)
    cudaStreamSynchronize (f->stream);
  if (f->have_plan)
    cufftDestroy (f->plan);
  if (f->have_rest)
    cufftDestroy (f->plan_rest);
  cudaFree (f->scale);
  cudaFree (f->G);
  cudaFree (f->base);
  cudaFree (f->dpos);
  cudaFree (f->dconst);
  cudaFree (f->data);
  cudaFree (f->X);
  cudaFree (f->zt);
  cudaFree (f->k);
  cudaFree (f->mu);
  cudaFree (f->M);
  cudaFree (f->partial);
  if (f->stream)
    cudaStreamDestroy (f->stream);
  g_free (f);
}

gpointer
_airy_cuda_fit_new (AiryBackend *backend, guint device, const AiryFitShape *shape, GError **error)
{
  CudaBackend *self = backend->priv;
  CudaFit *f = g_new0 (CudaFit, 1);
  guint64 budget = 0, fixed, per_plane;
  size_t free_b = 0, total_b = 0;
  gsize L = shape->L;

  f->backend = self;
  f->device = (int) device;
  f->shape = *shape;
  f->nband = (gsize) shape->rows * shape->width;
  f->np = (gsize) shape->height * shape->width;
  f->win = (gsize) shape->win_h * shape->win_w;
  /* the fitting thread may have run other CUDA work before */
  _airy_gpu_enter (&_airy_cuda_gpu_hooks);
  if (!CHECK (cudaSetDevice (f->device), error)
      || !CHECK (cudaStreamCreateWithFlags (&f->stream, cudaStreamNonBlocking), error)
      || !CHECK (cudaMemGetInfo (&free_b, &total_b), error)
      || !_airy_cuda_device_budget (&budget, error))
    goto failed;

  /* the planes of a batch: their transforms, cuFFT's work area for them
   * (at most as large again) and μ; the rest once */
  fixed = L * f->nband * (sizeof (double) + 2 * sizeof (float2) + sizeof (double)) + L * sizeof (float)
          + (guint64) shape->depth * f->win * (sizeof (float) + sizeof (double) + sizeof (float))
          + 3 * AIRY_CUDA_FIT_BLOCKS * sizeof (double);
  per_plane = 2 * L * f->np * sizeof (float2) + f->win * sizeof (float) + sizeof (double) + sizeof (unsigned);
  if (_airy_device_batch (_airy_device_usable (free_b, budget, _airy_cuda_held_get (self, f->device)), fixed,
                          per_plane, MAX (shape->depth, 1), 64, TRUE, &f->batch)
      != AIRY_BATCH_OK)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("the fit's model does not fit on CUDA device %d: one plane needs %u MiB besides %u MiB, "
                     "%u MiB are free"),
                   f->device, (guint) (per_plane >> 20), (guint) (fixed >> 20), (guint) ((guint64) free_b >> 20));
      goto failed;
    }
  if (!CHECK (cudaMalloc ((void **) &f->scale, L * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &f->G, L * f->nband * sizeof (double)), error)
      || !CHECK (cudaMalloc ((void **) &f->base, L * f->nband * sizeof (float2)), error)
      || !CHECK (cudaMalloc ((void **) &f->M, L * f->nband * sizeof (double)), error)
      || !CHECK (cudaMalloc ((void **) &f->X, (gsize) f->batch * L * f->np * sizeof (float2)), error)
      || !CHECK (cudaMalloc ((void **) &f->zt, f->batch * sizeof (double)), error)
      || !CHECK (cudaMalloc ((void **) &f->k, f->batch * sizeof (unsigned)), error)
      || !CHECK (cudaMalloc ((void **) &f->mu, MAX (f->batch * f->win, 1) * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &f->partial, 3 * AIRY_CUDA_FIT_BLOCKS * sizeof (double)), error)
      || !CHECK (cudaMemcpyAsync (f->scale, shape->scale, L * sizeof (float), cudaMemcpyHostToDevice, f->stream),
                 error)
      || !CHECK (cudaMemcpyAsync (f->G, shape->G, L * f->nband * sizeof (double), cudaMemcpyHostToDevice,
                                  f->stream), error)
      || !fit_plan (f, &f->plan, f->batch, error))
    goto failed;
  f->have_plan = TRUE;
  if (!CHECK (cudaStreamSynchronize (f->stream), error))
    goto failed;
  return f;

failed:
  _airy_cuda_fit_free (backend, f);
  return NULL;
}

gboolean
_airy_cuda_fit_set_data (AiryBackend *backend, gpointer data, const float *dpos, const double *dconst, const float *values,
              GError **error)
{
  CudaFit *f = data;
  gsize n = (gsize) f->shape.depth * f->win;

  _airy_gpu_enter (&_airy_cuda_gpu_hooks);
  if (!CHECK (cudaSetDevice (f->device), error))
    return FALSE;
  if (dpos != NULL)
    return (f->dpos || CHECK (cudaMalloc ((void **) &f->dpos, n * sizeof (float)), error))
           && (f->dconst || CHECK (cudaMalloc ((void **) &f->dconst, n * sizeof (double)), error))
           && CHECK (cudaMemcpyAsync (f->dpos, dpos, n * sizeof (float), cudaMemcpyHostToDevice, f->stream), error)
           && CHECK (cudaMemcpyAsync (f->dconst, dconst, n * sizeof (double), cudaMemcpyHostToDevice, f->stream),
                     error)
           && CHECK (cudaStreamSynchronize (f->stream), error);
  return (f->data || CHECK (cudaMalloc ((void **) &f->data, n * sizeof (float)), error))
         && CHECK (cudaMemcpyAsync (f->data, values, n * sizeof (float), cudaMemcpyHostToDevice, f->stream), error)
         && CHECK (cudaStreamSynchronize (f->stream), error);
}

gboolean
_airy_cuda_fit_pass (AiryBackend *backend, gpointer data, AiryFitPass *pass, GError **error)
{
  CudaFit *f = data;
  AiryFitLossArgs a = _airy_fit_loss_args (&f->shape, pass, f->scale, f->dpos, f->dconst, f->data);
  gsize L = f->shape.L;
  double partial[3 * AIRY_CUDA_FIT_BLOCKS];
  guint b0, i;

  _airy_gpu_enter (&_airy_cuda_gpu_hooks);
  if ((a.poisson && f->dpos == NULL) || (pass->has_data && !pass->poisson && f->data == NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, "fit pass: no data on the device");
      return FALSE;
    }
  for (i = 0; i < pass->n; i++)
    if (pass->k[i] >= f->shape.depth)
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, "fit pass: plane %u of %u", pass->k[i], f->shape.depth);
        return FALSE;
      }
  if (!CHECK (cudaSetDevice (f->device), error)
      || !CHECK (cudaMemcpyAsync (f->base, pass->base, L * f->nband * sizeof (float2), cudaMemcpyHostToDevice,
                                  f->stream), error)
      || !CHECK (cudaMemsetAsync (f->partial, 0, sizeof partial, f->stream), error)
      || (pass->grad && !CHECK (cudaMemsetAsync (f->M, 0, L * f->nband * sizeof (double), f->stream), error)))
    return FALSE;
  for (b0 = 0; b0 < pass->n; b0 += f->batch)
    {
      guint nb = MIN (f->batch, pass->n - b0);
      cufftHandle plan = f->plan;

      if (nb != f->batch)
        {
          if (f->have_rest && f->rest != nb)
            {
              cufftDestroy (f->plan_rest);
              f->have_rest = FALSE;
            }
          if (!f->have_rest && !fit_plan (f, &f->plan_rest, nb, error))
            return FALSE;
          f->have_rest = TRUE;
          f->rest = nb;
          plan = f->plan_rest;
        }
      /* on the pass's stream: a pageable source is staged at once, and the
       * device buffers are reused in stream order */
      if (!CHECK (cudaMemcpyAsync (f->zt, pass->zt + b0, nb * sizeof (double), cudaMemcpyHostToDevice, f->stream),
                  error)
          || !CHECK (cudaMemcpyAsync (f->k, pass->k + b0, nb * sizeof (unsigned), cudaMemcpyHostToDevice, f->stream),
                     error)
          || !CHECK (airy_cuda_launch_fit_field (&a, f->base, f->G, f->zt, nb, f->X, f->stream), error)
          || !CUFFT (cufftExecC2C (plan, (cufftComplex *) f->X, (cufftComplex *) f->X, CUFFT_FORWARD), error)
          || !CHECK (airy_cuda_launch_fit_loss (&a, f->k, nb, f->X, pass->mu ? f->mu : NULL, f->partial, f->stream),
                     error)
          || (pass->mu
              && !CHECK (cudaMemcpyAsync (pass->mu + (gsize) b0 * f->win, f->mu, nb * f->win * sizeof (float),
                                          cudaMemcpyDeviceToHost, f->stream), error))
          || (pass->grad
              && (!CUFFT (cufftExecC2C (plan, (cufftComplex *) f->X, (cufftComplex *) f->X, CUFFT_INVERSE), error)
                  || !CHECK (airy_cuda_launch_fit_adjoint (&a, nb, f->base, f->G, f->zt, f->X, f->M, f->stream),
                             error))))
        return FALSE;
    }
  if (!CHECK (cudaMemcpyAsync (partial, f->partial, sizeof partial, cudaMemcpyDeviceToHost, f->stream), error)
      || (pass->grad && !CHECK (cudaMemcpyAsync (pass->M, f->M, L * f->nband * sizeof (double), cudaMemcpyDeviceToHost,
                                                 f->stream), error))
      || !CHECK (cudaStreamSynchronize (f->stream), error))
    return FALSE;
  pass->loss = pass->dA = pass->dB = 0.0;
  for (i = 0; i < AIRY_CUDA_FIT_BLOCKS; i++)
    {
      pass->loss += partial[3 * i];
      pass->dA += partial[3 * i + 1];
      pass->dB += partial[3 * i + 2];
    }
  return TRUE;
}

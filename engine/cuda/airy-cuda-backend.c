#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <gmodule.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <cuda_gl_interop.h>
#include <cufft.h>
#include <nccl.h>

#include "airy-backend.h"
#include "airy-error.h"
#include "airy-plan-private.h"
#include "airy-ops-private.h"
#include "airy-sensor-private.h"
#include "cpu/airy-cpu-fast-private.h"
#include "airy-cuda-kernels.h"

/* The CUDA backend module (DESIGN §4). It links the CUDA runtime, cuFFT and
 * NCCL but never libcuda, so it loads on machines without an NVIDIA driver
 * and then reports "no CUDA device: …".
 *
 * A run: the host prepares the pupil field F and the defocus phase G once
 * (as the CPU fast path does) and every device gets its own copy of their
 * pupil rows; planes are generated on the device in batches (u = F·e^{i z G},
 * the pupil's rows only), transformed with the pruned pass of the CPU path
 * (a batched row transform of the pupil's rows, a batched column transform
 * of everything), and |u|² is written where it is needed: the
 * device's share of the stack, or for a microscope the padded real-to-
 * complex transform and the product with the sample's spectrum, summed on
 * the device and then across devices with one NCCL all-reduce. One inverse
 * transform makes the image.
 *
 * Any other chain runs as its device operation list (airy-ops-private.h):
 * sources generated on the device, pixelwise factors uploaded once, centred
 * or plain batched cuFFT transforms over the wavelengths, pad and crop,
 * then Σ_l w_l |u_l|², one plane at a time; the rest of the run (sums,
 * imaging, sensor) is the same. */

#define MAX_BATCH 16

/* The fused path's pupil data, kept across runs of the same optics: the
 * host computes F, G (pupil rows only) once per change, each device gets
 * its copy once. */
typedef struct
{
  gint      ref;
  char     *key;
  guint     n_lambda;
  gsize     nband;       /* rows × w */
  guint     y0, rows;
  float    *scale;
  double    z0;
  float2   *F;           /* host: n_lambda × nband */
  float    *G;
  int       count;       /* devices */
  float2  **dF;          /* per device, NULL until uploaded */
  float   **dG;
} Pupil;

/* A cuFFT plan waiting in the pool for the next run of the same shape */
typedef struct
{
  int          device;
  cufftHandle  handle;
} PooledPlan;

typedef struct
{
  int              count;
  struct cudaDeviceProp *props;
  /* NCCL communicators for the last device set, kept while the backend lives */
  ncclComm_t      *comms;
  int             *comm_devices;
  int              n_comms;
  /* the last result, kept on the devices for GL interop */
  GMutex           lock;
  GPtrArray       *last;     /* ResultPart* */
  GHashTable      *registered;   /* GL texture name → cudaGraphicsResource_t */
  guint64         *peak;     /* per device: the most one run allocated */
  Pupil           *pupil;    /* the last fused run's pupil data */
  GHashTable      *plans;    /* key → PooledPlan*: the last run's cuFFT plans, per device */
} CudaBackend;

typedef struct
{
  int     device;
  float  *data;      /* planes [first, first + count) of width × height */
  guint   first;
  guint   count;
  guint   width;
  guint   height;
} ResultPart;

typedef struct
{
  int           device;
  cudaStream_t  stream;
  guint         batch;
  guint         n_lambda;
  float2       *F;        /* n_lambda × rows × w: the pupil's rows */
  float        *G;
  float2       *field;    /* h × batch × w (row-interleaved), zero outside the pupil's rows */
  float2       *field2;   /* the column pass's output, same layout */
  float        *inten;    /* batch × h × w */
  float        *zbuf;     /* batch */
  float        *out;      /* this device's planes of the stack (no reduction) */
  float        *img;      /* Σ_z I (a reduction without imaging) */
  float        *pad;      /* batch × ph × pw */
  float2       *spec;     /* batch × nspec */
  float        *vol;      /* batch × vol h × vol w (z-varying sample) */
  float2       *vspec;    /* batch × nspec */
  float2       *vconst;   /* the constant sample's spectrum */
  float2       *acc;      /* Σ_z P̂·V̂ */
  cufftHandle   rows, rows_rest, cols, cols_rest, r2c, r2c_rest, r2c_one, c2r;
  guint         rest;
  /* the operation list: two fields of the largest shape, each op's data */
  float2       *ga, *gb;
  void        **op_factor;
  float       **op_phase;
  float2      **op_scale;
  double      **op_geom;    /* λ, dy, dx per wavelength */
  cufftHandle  *op_plan;
  guint         n_ops;
  double       *sums;
  float        *weights;
  CudaBackend  *backend;
  GPtrArray    *taken;     /* keys of the pooled plans this slot holds … */
  GArray       *taken_handles;   /* … and their handles */
} Slot;

typedef struct
{
  Slot          *slots;
  float         *scale;   /* the pupil's, per wavelength */
  double         z0;
  guint          y0, rows;  /* the pupil's rows */
  Pupil         *pupil;
  AiryOpList    *ops;     /* chains without the fused path */
  CudaBackend   *backend;
} CudaRun;

#define CHECK(expr, error) airy_cuda_check ((int) (expr), #expr, __FILE__, __LINE__, 0, (error))
#define CUFFT(expr, error) airy_cuda_check ((int) (expr), #expr, __FILE__, __LINE__, 1, (error))
#define NCCL(expr, error)  airy_cuda_check ((int) (expr), #expr, __FILE__, __LINE__, 2, (error))

/* Every CUDA, cuFFT and NCCL call goes through here: a failure becomes a
 * GError naming the call, the file and the line; running out of memory is
 * reported as such, never an abort. */
static gboolean
airy_cuda_check (int status, const char *expr, const char *file, int line, int api, GError **error)
{
  const char *what;

  if (status == 0)
    return TRUE;
  if (error && *error)
    return FALSE;
  if (api == 0)
    what = cudaGetErrorString ((cudaError_t) status);
  else if (api == 2)
    what = ncclGetErrorString ((ncclResult_t) status);
  else
    what = status == CUFFT_ALLOC_FAILED ? "out of device memory" : "cuFFT error";
  g_set_error (error, AIRY_ERROR,
               (api == 0 && status == cudaErrorMemoryAllocation) || (api == 1 && status == CUFFT_ALLOC_FAILED)
               ? AIRY_ERROR_BUDGET : AIRY_ERROR_BACKEND,
               "%s failed: %s (%d) (%s:%d)", expr, what, status, file, line);
  return FALSE;
}

static void
pupil_unref (Pupil *p)
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
      }
  g_free (p->dF);
  g_free (p->dG);
  g_free (p->F);
  g_free (p->G);
  g_free (p->scale);
  g_free (p->key);
  g_free (p);
}

/* Destroys the pooled plans of one device (-1: all); with the lock held. */
static void
plans_destroy (CudaBackend *self, int device)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->plans);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      PooledPlan *pp = value;

      if (device >= 0 && pp->device != device)
        continue;
      cudaSetDevice (pp->device);
      cufftDestroy (pp->handle);
      g_free (pp);
      g_hash_table_iter_remove (&iter);
    }
}

/* ---- devices ---- */

static gboolean
cuda_open (AiryBackend *backend, GError **error)
{
  CudaBackend *self = g_new0 (CudaBackend, 1);
  cudaError_t status = cudaGetDeviceCount (&self->count);
  int i;

  backend->priv = self;
  g_mutex_init (&self->lock);
  self->last = g_ptr_array_new ();
  self->registered = g_hash_table_new (NULL, NULL);
  self->plans = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (status != cudaSuccess || self->count == 0)
    {
      /* cudaErrorInsufficientDriver (35) and cudaErrorNoDevice (100) both
       * mean "not here": the CPU backend runs instead. */
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_NO_DEVICE, _("no CUDA device: %s"),
                   status != cudaSuccess ? cudaGetErrorString (status) : _("the driver reports none"));
      self->count = 0;
      cudaGetLastError ();
      return FALSE;
    }
  self->props = g_new0 (struct cudaDeviceProp, self->count);
  self->peak = g_new0 (guint64, self->count);
  for (i = 0; i < self->count; i++)
    if (!CHECK (cudaGetDeviceProperties (&self->props[i], i), error))
      return FALSE;
  return TRUE;
}

static void
free_last (CudaBackend *self)
{
  guint i;

  for (i = 0; i < self->last->len; i++)
    {
      ResultPart *p = g_ptr_array_index (self->last, i);
      cudaSetDevice (p->device);
      cudaFree (p->data);
      g_free (p);
    }
  g_ptr_array_set_size (self->last, 0);
}

static void
cuda_close (AiryBackend *backend)
{
  CudaBackend *self = backend->priv;
  int i;

  if (self == NULL)
    return;
  free_last (self);
  pupil_unref (self->pupil);
  plans_destroy (self, -1);
  for (i = 0; i < self->n_comms; i++)
    ncclCommDestroy (self->comms[i]);
  g_free (self->comms);
  g_free (self->comm_devices);
  g_ptr_array_unref (self->last);
  g_hash_table_unref (self->registered);
  g_hash_table_unref (self->plans);
  g_free (self->props);
  g_free (self->peak);
  g_free (self);
  backend->priv = NULL;
}

static guint
cuda_n_devices (AiryBackend *backend)
{
  CudaBackend *self = backend->priv;
  return self ? (guint) self->count : 0;
}

static void
cuda_device_info (AiryBackend *backend, guint device, AiryDeviceInfo *info)
{
  CudaBackend *self = backend->priv;
  const struct cudaDeviceProp *p = &self->props[device];
  int nccl = 0;

  ncclGetVersion (&nccl);
  info->name = g_strdup (p->name);
  info->memory = p->totalGlobalMem;
  info->detail = g_strdup_printf ("compute %d.%d, %d SMs, NCCL %d, cuFFT %d", p->major, p->minor,
                                  p->multiProcessorCount, nccl, CUFFT_VERSION);
}

static guint64
cuda_free_memory (AiryBackend *backend, guint device)
{
  size_t free_b = 0, total = 0;

  if (cudaSetDevice ((int) device) != cudaSuccess || cudaMemGetInfo (&free_b, &total) != cudaSuccess)
    return 0;
  return free_b;
}

/* ---- a run ---- */

/* What the pupil data depend on: the system, and the files it reads. */
static char *
pupil_key (AiryPlan *plan)
{
  g_autofree char *json = airy_system_to_json (plan->system);
  GString *key = g_string_new (json);
  const char *base = airy_system_get_base_dir (plan->system);
  guint i, k, n;

  for (i = 0; i < plan->chain->len; i++)
    {
      AiryElement *e = g_ptr_array_index (plan->chain, i);
      g_autofree GParamSpec **specs = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &n);

      for (k = 0; k < n; k++)
        {
          const char *file;
          g_autofree char *path = NULL;
          GStatBuf st;

          if (!(airy_param_spec_get_flags (specs[k]) & AIRY_PARAM_FILE)
              || (file = airy_element_get_string (e, specs[k]->name)) == NULL || *file == '\0')
            continue;
          path = g_path_is_absolute (file) || base == NULL ? g_strdup (file) : g_build_filename (base, file, NULL);
          if (g_stat (path, &st) == 0)
            g_string_append_printf (key, "|%s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, path,
                                    (gint64) st.st_mtime, (gint64) st.st_size);
        }
    }
  return g_string_free (key, FALSE);
}

static Pupil *
pupil_new (AiryPlan *plan, int count, GError **error)
{
  AiryPsfShared *shared = _airy_psf_shared_new (plan, error);
  guint w = plan->psf_width, l;
  gsize n = (gsize) plan->psf_height * w;
  g_autofree float2 *F = NULL;
  g_autofree float *G = NULL;
  Pupil *p;

  if (shared == NULL)
    return NULL;
  p = g_new0 (Pupil, 1);
  p->ref = 1;
  p->n_lambda = plan->spectrum->n;
  _airy_psf_shared_band (shared, &p->y0, &p->rows);
  p->nband = (gsize) p->rows * w;
  p->F = g_new (float2, p->n_lambda * p->nband);
  p->G = g_new (float, p->n_lambda * p->nband);
  p->scale = g_new (float, p->n_lambda);
  F = g_new (float2, n);
  G = g_new (float, n);
  for (l = 0; l < p->n_lambda; l++)
    {
      _airy_psf_shared_full (shared, l, (fftwf_complex *) F, G);
      memcpy (p->F + l * p->nband, F + (gsize) p->y0 * w, p->nband * sizeof (float2));
      memcpy (p->G + l * p->nband, G + (gsize) p->y0 * w, p->nband * sizeof (float));
      p->scale[l] = _airy_psf_shared_scale (shared, l);
    }
  p->z0 = _airy_psf_shared_z0 (shared);
  p->count = count;
  p->dF = g_new0 (float2 *, count);
  p->dG = g_new0 (float *, count);
  _airy_psf_shared_free (shared);
  return p;
}

/* The device's copy of the pupil data, made once. */
static gboolean
pupil_upload (CudaBackend *self, Pupil *p, int device, GError **error)
{
  gboolean ok = TRUE;

  g_mutex_lock (&self->lock);
  if (p->dF[device] == NULL)
    {
      ok = CHECK (cudaMalloc ((void **) &p->dF[device], p->n_lambda * p->nband * sizeof (float2)), error)
           && CHECK (cudaMalloc ((void **) &p->dG[device], p->n_lambda * p->nband * sizeof (float)), error)
           && CHECK (cudaMemcpy (p->dF[device], p->F, p->n_lambda * p->nband * sizeof (float2), cudaMemcpyHostToDevice), error)
           && CHECK (cudaMemcpy (p->dG[device], p->G, p->n_lambda * p->nband * sizeof (float), cudaMemcpyHostToDevice), error);
      if (!ok)
        {
          cudaFree (p->dF[device]);
          cudaFree (p->dG[device]);
          p->dF[device] = NULL;
          p->dG[device] = NULL;
        }
    }
  g_mutex_unlock (&self->lock);
  return ok;
}

static gboolean
cuda_prepare (AiryBackend *backend, AiryPlan *plan, GError **error)
{
  CudaRun *run;
  guint i;

  run = g_new0 (CudaRun, 1);
  run->backend = backend->priv;
  plan->backend_data = run;
  run->slots = g_new0 (Slot, plan->n_slots);
  for (i = 0; i < plan->n_slots; i++)
    run->slots[i].backend = run->backend;
  /* every chain runs on the GPU: the fused path when it applies (an
   * objective, pixelwise masks, an FF lens), else the operation list */
  if (!_airy_psf_fast_supported (plan) || plan->in_height != plan->psf_height || plan->in_width != plan->psf_width)
    {
      AiryOp *first;

      run->ops = _airy_ops_compile (plan, error);
      if (run->ops == NULL)
        return FALSE;
      first = g_ptr_array_index (run->ops->ops, 0);
      run->z0 = first->kind == AIRY_OP_OBJECTIVE ? first->z : 0.0;
      return _airy_plan_alloc_outputs (plan, error);
    }

  /* the pupil data of the last run when the optics are the same */
  {
    CudaBackend *self = run->backend;
    g_autofree char *key = pupil_key (plan);
    Pupil *p = NULL;

    g_mutex_lock (&self->lock);
    if (self->pupil && g_str_equal (self->pupil->key, key))
      {
        p = self->pupil;
        g_atomic_int_inc (&p->ref);
      }
    g_mutex_unlock (&self->lock);
    if (p == NULL)
      {
        if ((p = pupil_new (plan, self->count, error)) == NULL)
          return FALSE;
        p->key = g_steal_pointer (&key);
        g_atomic_int_inc (&p->ref);      /* the cache's and this run's */
        g_mutex_lock (&self->lock);
        pupil_unref (self->pupil);
        self->pupil = p;
        g_mutex_unlock (&self->lock);
      }
    run->pupil = p;
    run->scale = p->scale;
    run->z0 = p->z0;
    run->y0 = p->y0;
    run->rows = p->rows;
  }
  return _airy_plan_alloc_outputs (plan, error);
}

/* cuFFT plans come from the backend's pool, so that a run of the same
 * shapes as the last one plans nothing; they go back in slot_free(). */
static gboolean
plan_take (Slot *s, cufftHandle *out, int rank, int *n, int *embed, int stride, int dist, cufftType type,
           int batch, GError **error)
{
  char *key = g_strdup_printf ("%d|%d|%d×%d|%d|%d|%d|%d|%d", s->device, rank, n[0], rank > 1 ? n[1] : 0,
                               embed != NULL, stride, dist, (int) type, batch);
  PooledPlan *pp;

  if (s->taken == NULL)
    {
      s->taken = g_ptr_array_new ();
      s->taken_handles = g_array_new (FALSE, FALSE, sizeof (cufftHandle));
    }
  g_mutex_lock (&s->backend->lock);
  pp = g_hash_table_lookup (s->backend->plans, key);
  if (pp)
    g_hash_table_steal (s->backend->plans, key);
  g_mutex_unlock (&s->backend->lock);
  if (pp)
    {
      *out = pp->handle;
      g_free (pp);
    }
  else if (!CUFFT (cufftPlanMany (out, rank, n, embed, stride, dist, embed, stride, dist, type, batch), error))
    {
      g_free (key);
      return FALSE;
    }
  g_ptr_array_add (s->taken, key);
  g_array_append_val (s->taken_handles, *out);
  return CUFFT (cufftSetStream (*out, s->stream), error);
}

static gboolean
plan_many (Slot *s, cufftHandle *plan, guint h, guint w, cufftType type, guint batch, GError **error)
{
  int n[2] = { (int) h, (int) w };

  return batch == 0 || plan_take (s, plan, 2, n, NULL, 1, 0, type, (int) batch, error);
}

/* The slot's plans back into the pool, replacing the device's older ones
 * (so the pool never holds more than one run's plans per device). */
static void
plans_return (Slot *s)
{
  guint i;

  if (s->taken == NULL)
    return;
  g_mutex_lock (&s->backend->lock);
  plans_destroy (s->backend, s->device);
  for (i = 0; i < s->taken->len; i++)
    {
      PooledPlan *pp = g_new (PooledPlan, 1);
      char *key = g_ptr_array_index (s->taken, i);

      pp->device = s->device;
      pp->handle = g_array_index (s->taken_handles, cufftHandle, i);
      if (g_hash_table_contains (s->backend->plans, key))
        {
          /* two of a kind: keep one */
          cufftDestroy (pp->handle);
          g_free (pp);
          g_free (key);
        }
      else
        g_hash_table_insert (s->backend->plans, key, pp);
    }
  g_mutex_unlock (&s->backend->lock);
  g_ptr_array_free (s->taken, FALSE);
  g_array_unref (s->taken_handles);
  s->taken = NULL;
  s->taken_handles = NULL;
}

/* The pruned 2-D transform of `batch` row-interleaved planes (u[y][b][x]):
 * rows: the pupil's rows of all planes, one contiguous block, in place;
 * cols: every column of every plane (stride batch·w), field → field2. */
static gboolean
pruned_plans (AiryPlan *plan, Slot *s, guint batch, cufftHandle *rows, cufftHandle *cols, GError **error)
{
  CudaRun *run = plan->backend_data;
  int nw[1] = { (int) plan->psf_width }, nh[1] = { (int) plan->psf_height };
  int stride = (int) (batch * plan->psf_width);

  if (batch == 0)
    return TRUE;
  return plan_take (s, rows, 1, nw, NULL, 1, 0, CUFFT_C2C, (int) (run->rows * batch), error)
         && plan_take (s, cols, 1, nh, nh, stride, 1, CUFFT_C2C, stride, error);
}

static gboolean
upload (void **dst, const void *src, gsize bytes, cudaStream_t stream, GError **error)
{
  return CHECK (cudaMalloc (dst, bytes), error)
         && CHECK (cudaMemcpyAsync (*dst, src, bytes, cudaMemcpyHostToDevice, stream), error);
}

/* The operation list on this device: its factors, scales and grids, one
 * cuFFT plan per transform (all wavelengths in one batch), two fields of
 * the largest shape. */
static gboolean
slot_alloc_ops (AiryPlan *plan, Slot *s, GError **error)
{
  CudaRun *run = plan->backend_data;
  guint L = s->n_lambda, i, l;
  g_autofree float *weights = g_new (float, L);

  s->n_ops = run->ops->ops->len;
  s->op_factor = g_new0 (void *, s->n_ops);
  s->op_phase = g_new0 (float *, s->n_ops);
  s->op_scale = g_new0 (float2 *, s->n_ops);
  s->op_geom = g_new0 (double *, s->n_ops);
  s->op_plan = g_new0 (cufftHandle, s->n_ops);
  for (l = 0; l < L; l++)
    weights[l] = (float) plan->spectrum->weights[l];
  if (!CHECK (cudaMalloc ((void **) &s->ga, run->ops->max_size * sizeof (float2)), error)
      || !CHECK (cudaMalloc ((void **) &s->gb, run->ops->max_size * sizeof (float2)), error)
      || !CHECK (cudaMalloc ((void **) &s->sums, L * sizeof (double)), error)
      || !upload ((void **) &s->weights, weights, L * sizeof (float), s->stream, error))
    return FALSE;
  for (i = 0; i < s->n_ops; i++)
    {
      AiryOp *op = g_ptr_array_index (run->ops->ops, i);
      gsize n = (gsize) L * op->height * op->width;

      if (op->factor && !upload (&s->op_factor[i], op->factor, n * sizeof (float2), s->stream, error))
        return FALSE;
      if (op->phase && !upload ((void **) &s->op_phase[i], op->phase, n * sizeof (float), s->stream, error))
        return FALSE;
      if (op->scale && !upload ((void **) &s->op_scale[i], op->scale, L * sizeof (float2), s->stream, error))
        return FALSE;
      if (op->lambda
          && (!CHECK (cudaMalloc ((void **) &s->op_geom[i], 3 * L * sizeof (double)), error)
              || !CHECK (cudaMemcpyAsync (s->op_geom[i], op->lambda, L * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)
              || !CHECK (cudaMemcpyAsync (s->op_geom[i] + L, op->dy, L * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)
              || !CHECK (cudaMemcpyAsync (s->op_geom[i] + 2 * L, op->dx, L * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)))
        return FALSE;
      if (op->kind == AIRY_OP_FFT && !plan_many (s, &s->op_plan[i], op->height, op->width, CUFFT_C2C, L, error))
        return FALSE;
    }
  /* the host arrays above are pageable: the copies are done on return,
   * but wait for them before the list's buffers can be freed */
  return CHECK (cudaStreamSynchronize (s->stream), error);
}

static gboolean
slot_alloc (AiryPlan *plan, Slot *s, const AiryChunk *chunk, GError **error)
{
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  gsize np = plan->imaging ? (gsize) plan->pad_height * plan->pad_width : 0;
  gsize nspec = plan->imaging ? (gsize) plan->pad_height * (plan->pad_width / 2 + 1) : 0;
  gsize nvol = plan->imaging ? (gsize) plan->vol_height * plan->vol_width : 0;
  gboolean varying = plan->imaging && plan->sample.kind != AIRY_SAMPLE_CONSTANT;
  CudaRun *run = plan->backend_data;
  gsize nband = (gsize) run->rows * plan->psf_width;
  gsize fixed, per_plane, free_b = 0, total = 0;

  /* budget the device before allocating: fixed buffers, then as many
   * planes per batch as fit (cuFFT's work area counted as one more copy) */
  fixed = (run->ops ? _airy_ops_bytes (run->ops) + 3 * run->ops->max_size * sizeof (float2)
                    : run->pupil->dF[s->device] ? 0 : s->n_lambda * nband * (sizeof (float2) + sizeof (float)))
          + (plan->reduce ? 0 : (gsize) chunk->count * plan->out_height * plan->out_width * sizeof (float))
          + (plan->reduce && !plan->imaging ? n * sizeof (float) : 0)
          + (plan->imaging ? 2 * nspec * sizeof (float2) + np * sizeof (float) : 0);
  per_plane = n * ((run->ops ? 0 : 3 * sizeof (float2)) + sizeof (float))
              + (plan->imaging ? np * sizeof (float) + 2 * nspec * sizeof (float2) : 0)
              + (varying ? nvol * sizeof (float) + np * sizeof (float) + 2 * nspec * sizeof (float2) : 0);
  if (!CHECK (cudaMemGetInfo (&free_b, &total), error))
    return FALSE;
  if (fixed + per_plane > free_b * 0.9)
    {
      /* the pooled plans of earlier runs go first */
      g_mutex_lock (&run->backend->lock);
      plans_destroy (run->backend, s->device);
      g_mutex_unlock (&run->backend->lock);
      if (!CHECK (cudaMemGetInfo (&free_b, &total), error))
        return FALSE;
    }
  if (fixed + per_plane > free_b * 0.9)
    {
      g_autofree char *need = airy_format_bytes (fixed + per_plane);
      g_autofree char *have = airy_format_bytes (free_b);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("grid.shape: device %d needs at least %s for this run, %s is free"), s->device, need, have);
      return FALSE;
    }
  s->batch = (guint) MIN (MIN (MAX_BATCH, chunk->count), (free_b * 0.9 - fixed) / per_plane);
  s->batch = MAX (s->batch, 1);
  s->rest = chunk->count % s->batch;

  if (!CHECK (cudaMalloc ((void **) &s->inten, s->batch * n * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &s->zbuf, s->batch * sizeof (float)), error))
    return FALSE;
  if (run->ops ? !slot_alloc_ops (plan, s, error)
               : (!pupil_upload (run->backend, run->pupil, s->device, error)
                  || !CHECK (cudaMalloc ((void **) &s->field, s->batch * n * sizeof (float2)), error)
                  || !CHECK (cudaMemsetAsync (s->field, 0, s->batch * n * sizeof (float2), s->stream), error)
                  || !CHECK (cudaMalloc ((void **) &s->field2, s->batch * n * sizeof (float2)), error)))
    return FALSE;
  if (!plan->reduce
      && !CHECK (cudaMalloc ((void **) &s->out, MAX (chunk->count, 1) * (gsize) plan->out_height * plan->out_width * sizeof (float)), error))
    return FALSE;
  if (plan->reduce && !plan->imaging
      && (!CHECK (cudaMalloc ((void **) &s->img, n * sizeof (float)), error)
          || !CHECK (cudaMemsetAsync (s->img, 0, n * sizeof (float), s->stream), error)))
    return FALSE;
  if (plan->imaging)
    {
      if (!CHECK (cudaMalloc ((void **) &s->pad, s->batch * np * sizeof (float)), error)
          || !CHECK (cudaMalloc ((void **) &s->spec, s->batch * nspec * sizeof (float2)), error)
          || !CHECK (cudaMalloc ((void **) &s->acc, nspec * sizeof (float2)), error)
          || !CHECK (cudaMemsetAsync (s->acc, 0, nspec * sizeof (float2), s->stream), error)
          || !CHECK (cudaMalloc ((void **) &s->vol, s->batch * nvol * sizeof (float)), error))
        return FALSE;
      if (varying)
        {
          if (!CHECK (cudaMalloc ((void **) &s->vspec, s->batch * nspec * sizeof (float2)), error))
            return FALSE;
        }
      else if (!CHECK (cudaMalloc ((void **) &s->vconst, nspec * sizeof (float2)), error))
        return FALSE;
    }
  if (!run->ops)
    {
      s->F = run->pupil->dF[s->device];     /* borrowed from the pupil cache */
      s->G = run->pupil->dG[s->device];
    }
  if (!run->ops
      && (!pruned_plans (plan, s, s->batch, &s->rows, &s->cols, error)
          || !pruned_plans (plan, s, s->rest, &s->rows_rest, &s->cols_rest, error)))
    return FALSE;
  if (plan->imaging
      && (!plan_many (s, &s->r2c, plan->pad_height, plan->pad_width, CUFFT_R2C, s->batch, error)
          || !plan_many (s, &s->r2c_rest, plan->pad_height, plan->pad_width, CUFFT_R2C, s->rest, error)
          || !plan_many (s, &s->r2c_one, plan->pad_height, plan->pad_width, CUFFT_R2C, 1, error)))
    return FALSE;

  /* what this run took on the device, for `airy-sim bench` */
  {
    size_t now = 0;

    if (!CHECK (cudaMemGetInfo (&now, &total), error))
      return FALSE;
    g_mutex_lock (&run->backend->lock);
    if (free_b > now)
      run->backend->peak[s->device] = MAX (run->backend->peak[s->device], (guint64) (free_b - now));
    g_mutex_unlock (&run->backend->lock);
  }
  return TRUE;
}

static void
slot_free (AiryPlan *plan, Slot *s)
{
  guint i;

  cudaSetDevice (s->device);
  if (s->stream)
    cudaStreamSynchronize (s->stream);
  cudaFree (s->field);
  cudaFree (s->inten);
  cudaFree (s->zbuf);
  cudaFree (s->out);
  cudaFree (s->img);
  cudaFree (s->pad);
  cudaFree (s->spec);
  cudaFree (s->vol);
  cudaFree (s->vspec);
  cudaFree (s->vconst);
  cudaFree (s->acc);
  for (i = 0; i < s->n_ops; i++)
    {
      cudaFree (s->op_factor[i]);
      cudaFree (s->op_phase[i]);
      cudaFree (s->op_scale[i]);
      cudaFree (s->op_geom[i]);
    }
  g_free (s->op_factor);
  g_free (s->op_phase);
  g_free (s->op_scale);
  g_free (s->op_geom);
  g_free (s->op_plan);
  cudaFree (s->ga);
  cudaFree (s->gb);
  cudaFree (s->sums);
  cudaFree (s->weights);
  cudaFree (s->field2);
  plans_return (s);
  if (s->stream)
    cudaStreamDestroy (s->stream);
  memset (s, 0, sizeof *s);
}

/* The sensor of a plane (resampling into out, then the noise chain), on
 * the device, with the CPU's counter-based random numbers. */
static gboolean
sensor_plane (AiryPlan *plan, Slot *s, const float *in, float *out, guint64 stream_id, GError **error)
{
  AiryElement *e = plan->sensor;
  int resample = airy_element_get_enum (e, "resample");
  guint h = plan->imaging ? plan->vol_height : plan->psf_height;
  guint w = plan->imaging ? plan->vol_width : plan->psf_width;
  double dy = plan->imaging ? airy_system_get_spacing (plan->system) : plan->psf_dy;
  double dx = plan->imaging ? airy_system_get_spacing (plan->system) : plan->psf_dx;
  gsize no = (gsize) plan->out_height * plan->out_width;
  AiryNoiseParams noise;

  if (resample == 1)
    {
      if (!CHECK (airy_cuda_launch_block_sum (in, h, w, (unsigned) airy_element_get_int (e, "factor"), out,
                                              plan->out_height, plan->out_width, s->stream), error))
        return FALSE;
    }
  else if (resample == 2 && (plan->out_height != h || plan->out_width != w || plan->out_dy != dy || plan->out_dx != dx))
    {
      double scale = airy_element_get_boolean (e, "sum-preserving") ? plan->out_dy * plan->out_dx / (dy * dx) : 1.0;
      if (!CHECK (airy_cuda_launch_linear (in, h, w, dy, dx, out, plan->out_height, plan->out_width,
                                           plan->out_dy, plan->out_dx, scale, s->stream), error))
        return FALSE;
    }
  else if (!CHECK (cudaMemcpyAsync (out, in, no * sizeof (float), cudaMemcpyDeviceToDevice, s->stream), error))
    return FALSE;
  _airy_sensor_noise (e, stream_id, &noise);
  return CHECK (airy_cuda_launch_noise (out, no, &noise, s->stream), error);
}

static cufftResult
fft_exec (cufftHandle plan, float2 *u, AiryFftSign sign)
{
  return cufftExecC2C (plan, (cufftComplex *) u, (cufftComplex *) u,
                       sign == AIRY_FFT_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE);
}

/* One plane through the operation list: the field ends in s->ga or s->gb,
 * its weighted intensity in out. z: the objective's defocus, on the device. */
static gboolean
ops_plane (AiryPlan *plan, Slot *s, guint b, const float *z, float *out, GError **error)
{
  CudaRun *run = plan->backend_data;
  float2 *u = s->ga, *t = s->gb, *swap;
  guint L = s->n_lambda, h = plan->in_height, w = plan->in_width, i;
  gboolean ok = TRUE;

  for (i = 0; ok && i < s->n_ops; i++)
    {
      AiryOp *op = g_ptr_array_index (run->ops->ops, i);
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
        }
      h = op->height;
      w = op->width;
    }
  return ok && CHECK (airy_cuda_launch_weighted_intensity (u, s->weights, L, (gsize) h * w, out, s->stream), error);
}

static gboolean
cuda_execute (AiryBackend *backend, AiryPlan *plan, const AiryChunk *chunk, GError **error)
{
  CudaRun *run = plan->backend_data;
  Slot *s = &run->slots[chunk->slot];
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  gsize nspec = plan->imaging ? (gsize) plan->pad_height * (plan->pad_width / 2 + 1) : 0;
  gsize nvol = plan->imaging ? (gsize) plan->vol_height * plan->vol_width : 0;
  gboolean varying = plan->imaging && plan->sample.kind != AIRY_SAMPLE_CONSTANT;
  gsize nband = (gsize) run->rows * plan->psf_width;
  g_autofree float *zhost = NULL;
  guint b0, k, l;

  s->device = (int) chunk->device;
  s->n_lambda = plan->spectrum->n;
  if (!CHECK (cudaSetDevice (s->device), error)
      || !CHECK (cudaStreamCreateWithFlags (&s->stream, cudaStreamNonBlocking), error)
      || !slot_alloc (plan, s, chunk, error))
    return FALSE;

  /* a constant sample: one spectrum for every plane */
  if (plan->imaging && !varying)
    {
      if (!CHECK (airy_cuda_launch_fill (s->vol, nvol, (float) plan->sample.value, s->stream), error)
          || !CHECK (airy_cuda_launch_pad (s->vol, plan->vol_height, plan->vol_width, 1, s->pad,
                                           plan->pad_height, plan->pad_width, s->stream), error)
          || !CUFFT (cufftExecR2C (s->r2c_one, s->pad, (cufftComplex *) s->vconst), error))
        return FALSE;
    }

  zhost = g_new (float, s->batch);
  for (b0 = chunk->first; b0 < chunk->first + chunk->count; b0 += s->batch)
    {
      guint nb = MIN (s->batch, chunk->first + chunk->count - b0);
      gboolean direct = !plan->reduce && plan->sensor == NULL && plan->psf == NULL;
      float *target = direct ? s->out + (gsize) (b0 - chunk->first) * n : s->inten;

      if (g_cancellable_set_error_if_cancelled (plan->cancellable, error))
        return FALSE;
      for (k = 0; k < nb; k++)
        zhost[k] = (float) (plan->z[b0 + k] + run->z0);
      if (!CHECK (cudaMemcpyAsync (s->zbuf, zhost, nb * sizeof (float), cudaMemcpyHostToDevice, s->stream), error))
        return FALSE;
      for (k = 0; run->ops && k < nb; k++)
        if (!ops_plane (plan, s, b0 + k, s->zbuf + k, target + k * n, error))
          return FALSE;
      /* the last, smaller batch has its own layout: zero it once */
      if (!run->ops && nb != s->batch
          && !CHECK (cudaMemsetAsync (s->field, 0, nb * n * sizeof (float2), s->stream), error))
        return FALSE;
      for (l = 0; !run->ops && l < s->n_lambda; l++)
        {
          float2 *band = s->field + (gsize) run->y0 * nb * plan->psf_width;

          if (!CHECK (airy_cuda_launch_generate_band (s->F + l * nband, s->G + l * nband, s->zbuf, nb, run->rows,
                                                      plan->psf_width, band, s->stream), error)
              || !CUFFT (cufftExecC2C (nb == s->batch ? s->rows : s->rows_rest, (cufftComplex *) band,
                                       (cufftComplex *) band, CUFFT_FORWARD), error)
              || !CUFFT (cufftExecC2C (nb == s->batch ? s->cols : s->cols_rest, (cufftComplex *) s->field,
                                       (cufftComplex *) s->field2, CUFFT_FORWARD), error)
              || !CHECK (airy_cuda_launch_intensity_interleaved (s->field2, run->scale[l], nb, plan->psf_height,
                                                                 plan->psf_width, target, l > 0, s->stream), error))
            return FALSE;
        }
      if (plan->psf
          && !CHECK (cudaMemcpyAsync (airy_stack_plane (plan->psf, b0), target, nb * n * sizeof (float),
                                      cudaMemcpyDeviceToHost, s->stream), error))
        return FALSE;

      if (plan->imaging)
        {
          if (!CHECK (airy_cuda_launch_pad (target, plan->psf_height, plan->psf_width, nb, s->pad,
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
                    : CHECK (cudaMemcpyAsync (plane, airy_stack_plane (plan->volume, b0 + k), nvol * sizeof (float),
                                              cudaMemcpyHostToDevice, s->stream), error);
                  if (!ok)
                    return FALSE;
                }
              /* the volume planes go through the same padded transform */
              if (!CHECK (airy_cuda_launch_pad (s->vol, plan->vol_height, plan->vol_width, nb, s->pad,
                                                plan->pad_height, plan->pad_width, s->stream), error)
                  || !CUFFT (cufftExecR2C (nb == s->batch ? s->r2c : s->r2c_rest, s->pad, (cufftComplex *) s->vspec), error))
                return FALSE;
            }
          if (!CHECK (airy_cuda_launch_mac (s->spec, varying ? (void *) s->vspec : (void *) s->vconst, varying, nb,
                                            nspec, s->acc, s->stream), error))
            return FALSE;
        }
      else if (plan->reduce)
        {
          if (!CHECK (airy_cuda_launch_sum_planes (target, nb, n, s->img, s->stream), error))
            return FALSE;
        }
      else if (plan->sensor)
        {
          for (k = 0; k < nb; k++)
            if (!sensor_plane (plan, s, target + k * n,
                               s->out + (gsize) (b0 - chunk->first + k) * plan->out_height * plan->out_width,
                               b0 + k, error))
              return FALSE;
        }
      else if (!direct
               && !CHECK (cudaMemcpyAsync (s->out + (gsize) (b0 - chunk->first) * n, target, nb * n * sizeof (float),
                                           cudaMemcpyDeviceToDevice, s->stream), error))
        return FALSE;

      /* progress per batch, once the device has done it */
      if (!CHECK (cudaStreamSynchronize (s->stream), error))
        return FALSE;
      for (k = 0; k < nb; k++)
        _airy_plan_plane_done (plan);
    }
  return TRUE;
}

/* One all-reduce of the per-device sums, with NCCL communicators made once
 * per device set and kept. */
static gboolean
cuda_all_reduce (AiryBackend *backend, AiryPlan *plan, GError **error)
{
  CudaBackend *self = backend->priv;
  CudaRun *run = plan->backend_data;
  gsize count = plan->imaging ? 2 * (gsize) plan->pad_height * (plan->pad_width / 2 + 1)
                              : (gsize) plan->psf_height * plan->psf_width;
  g_autofree int *devices = g_new (int, plan->n_slots);
  gboolean same = self->n_comms == (int) plan->n_slots;
  guint i;

  for (i = 0; i < plan->n_slots; i++)
    {
      devices[i] = run->slots[i].device;
      same = same && self->comm_devices[i] == devices[i];
    }
  if (!same)
    {
      for (i = 0; i < (guint) self->n_comms; i++)
        ncclCommDestroy (self->comms[i]);
      g_free (self->comms);
      g_free (self->comm_devices);
      self->comms = g_new0 (ncclComm_t, plan->n_slots);
      self->comm_devices = g_memdup2 (devices, plan->n_slots * sizeof (int));
      self->n_comms = 0;
      if (!NCCL (ncclCommInitAll (self->comms, (int) plan->n_slots, devices), error))
        return FALSE;
      self->n_comms = (int) plan->n_slots;
    }
  if (!NCCL (ncclGroupStart (), error))
    return FALSE;
  for (i = 0; i < plan->n_slots; i++)
    {
      Slot *s = &run->slots[i];
      void *buf = plan->imaging ? (void *) s->acc : (void *) s->img;

      if (!CHECK (cudaSetDevice (s->device), error)
          || !NCCL (ncclAllReduce (buf, buf, count, ncclFloat, ncclSum, self->comms[i], s->stream), error))
        {
          ncclGroupEnd ();
          return FALSE;
        }
    }
  if (!NCCL (ncclGroupEnd (), error))
    return FALSE;
  for (i = 0; i < plan->n_slots; i++)
    if (!CHECK (cudaSetDevice (run->slots[i].device), error)
        || !CHECK (cudaStreamSynchronize (run->slots[i].stream), error))
      return FALSE;
  return TRUE;
}

static gboolean
cuda_finish (AiryBackend *backend, AiryPlan *plan, GError **error)
{
  CudaBackend *self = backend->priv;
  CudaRun *run = plan->backend_data;
  Slot *s0 = &run->slots[0];
  gsize no = (gsize) plan->out_height * plan->out_width;
  guint i;

  g_mutex_lock (&self->lock);
  free_last (self);
  g_mutex_unlock (&self->lock);

  if (!plan->reduce)
    {
      /* each device's planes come home; they also stay on the device */
      for (i = 0; i < plan->n_slots; i++)
        {
          Slot *s = &run->slots[i];
          ResultPart *part;

          if (plan->chunks[i].count == 0)
            continue;
          if (!CHECK (cudaSetDevice (s->device), error)
              || !CHECK (cudaMemcpy (airy_stack_plane (plan->out, plan->chunks[i].first), s->out,
                                     plan->chunks[i].count * no * sizeof (float), cudaMemcpyDeviceToHost), error))
            return FALSE;
          part = g_new0 (ResultPart, 1);
          *part = (ResultPart) { s->device, s->out, plan->chunks[i].first, plan->chunks[i].count,
                                 plan->out_width, plan->out_height };
          s->out = NULL;
          g_mutex_lock (&self->lock);
          g_ptr_array_add (self->last, part);
          g_mutex_unlock (&self->lock);
        }
      _airy_plan_set_metadata (plan);
      return TRUE;
    }

  /* one image, made on the first device */
  {
    guint h = plan->imaging ? plan->vol_height : plan->psf_height;
    guint w = plan->imaging ? plan->vol_width : plan->psf_width;
    float *image = NULL, *shown = NULL;
    ResultPart *part;

    if (!CHECK (cudaSetDevice (s0->device), error)
        || !CHECK (cudaMalloc ((void **) &image, (gsize) h * w * sizeof (float)), error)
        || !CHECK (cudaMalloc ((void **) &shown, no * sizeof (float)), error))
      {
        cudaFree (image);
        return FALSE;
      }
    if (plan->imaging)
      {
        /* the inverse transform of Σ_z V̂_z·P̂_z, then the "same" crop */
        if (!plan_many (s0, &s0->c2r, plan->pad_height, plan->pad_width, CUFFT_C2R, 1, error)
            || !CUFFT (cufftExecC2R (s0->c2r, (cufftComplex *) s0->acc, s0->pad), error)
            || !CHECK (airy_cuda_launch_crop (s0->pad, plan->pad_width, h, w, plan->psf_height / 2, plan->psf_width / 2,
                                              1.0f / ((float) plan->pad_height * plan->pad_width), image, s0->stream), error))
          goto fail;
      }
    else if (!CHECK (cudaMemcpyAsync (image, s0->img, (gsize) h * w * sizeof (float), cudaMemcpyDeviceToDevice, s0->stream), error))
      goto fail;
    if (plan->sensor)
      {
        if (!sensor_plane (plan, s0, image, shown, 0, error))
          goto fail;
      }
    else if (!CHECK (cudaMemcpyAsync (shown, image, no * sizeof (float), cudaMemcpyDeviceToDevice, s0->stream), error))
      goto fail;
    plan->out = airy_stack_new (1, plan->out_height, plan->out_width);
    if (!CHECK (cudaMemcpyAsync (plan->out->data, shown, no * sizeof (float), cudaMemcpyDeviceToHost, s0->stream), error)
        || !CHECK (cudaStreamSynchronize (s0->stream), error))
      goto fail;
    cudaFree (image);
    part = g_new0 (ResultPart, 1);
    *part = (ResultPart) { s0->device, shown, 0, 1, plan->out_width, plan->out_height };
    g_mutex_lock (&self->lock);
    g_ptr_array_add (self->last, part);
    g_mutex_unlock (&self->lock);
    _airy_plan_set_metadata (plan);
    return TRUE;

  fail:
    cudaFree (image);
    cudaFree (shown);
    return FALSE;
  }
}

static void
cuda_release (AiryBackend *backend, AiryPlan *plan)
{
  CudaRun *run = plan->backend_data;
  guint i;

  if (run == NULL)
    return;
  for (i = 0; run->slots && i < plan->n_slots; i++)
    if (run->slots[i].stream || run->slots[i].F)
      slot_free (plan, &run->slots[i]);
  pupil_unref (run->pupil);
  g_free (run->slots);
  _airy_ops_free (run->ops);
  g_free (run);
  plan->backend_data = NULL;
}

/* GL interop: plane z of the last result, copied device to device into the
 * GL texture (an R32F 2-D texture of the plane's size) with the GL context
 * current. The texture is registered once; a plane on another GPU than the
 * one driving GL (the first of the run) is copied peer to peer first. */
static gboolean
cuda_gl_copy_slice (AiryBackend *backend, AiryPlan *plan, guint z, guint texture, GError **error)
{
  CudaBackend *self = backend->priv;
  cudaGraphicsResource_t resource;
  cudaArray_t array;
  ResultPart *part = NULL;
  const float *src;
  float *peer = NULL;
  int gl_device;
  gsize bytes;
  guint i;
  gboolean ok;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->last->len; i++)
    {
      ResultPart *p = g_ptr_array_index (self->last, i);
      if (z >= p->first && z < p->first + p->count)
        part = p;
    }
  if (part == NULL || self->last->len == 0)
    {
      g_mutex_unlock (&self->lock);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("z: plane %u is not on a CUDA device"), z);
      return FALSE;
    }
  gl_device = ((ResultPart *) g_ptr_array_index (self->last, 0))->device;
  bytes = (gsize) part->width * part->height * sizeof (float);
  src = part->data + (gsize) (z - part->first) * part->width * part->height;
  ok = CHECK (cudaSetDevice (gl_device), error);
  if (ok && part->device != gl_device)
    {
      ok = CHECK (cudaMalloc ((void **) &peer, bytes), error)
           && CHECK (cudaMemcpyPeer (peer, gl_device, src, part->device, bytes), error);
      src = peer;
    }
  resource = g_hash_table_lookup (self->registered, GUINT_TO_POINTER (texture));
  if (ok && resource == NULL)
    {
      ok = CHECK (cudaGraphicsGLRegisterImage (&resource, texture, GL_TEXTURE_2D,
                                               cudaGraphicsRegisterFlagsWriteDiscard), error);
      if (ok)
        g_hash_table_insert (self->registered, GUINT_TO_POINTER (texture), resource);
    }
  ok = ok && CHECK (cudaGraphicsMapResources (1, &resource, 0), error);
  if (ok)
    {
      ok = CHECK (cudaGraphicsSubResourceGetMappedArray (&array, resource, 0, 0), error)
           && CHECK (cudaMemcpy2DToArray (array, 0, 0, src, part->width * sizeof (float), part->width * sizeof (float),
                                          part->height, cudaMemcpyDeviceToDevice), error);
      cudaGraphicsUnmapResources (1, &resource, 0);
    }
  cudaFree (peer);
  g_mutex_unlock (&self->lock);
  return ok;
}

/* The floor for `airy-sim bench`: batched in-place C2C transforms of the
 * stack's planes, timed with events after one warm-up. */
static guint64
cuda_peak_memory (AiryBackend *backend, guint device)
{
  CudaBackend *self = backend->priv;

  return device < (guint) self->count ? self->peak[device] : 0;
}

static double
cuda_fft_floor (AiryBackend *backend, guint device, guint h, guint w, guint planes, GError **error)
{
  gsize n = (gsize) h * w, free_b = 0, total = 0;
  guint batch, done;
  cufftHandle plan = 0;
  cudaStream_t stream = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  float2 *data = NULL;
  float ms = 0.0f;
  gboolean ok;

  if (!CHECK (cudaSetDevice ((int) device), error) || !CHECK (cudaMemGetInfo (&free_b, &total), error))
    return -1.0;
  batch = (guint) MAX (1, MIN (MIN (planes, MAX_BATCH), free_b / 3 / (n * sizeof (float2))));
  ok = CHECK (cudaStreamCreate (&stream), error)
       && CHECK (cudaMalloc ((void **) &data, batch * n * sizeof (float2)), error)
       && CHECK (cudaMemsetAsync (data, 0, batch * n * sizeof (float2), stream), error)
       && CUFFT (cufftPlanMany (&plan, 2, (int[]) { (int) h, (int) w }, NULL, 1, 0, NULL, 1, 0, CUFFT_C2C, (int) batch), error)
       && CUFFT (cufftSetStream (plan, stream), error)
       && CHECK (cudaEventCreate (&start), error) && CHECK (cudaEventCreate (&stop), error)
       && CUFFT (cufftExecC2C (plan, (cufftComplex *) data, (cufftComplex *) data, CUFFT_FORWARD), error)
       && CHECK (cudaEventRecord (start, stream), error);
  for (done = 0; ok && done < planes; done += batch)
    ok = CUFFT (cufftExecC2C (plan, (cufftComplex *) data, (cufftComplex *) data, CUFFT_FORWARD), error);
  ok = ok && CHECK (cudaEventRecord (stop, stream), error) && CHECK (cudaEventSynchronize (stop), error)
       && CHECK (cudaEventElapsedTime (&ms, start, stop), error);
  /* whole batches were timed: scale to the planes asked for */
  if (ok)
    ms *= (float) planes / (float) (((planes + batch - 1) / batch) * batch);
  if (plan) cufftDestroy (plan);
  if (start) cudaEventDestroy (start);
  if (stop) cudaEventDestroy (stop);
  cudaFree (data);
  if (stream) cudaStreamDestroy (stream);
  return ok ? ms / 1e3 : -1.0;
}

static const AiryBackendOps cuda_ops = {
  .name = "cuda",
  .description = N_("NVIDIA GPUs (CUDA runtime, cuFFT, NCCL)"),
  .open = cuda_open,
  .close = cuda_close,
  .n_devices = cuda_n_devices,
  .device_info = cuda_device_info,
  .free_memory = cuda_free_memory,
  .prepare = cuda_prepare,
  .execute = cuda_execute,
  .all_reduce = cuda_all_reduce,
  .finish = cuda_finish,
  .release = cuda_release,
  .fft_floor = cuda_fft_floor,
  .peak_memory = cuda_peak_memory,
  .gl_copy_slice = cuda_gl_copy_slice,
};

G_MODULE_EXPORT gboolean airy_module_register (const char *path, GError **error);

G_MODULE_EXPORT gboolean
airy_module_register (const char *path,
                      GError    **error)
{
  airy_backend_register (&cuda_ops, path);
  return TRUE;
}

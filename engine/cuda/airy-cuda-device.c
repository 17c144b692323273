#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "airy-cuda-backend-private.h"

/* Devices: opening the backend, what it says about its devices, their
 * memory, the benchmark floor, and the pool of cuFFT plans that a run of
 * the same shapes as the last one takes instead of planning. */

/* ---- devices ---- */

static char *
format_version (int v, gboolean nccl)
{
  if (nccl)
    return v >= 20900 ? g_strdup_printf ("%d.%d.%d", v / 10000, v / 100 % 100, v % 100)
                      : g_strdup_printf ("%d.%d.%d", v / 1000, v / 100 % 10, v % 100);
  /* CUDA runtime and driver: 1000·major + 10·minor; cuFFT: 1000·major + 100·minor + patch */
  return g_strdup_printf ("%d.%d", v / 1000, v % 1000 / 10);
}

gboolean
_airy_cuda_open (AiryBackend *backend, GError **error)
{
  CudaBackend *self = g_new0 (CudaBackend, 1);
  cudaError_t status = cudaGetDeviceCount (&self->count);
  int i;

  backend->priv = self;
  g_mutex_init (&self->lock);
  g_mutex_init (&self->comm_lock);
  g_mutex_init (&self->held_lock);
  self->residents = g_ptr_array_new ();
  self->registered = g_ptr_array_new ();
  self->gl_contexts = g_ptr_array_new_with_free_func (g_free);
  self->plans = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->blocks = g_ptr_array_new ();
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
  self->held = g_new0 (guint64, self->count);
  self->staging = g_new0 (Staging, self->count);
  /* the libraries loaded here, not the headers built against */
  cudaRuntimeGetVersion (&self->runtime_version);
  cudaDriverGetVersion (&self->driver_version);
  cufftGetVersion (&self->cufft_version);
  ncclGetVersion (&self->nccl_version);
  for (i = 0; i < self->count; i++)
    if (!CHECK (cudaGetDeviceProperties (&self->props[i], i), error))
      return FALSE;
  return TRUE;
}

void
_airy_cuda_close (AiryBackend *backend)
{
  CudaBackend *self = backend->priv;
  int i, k;

  if (self == NULL)
    return;
  _airy_cuda_residents_release_all (self);
  _airy_cuda_pupil_unref (self->pupil);
  _airy_cuda_plans_destroy (self, -1, NULL);
  _airy_blocks_trim (self->blocks, -1, &_airy_cuda_block_ops, self);
  _airy_comms_clear (&self->comms, &_airy_cuda_comm_ops, NULL, FALSE);
  _airy_gl_registrations_release (self->registered, NULL, &_airy_cuda_gl_registration_ops, NULL);
  for (i = 0; i < self->count; i++)
    for (k = 0; k < STAGING_PIECES; k++)
      if (self->staging[i].host[k])
        cudaFreeHost (self->staging[i].host[k]);
  g_ptr_array_unref (self->residents);
  g_ptr_array_unref (self->registered);
  g_ptr_array_unref (self->gl_contexts);
  g_hash_table_unref (self->plans);
  g_ptr_array_unref (self->blocks);
  g_free (self->props);
  g_free (self->peak);
  g_free (self->held);
  g_free (self->staging);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->comm_lock);
  g_mutex_clear (&self->held_lock);
  g_free (self);
  backend->priv = NULL;
}

guint
_airy_cuda_n_devices (AiryBackend *backend)
{
  CudaBackend *self = backend->priv;
  return self ? (guint) self->count : 0;
}

void
_airy_cuda_device_info (AiryBackend *backend, guint device, AiryDeviceInfo *info)
{
  CudaBackend *self = backend->priv;
  const struct cudaDeviceProp *p = &self->props[device];
  g_autofree char *driver = format_version (self->driver_version, FALSE);
  g_autofree char *runtime = format_version (self->runtime_version, FALSE);
  g_autofree char *nccl = format_version (self->nccl_version, TRUE);

  info->name = g_strdup (p->name);
  info->memory = p->totalGlobalMem;
  info->detail = g_strdup_printf ("compute %d.%d, %d SMs, driver %s, runtime %s, cuFFT %d.%d.%d, NCCL %s",
                                  p->major, p->minor, p->multiProcessorCount, driver, runtime,
                                  self->cufft_version / 1000, self->cufft_version / 100 % 10,
                                  self->cufft_version % 100, nccl);
}

guint64
_airy_cuda_free_memory (AiryBackend *backend, guint device)
{
  size_t free_b = 0, total = 0;

  if (cudaSetDevice ((int) device) != cudaSuccess || cudaMemGetInfo (&free_b, &total) != cudaSuccess)
    {
      cudaGetLastError ();
      return 0;
    }
  return free_b;
}

guint64
_airy_cuda_peak_memory (AiryBackend *backend, guint device)
{
  CudaBackend *self = backend->priv;

  return device < (guint) self->count ? self->peak[device] : 0;
}

guint64
_airy_cuda_counter (AiryBackend *backend, const char *name)
{
  CudaBackend *self = backend->priv;

  if (g_str_equal (name, "pupil-builds"))
    return (guint) g_atomic_int_get (&self->pupil_builds);
  if (g_str_equal (name, "pupil-uploads"))
    return (guint) g_atomic_int_get (&self->pupil_uploads);
  if (g_str_equal (name, "buffers-allocated"))
    return (guint) g_atomic_int_get (&self->allocations);
  if (g_str_equal (name, "convolutions"))
    return (guint) g_atomic_int_get (&self->convolutions);
  return 0;
}

/* The floor for `airy-sim bench`: batched in-place C2C transforms of the
 * stack's planes, timed with events after one warm-up. */
double
_airy_cuda_fft_floor (AiryBackend *backend, guint device, guint h, guint w, guint planes, GError **error)
{
  gsize n = (gsize) h * w, free_b = 0, total = 0, work = 0;
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
       && CUFFT (cufftCreate (&plan), error)
       && _airy_cuda_make_plan (plan, &(PlanSpec) { NULL, 2, { h, w }, FALSE, 1, 0, CUFFT_C2C, batch }, &work, error)
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

/* The PCIe floor for `airy-sim bench --resident`: `bytes` from the device
 * into pinned host memory with bare cudaMemcpyAsync calls, timed with
 * events after one warm-up, in pieces of at most 256 MiB (the rate does
 * not depend on the piece beyond a few MiB), scaled to `bytes`. */
double
_airy_cuda_download_floor (AiryBackend *backend, guint device, guint64 bytes, GError **error)
{
  gsize piece = (gsize) MAX (1, MIN (bytes, (guint64) 256 << 20));
  guint64 pieces = (bytes + piece - 1) / piece, k;
  cudaStream_t stream = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  void *src = NULL, *dst = NULL;
  float ms = 0.0f;
  gboolean ok;

  ok = CHECK (cudaSetDevice ((int) device), error)
       && CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking), error)
       && CHECK (cudaMalloc (&src, piece), error)
       && CHECK (cudaMemsetAsync (src, 0, piece, stream), error)
       && CHECK (cudaHostAlloc (&dst, piece, cudaHostAllocDefault), error)
       && CHECK (cudaEventCreate (&start), error) && CHECK (cudaEventCreate (&stop), error)
       && CHECK (cudaMemcpyAsync (dst, src, piece, cudaMemcpyDeviceToHost, stream), error)
       && CHECK (cudaEventRecord (start, stream), error);
  for (k = 0; ok && k < pieces; k++)
    ok = CHECK (cudaMemcpyAsync (dst, src, piece, cudaMemcpyDeviceToHost, stream), error);
  ok = ok && CHECK (cudaEventRecord (stop, stream), error) && CHECK (cudaEventSynchronize (stop), error)
       && CHECK (cudaEventElapsedTime (&ms, start, stop), error);
  if (start) cudaEventDestroy (start);
  if (stop) cudaEventDestroy (stop);
  if (stream) cudaStreamSynchronize (stream);
  cudaFree (src);
  if (dst) cudaFreeHost (dst);
  if (stream) cudaStreamDestroy (stream);
  return ok ? ms / 1e3 * ((double) bytes / ((double) pieces * piece)) : -1.0;
}

/* ---- cuFFT plans: pooled, one work area per slot ---- */

/* Destroys the pooled plans of one device (-1: all) but those whose key is
 * in keep; with the lock held. */
void
_airy_cuda_plans_destroy (CudaBackend *self, int device, GPtrArray *keep)
{
  GHashTableIter iter;
  gpointer key, value;
  guint i;

  g_hash_table_iter_init (&iter, self->plans);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      PooledPlan *pp = value;
      gboolean kept = FALSE;

      if (device >= 0 && pp->device != device)
        continue;
      for (i = 0; keep && i < keep->len && !kept; i++)
        kept = g_str_equal (g_ptr_array_index (keep, i), key);
      if (kept)
        continue;
      cudaSetDevice (pp->device);
      cufftDestroy (pp->handle);
      g_free (pp);
      g_hash_table_iter_remove (&iter);
    }
}

static char *
plan_key (int device, const PlanSpec *p)
{
  return g_strdup_printf ("%d|%d|%lld×%lld|%d|%lld|%lld|%d|%lld", device, p->rank, p->n[0], p->rank > 1 ? p->n[1] : 0,
                          p->embed, p->stride, p->dist, (int) p->type, p->batch);
}

void
_airy_cuda_spec_add (GArray *specs, cufftHandle *dst, int rank, guint n0, guint n1, gboolean embed, guint64 stride,
                     guint64 dist, cufftType type, guint64 batch)
{
  PlanSpec p = { dst, rank, { n0, n1 }, embed, (long long) stride, (long long) dist, type, (long long) batch };

  if (batch > 0)
    g_array_append_val (specs, p);
}

/* A batched plan in 64-bit sizes (airy-cuda-private.h: _airy_fft_span):
 * the 32-bit cufftMakePlanMany fails past 2³¹ − 1 elements. */
gboolean
_airy_cuda_make_plan (cufftHandle handle, const PlanSpec *spec, size_t *work, GError **error)
{
  long long n[2] = { spec->n[0], spec->n[1] };
  long long *embed = spec->embed ? n : NULL;
  long long stride = spec->embed ? spec->stride : 1, dist = spec->embed ? spec->dist : 0;

  return CUFFT (cufftMakePlanMany64 (handle, spec->rank, n, embed, stride, dist, embed, stride, dist, spec->type,
                                     spec->batch, work), error);
}

GPtrArray *
_airy_cuda_spec_keys (int device, GArray *specs)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  guint i;

  for (i = 0; i < specs->len; i++)
    g_ptr_array_add (keys, plan_key (device, &g_array_index (specs, PlanSpec, i)));
  return keys;
}

void
_airy_cuda_taken_free (TakenPlan *t)
{
  g_free (t->key);
  g_free (t);
}

/* A plan from the backend's pool (a run of the same shapes as the last
 * one plans nothing), or made without a work area of its own; it goes back
 * in slot_free(). */
static gboolean
plan_take (Slot *s, const PlanSpec *spec, GError **error)
{
  char *key = plan_key (s->device, spec);
  TakenPlan *t;
  PooledPlan *pp;
  cufftHandle h = 0;
  size_t work = 0;

  g_mutex_lock (&s->backend->lock);
  {
    gpointer pool_key = NULL;

    if (!g_hash_table_steal_extended (s->backend->plans, key, &pool_key, (gpointer *) &pp))
      pp = NULL;
    g_free (pool_key);
  }
  g_mutex_unlock (&s->backend->lock);
  if (pp)
    {
      h = pp->handle;
      work = pp->work;
      g_free (pp);
    }
  else if (!CUFFT (cufftCreate (&h), error)
           || !CUFFT (cufftSetAutoAllocation (h, 0), error)
           || !_airy_cuda_make_plan (h, spec, &work, error))
    {
      if (h)
        cufftDestroy (h);
      g_free (key);
      return FALSE;
    }
  t = g_new (TakenPlan, 1);
  t->key = key;
  t->handle = h;
  t->work = work;
  g_ptr_array_add (s->taken, t);
  *spec->dst = h;
  s->work_bytes = MAX (s->work_bytes, work);
  return CUFFT (cufftSetStream (h, s->stream), error);
}

/* All the slot's plans share one work area: they run one after another on
 * the slot's stream. */
gboolean
_airy_cuda_slot_plans (Slot *s, GArray *specs, GError **error)
{
  guint i;

  for (i = 0; i < specs->len; i++)
    if (!plan_take (s, &g_array_index (specs, PlanSpec, i), error))
      return FALSE;
  if (s->work_bytes > 0 && !CHECK (cudaMalloc (&s->work, s->work_bytes), error))
    return FALSE;
  for (i = 0; i < s->taken->len; i++)
    if (!CUFFT (cufftSetWorkArea (((TakenPlan *) g_ptr_array_index (s->taken, i))->handle, s->work), error))
      return FALSE;
  return TRUE;
}

/* The slot's plans back into the pool, replacing the device's older ones
 * (so the pool never holds more than one run's plans per device). */
void
_airy_cuda_plans_return (Slot *s)
{
  guint i;

  if (s->taken == NULL)
    return;
  g_mutex_lock (&s->backend->lock);
  _airy_cuda_plans_destroy (s->backend, s->device, NULL);
  for (i = 0; i < s->taken->len; i++)
    {
      TakenPlan *t = g_ptr_array_index (s->taken, i);
      PooledPlan *pp;

      if (g_hash_table_contains (s->backend->plans, t->key))
        {
          /* two of a kind: keep one */
          cufftDestroy (t->handle);
          continue;
        }
      pp = g_new (PooledPlan, 1);
      pp->device = s->device;
      pp->handle = t->handle;
      pp->work = t->work;
      g_hash_table_insert (s->backend->plans, g_steal_pointer (&t->key), pp);
    }
  g_mutex_unlock (&s->backend->lock);
  g_clear_pointer (&s->taken, g_ptr_array_unref);
}

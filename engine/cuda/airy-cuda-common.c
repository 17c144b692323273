#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "airy-cuda-backend-private.h"

/* The pieces every part of the CUDA backend uses: the check path of every
 * CUDA, cuFFT and NCCL call, the backend's holdings per device, the device
 * budget, and the host transfers through pinned staging buffers. */

/* ---- checks ---- */

static const char *
gpu_error_string (AiryGpuApi api, int status)
{
  switch (api)
    {
    case AIRY_GPU_CUDA:  return cudaGetErrorString ((cudaError_t) status);
    case AIRY_GPU_NCCL:  return ncclGetErrorString ((ncclResult_t) status);
    default:             return status == CUFFT_ALLOC_FAILED ? "out of device memory" : "cuFFT error";
    }
}

static int
gpu_clear (void)
{
  return (int) cudaGetLastError ();
}

const AiryGpuHooks _airy_cuda_gpu_hooks = { gpu_error_string, gpu_clear };

void
_airy_cuda_held_add (CudaBackend *self, int device, gint64 bytes)
{
  g_mutex_lock (&self->held_lock);
  self->held[device] = (guint64) ((gint64) self->held[device] + bytes);
  g_mutex_unlock (&self->held_lock);
}

guint64
_airy_cuda_held_get (CudaBackend *self, int device)
{
  guint64 v;

  g_mutex_lock (&self->held_lock);
  v = self->held[device];
  g_mutex_unlock (&self->held_lock);
  return v;
}

/* AIRY_DEVICE_MEMORY_BUDGET ("512M", "2G"): the most the backend holds on a
 * device, results for the viewer included; 0 without it. */
gboolean
_airy_cuda_device_budget (guint64 *budget, GError **error)
{
  const char *env = g_getenv ("AIRY_DEVICE_MEMORY_BUDGET");
  char *end = NULL;
  guint64 v;

  *budget = 0;
  if (env == NULL || *env == '\0')
    return TRUE;
  v = g_ascii_strtoull (env, &end, 10);
  switch (g_ascii_toupper (*end))
    {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
  if (end == env || *end != '\0' || v == 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("AIRY_DEVICE_MEMORY_BUDGET: must be a size such as 512M or 2G, got \"%s\""), env);
      return FALSE;
    }
  *budget = v;
  return TRUE;
}

/* ---- device buffers ---- */

/* The kept blocks' allocations (airy-cuda-private.h). */
static int
block_alloc (int device, guint64 bytes, gpointer *ptr, gpointer user_data)
{
  CudaBackend *self = user_data;
  cudaError_t e = cudaSetDevice (device);

  if (e == cudaSuccess)
    e = cudaMalloc (ptr, bytes);
  if (e == cudaSuccess && self != NULL)
    g_atomic_int_inc (&self->allocations);
  return (int) e;
}

static void
block_release (int device, gpointer ptr, gpointer user_data)
{
  cudaSetDevice (device);
  cudaFree (ptr);
  cudaGetLastError ();
}

const AiryBlockOps _airy_cuda_block_ops = { block_alloc, block_release };

gboolean
_airy_cuda_upload (void **dst, const void *src, gsize bytes, cudaStream_t stream, GError **error)
{
  return CHECK (cudaMalloc (dst, bytes), error)
         && CHECK (cudaMemcpyAsync (*dst, src, bytes, cudaMemcpyHostToDevice, stream), error);
}

/* Without a host copy: the stack's geometry only (values on the devices). */
AiryStack *
_airy_cuda_geometry_new (guint depth, guint height, guint width)
{
  AiryStack *s = g_new0 (AiryStack, 1);

  s->depth = depth;
  s->height = height;
  s->width = width;
  s->bits = 32;
  return s;
}

/* ---- downloads ---- */

gboolean
_airy_cuda_dl_init (CudaBackend *self, Slot *s, GError **error)
{
  Transfers *dl = &s->dl;
  Staging *st = &self->staging[s->device];
  guint k;

  g_mutex_lock (&self->lock);
  if (!st->in_use)
    {
      st->in_use = TRUE;
      dl->borrowed = st;
    }
  g_mutex_unlock (&self->lock);
  if (!CHECK (cudaStreamCreateWithFlags (&dl->stream, cudaStreamNonBlocking), error)
      || !CHECK (cudaEventCreateWithFlags (&dl->ready[0], cudaEventDisableTiming), error)
      || !CHECK (cudaEventCreateWithFlags (&dl->ready[1], cudaEventDisableTiming), error))
    return FALSE;
  for (k = 0; k < STAGING_PIECES; k++)
    {
      void **host = dl->borrowed ? &dl->borrowed->host[k] : &dl->piece[k].host;

      /* pinned once per device, kept by the backend */
      if (*host == NULL && !CHECK (cudaHostAlloc (host, STAGING_BYTES, cudaHostAllocPortable), error))
        return FALSE;
      dl->piece[k].host = *host;
      if (!CHECK (cudaEventCreateWithFlags (&dl->piece[k].done, cudaEventDisableTiming), error))
        return FALSE;
    }
  return TRUE;
}

/* A piece is free again: its download copied into place, its upload read. */
static gboolean
dl_complete (Transfers *dl, guint k, GError **error)
{
  if (!dl->piece[k].busy)
    return TRUE;
  dl->piece[k].busy = FALSE;
  if (!CHECK (cudaEventSynchronize (dl->piece[k].done), error))
    return FALSE;
  if (dl->piece[k].dst)
    memcpy (dl->piece[k].dst, dl->piece[k].host, dl->piece[k].bytes);
  return TRUE;
}

/* Copies the pieces that have arrived into place, oldest first, without
 * waiting for the others. */
gboolean
_airy_cuda_dl_poll (Transfers *dl, GError **error)
{
  guint i;

  for (i = 0; i < STAGING_PIECES; i++)
    {
      guint k = (dl->next + i) % STAGING_PIECES;
      cudaError_t status;

      if (!dl->piece[k].busy)
        continue;
      status = cudaEventQuery (dl->piece[k].done);
      if (status == cudaErrorNotReady)
        {
          cudaGetLastError ();
          return TRUE;
        }
      if (!CHECK (status, error) || !dl_complete (dl, k, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
_airy_cuda_dl_finish (Transfers *dl, GError **error)
{
  guint i;

  for (i = 0; i < STAGING_PIECES; i++)
    if (!dl_complete (dl, (dl->next + i) % STAGING_PIECES, error))
      return FALSE;
  return TRUE;
}

/* bytes at src (device) to dst (host), once `ready` (recorded after the
 * compute that wrote src) has passed; with reuse, the compute stream waits
 * for the copy before it writes src again. */
gboolean
_airy_cuda_dl_push (Slot *s, cudaEvent_t ready, const void *src, void *dst, gsize bytes, gboolean reuse, GError **error)
{
  Transfers *dl = &s->dl;
  gsize off;
  guint k = 0;

  if (!CHECK (cudaStreamWaitEvent (dl->stream, ready, 0), error))
    return FALSE;
  for (off = 0; off < bytes; off += STAGING_BYTES)
    {
      gsize n = MIN (STAGING_BYTES, bytes - off);

      k = dl->next;
      if (!dl_complete (dl, k, error)
          || !CHECK (cudaMemcpyAsync (dl->piece[k].host, (const char *) src + off, n, cudaMemcpyDeviceToHost, dl->stream),
                     error)
          || !CHECK (cudaEventRecord (dl->piece[k].done, dl->stream), error))
        return FALSE;
      dl->piece[k].dst = (char *) dst + off;
      dl->piece[k].bytes = n;
      dl->piece[k].busy = TRUE;
      dl->next = (k + 1) % STAGING_PIECES;
    }
  return !reuse || CHECK (cudaStreamWaitEvent (s->stream, dl->piece[k].done, 0), error);
}

/* bytes at src (host) to dst (device), in order on the compute stream */
gboolean
_airy_cuda_dl_upload (Slot *s, void *dst, const void *src, gsize bytes, GError **error)
{
  Transfers *dl = &s->dl;
  gsize off;

  for (off = 0; off < bytes; off += STAGING_BYTES)
    {
      gsize n = MIN (STAGING_BYTES, bytes - off);
      guint k = dl->next;

      if (!dl_complete (dl, k, error))
        return FALSE;
      memcpy (dl->piece[k].host, (const char *) src + off, n);
      if (!CHECK (cudaMemcpyAsync ((char *) dst + off, dl->piece[k].host, n, cudaMemcpyHostToDevice, s->stream), error)
          || !CHECK (cudaEventRecord (dl->piece[k].done, s->stream), error))
        return FALSE;
      dl->piece[k].dst = NULL;
      dl->piece[k].busy = TRUE;
      dl->next = (k + 1) % STAGING_PIECES;
    }
  return TRUE;
}

void
_airy_cuda_dl_free (CudaBackend *self, Transfers *dl)
{
  guint k;

  if (dl->stream)
    cudaStreamSynchronize (dl->stream);
  for (k = 0; k < STAGING_PIECES; k++)
    {
      if (dl->piece[k].done)
        cudaEventDestroy (dl->piece[k].done);
      if (dl->borrowed == NULL && dl->piece[k].host)
        cudaFreeHost (dl->piece[k].host);
    }
  if (dl->ready[0])
    cudaEventDestroy (dl->ready[0]);
  if (dl->ready[1])
    cudaEventDestroy (dl->ready[1]);
  if (dl->stream)
    cudaStreamDestroy (dl->stream);
  if (dl->borrowed)
    {
      g_mutex_lock (&self->lock);
      dl->borrowed->in_use = FALSE;
      g_mutex_unlock (&self->lock);
    }
  memset (dl, 0, sizeof *dl);
}

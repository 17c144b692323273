#define G_LOG_DOMAIN "airy-cuda"

#include "config.h"

#include <glib/gi18n-lib.h>
#include <gmodule.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <nccl.h>

#include "airy-backend.h"
#include "airy-error.h"
#include "airy-cuda-kernels.h"

/* The CUDA backend module. It links the CUDA runtime, cuFFT and NCCL but
 * never libcuda, so it loads on machines without an NVIDIA driver and then
 * reports "no CUDA device: …" (DESIGN §2). */

typedef struct
{
  int                   count;
  struct cudaDeviceProp *props;
} CudaBackend;

#define AIRY_CUDA_CHECK(expr, error)                                              \
  airy_cuda_check ((int) (expr), #expr, __FILE__, __LINE__, (error))

static gboolean
airy_cuda_check (int status, const char *expr, const char *file, int line, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, "%s failed: %s (%s:%d)", expr,
               cudaGetErrorString ((cudaError_t) status), file, line);
  return FALSE;
}

static gboolean
cuda_open (AiryBackend *backend, GError **error)
{
  CudaBackend *self = g_new0 (CudaBackend, 1);
  cudaError_t status = cudaGetDeviceCount (&self->count);
  int i;

  backend->priv = self;
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
  for (i = 0; i < self->count; i++)
    if (!AIRY_CUDA_CHECK (cudaGetDeviceProperties (&self->props[i], i), error))
      return FALSE;
  return TRUE;
}

static void
cuda_close (AiryBackend *backend)
{
  CudaBackend *self = backend->priv;

  if (self == NULL)
    return;
  g_free (self->props);
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

static gboolean
cuda_prepare (AiryBackend *backend, AiryPlan *plan, GError **error)
{
  /* Executing plans on the GPU is the CUDA issue's work; until it lands the
   * backend says so instead of computing anything on the CPU behind the
   * user's back. */
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
               _("backend cuda: running systems on the GPU is not implemented in this version; "
                 "use --backend cpu"));
  return FALSE;
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
};

G_MODULE_EXPORT gboolean airy_module_register (const char *path, GError **error);

G_MODULE_EXPORT gboolean
airy_module_register (const char *path,
                      GError    **error)
{
  airy_backend_register (&cuda_ops, path);
  return TRUE;
}

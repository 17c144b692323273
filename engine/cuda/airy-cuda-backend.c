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

#include "airy-backend-impl.h"
#include "airy-error.h"
#include "airy-plan-private.h"
#include "airy-ops-private.h"
#include "airy-sensor-private.h"
#include "cpu/airy-cpu-fast-private.h"
#include "airy-cuda-kernels.h"
#include "airy-cuda-private.h"

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
 * imaging, sensor) is the same.
 *
 * A stack for the host is downloaded while the next batch computes (pinned
 * staging buffers on a copy stream); a result for the viewer stays on the
 * devices (AiryResident) and its slices go to GL device to device. */

#define MAX_BATCH 16
#define STAGING_PIECES 4
#define STAGING_BYTES (16u << 20)

G_STATIC_ASSERT (AIRY_GPU_CUDA_OUT_OF_MEMORY == cudaErrorMemoryAllocation);
G_STATIC_ASSERT (AIRY_GPU_CUFFT_ALLOC_FAILED == CUFFT_ALLOC_FAILED);

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

static const AiryGpuHooks gpu_hooks = { gpu_error_string, gpu_clear };

/* Every CUDA, cuFFT and NCCL call goes through here (airy-cuda-private.h):
 * a failure becomes a GError naming the call, the file and the line, the
 * thread's last error is cleared, running out of memory is reported as
 * such, never an abort. */
#define CHECK(expr, error) _airy_gpu_check (&gpu_hooks, (int) (expr), #expr, __FILE__, __LINE__, AIRY_GPU_CUDA, (error))
#define CUFFT(expr, error) _airy_gpu_check (&gpu_hooks, (int) (expr), #expr, __FILE__, __LINE__, AIRY_GPU_CUFFT, (error))
#define NCCL(expr, error)  _airy_gpu_check (&gpu_hooks, (int) (expr), #expr, __FILE__, __LINE__, AIRY_GPU_NCCL, (error))

/* ---- state ---- */

/* The fused path's pupil data, kept across runs of the same optics: the
 * host computes F, G (pupil rows only; G in double, as the CPU) once per
 * change, each device gets its copy once, uploaded on the stream of the run
 * that needed it; `ready` orders every other run's use after that copy. */
typedef struct
{
  gint          ref;
  char         *key;
  guint         n_lambda;
  gsize         nband;       /* rows × w */
  guint         y0, rows;
  float        *scale;
  double        z0;
  float2       *F;           /* host: n_lambda × nband */
  double       *G;
  int           count;       /* devices */
  float2      **dF;          /* per device, NULL until uploaded */
  double      **dG;
  cudaEvent_t  *ready;
  struct _CudaBackend *backend;
} Pupil;

/* A cuFFT plan waiting in the pool for the next run of the same shape; it
 * has no work area of its own (the slot's one is set when taken). */
typedef struct
{
  int          device;
  cufftHandle  handle;
  size_t       work;
} PooledPlan;

typedef struct
{
  char        *key;
  cufftHandle  handle;
  size_t       work;
} TakenPlan;

/* Pinned host buffers a slot borrows to download its results. */
typedef struct
{
  void     *host[STAGING_PIECES];
  gboolean  in_use;
} Staging;

/* The GL context a texture belongs to, and the CUDA device that drives it
 * (cudaGLGetDevices; -1: none, slices go through host memory; GL_PROBE:
 * the driver did not say, the first registration that works tells). */
#define GL_PROBE (-2)

typedef struct
{
  gpointer    context;
  int         device;
  const char *note;
} GlContext;

typedef struct _CudaBackend
{
  int                    count;
  struct cudaDeviceProp *props;
  int                    runtime_version, driver_version, cufft_version, nccl_version;
  GMutex                 lock;
  GMutex                 comm_lock;    /* one reduction at a time on the communicators */
  AiryCommSet            comms;        /* NCCL, for the last reduction's device set */
  GPtrArray             *residents;    /* CudaResident*: results kept for the viewer */
  GPtrArray             *registered;   /* AiryGlRegistration* */
  GPtrArray             *gl_contexts;  /* GlContext* */
  guint64               *peak;         /* per device: the most one run allocated */
  Pupil                 *pupil;        /* the last fused run's pupil data */
  GHashTable            *plans;        /* key → PooledPlan*: the last run's cuFFT plans, per device */
  Staging               *staging;      /* per device */
  GMutex                 held_lock;
  guint64               *held;         /* per device: bytes kept between runs (results, pupils) */
} CudaBackend;

/* A piece of a result on one device: planes [first, first + count). */
typedef struct
{
  int     device;
  float  *data;
  guint   first;
  guint   count;
} ResultPart;

/* A result kept on the devices for the viewer. `host`: the values moved to
 * host memory (to make room for a later run); every slot then reads there. */
typedef struct
{
  CudaBackend   *backend;
  AiryStack     *geometry;   /* the resident's stack (data NULL) */
  GPtrArray     *parts;      /* ResultPart* */
  AiryResident  *host;
  const char    *note;
  float        **scratch;    /* per device: two slices (assembly, peer source) */
  float        **partial;    /* per device: the statistics' per-block extremes */
  unsigned long long **counts;  /* per device: AIRY_STATS_BINS counters */
  gsize          scratch_n;
} CudaResident;

#define AIRY_STATS_BINS 4096

/* Host transfers through pinned pieces: downloads on a copy stream (the
 * compute stream goes on with the next batch meanwhile), uploads staged on
 * the compute stream (a pageable source would make the driver wait for the
 * stream). */
typedef struct
{
  cudaStream_t  stream;
  cudaEvent_t   ready[2];     /* after each batch's compute, alternating */
  struct
  {
    void        *host;
    cudaEvent_t  done;
    char        *dst;
    gsize        bytes;
    gboolean     busy;
  }             piece[STAGING_PIECES];
  guint         next;
  Staging      *borrowed;     /* the backend's, or NULL when this slot allocated its own */
} Transfers;

typedef struct
{
  int           device;
  gboolean      active;    /* has planes */
  gboolean      root;      /* the reduction's root: makes the image */
  cudaStream_t  stream;
  guint         batch;
  guint         n_lambda;
  float2       *F;        /* n_lambda × rows × w: the pupil's rows (borrowed) */
  double       *G;
  float2       *field;    /* h × batch × w (row-interleaved), zero outside the pupil's rows */
  float2       *field2;   /* the column pass's output, same layout */
  float        *inten;    /* batch × h × w */
  double       *zbuf;     /* the chunk's planes: z + the objective's z */
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
  void         *work;     /* the one work area of all the slot's cuFFT plans */
  size_t        work_bytes;
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
  GPtrArray    *taken;      /* TakenPlan*: the pooled plans this slot holds */
  gboolean      host_out;   /* the host wants the stack: download while computing */
  gboolean      transfers;  /* pinned transfers: downloads, the kept PSF, a sample from a file */
  Transfers     dl;
} Slot;

typedef struct
{
  Slot          *slots;
  guint         *active;   /* the slots with planes; active[0] is the root */
  guint          n_active;
  float         *scale;    /* the pupil's, per wavelength */
  double         z0;
  guint          y0, rows; /* the pupil's rows */
  Pupil         *pupil;
  AiryOpList    *ops;      /* chains without the fused path */
  CudaBackend   *backend;
} CudaRun;

static void
held_add (CudaBackend *self, int device, gint64 bytes)
{
  g_mutex_lock (&self->held_lock);
  self->held[device] = (guint64) ((gint64) self->held[device] + bytes);
  g_mutex_unlock (&self->held_lock);
}

static guint64
held_get (CudaBackend *self, int device)
{
  guint64 v;

  g_mutex_lock (&self->held_lock);
  v = self->held[device];
  g_mutex_unlock (&self->held_lock);
  return v;
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
        if (p->ready[d])
          cudaEventDestroy (p->ready[d]);
        held_add (p->backend, d, -(gint64) (p->n_lambda * p->nband * (sizeof (float2) + sizeof (double))));
      }
  g_free (p->dF);
  g_free (p->dG);
  g_free (p->ready);
  g_free (p->F);
  g_free (p->G);
  g_free (p->scale);
  g_free (p->key);
  g_free (p);
}

/* Destroys the pooled plans of one device (-1: all) but those whose key is
 * in keep; with the lock held. */
static void
plans_destroy (CudaBackend *self, int device, GPtrArray *keep)
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

/* ---- NCCL through airy-cuda-private.h ---- */

static int
comm_init_all (gpointer *comms, int n, const int *devices, gpointer user_data)
{
  return (int) ncclCommInitAll ((ncclComm_t *) comms, n, devices);
}

static void
comm_destroy (gpointer comm, gpointer user_data)
{
  ncclCommDestroy (comm);
}

static void
comm_abort (gpointer comm, gpointer user_data)
{
  ncclCommAbort (comm);
}

static const AiryCommOps comm_ops = { comm_init_all, comm_destroy, comm_abort };

/* ---- GL registrations through airy-cuda-private.h ---- */

static int
gl_register (const AiryGlRegistration *key, gpointer *resource, gpointer user_data)
{
  cudaGraphicsResource_t r = NULL;
  cudaError_t status = cudaGraphicsGLRegisterImage (&r, key->texture, GL_TEXTURE_2D,
                                                    cudaGraphicsRegisterFlagsWriteDiscard);

  *resource = r;
  return (int) status;
}

static void
gl_unregister (gpointer resource, gpointer user_data)
{
  cudaGraphicsUnregisterResource (resource);
  cudaGetLastError ();
}

static const AiryGlRegistrationOps gl_registration_ops = { gl_register, gl_unregister };

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

static gboolean
cuda_open (AiryBackend *backend, GError **error)
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

static void resident_release_all (CudaBackend *self);

static void
cuda_close (AiryBackend *backend)
{
  CudaBackend *self = backend->priv;
  int i, k;

  if (self == NULL)
    return;
  resident_release_all (self);
  pupil_unref (self->pupil);
  plans_destroy (self, -1, NULL);
  _airy_comms_clear (&self->comms, &comm_ops, NULL, FALSE);
  _airy_gl_registrations_release (self->registered, NULL, &gl_registration_ops, NULL);
  for (i = 0; i < self->count; i++)
    for (k = 0; k < STAGING_PIECES; k++)
      if (self->staging[i].host[k])
        cudaFreeHost (self->staging[i].host[k]);
  g_ptr_array_unref (self->residents);
  g_ptr_array_unref (self->registered);
  g_ptr_array_unref (self->gl_contexts);
  g_hash_table_unref (self->plans);
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

static guint64
cuda_free_memory (AiryBackend *backend, guint device)
{
  size_t free_b = 0, total = 0;

  if (cudaSetDevice ((int) device) != cudaSuccess || cudaMemGetInfo (&free_b, &total) != cudaSuccess)
    {
      cudaGetLastError ();
      return 0;
    }
  return free_b;
}

/* AIRY_DEVICE_MEMORY_BUDGET ("512M", "2G"): the most the backend holds on a
 * device, results for the viewer included; 0 without it. */
static gboolean
device_budget (guint64 *budget, GError **error)
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

/* ---- results kept for the viewer ---- */

static ResultPart *
part_of (CudaResident *cr, guint z)
{
  guint i;

  for (i = 0; i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);
      if (z >= p->first && z < p->first + p->count)
        return p;
    }
  g_assert_not_reached ();
  return NULL;
}

static gsize
part_bytes (CudaResident *cr, ResultPart *p)
{
  return (gsize) p->count * cr->geometry->height * cr->geometry->width * sizeof (float);
}

static void
resident_free_device (CudaResident *cr)
{
  CudaBackend *self = cr->backend;
  guint i;
  int d;

  for (i = 0; i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);

      if (p->data)
        {
          cudaSetDevice (p->device);
          cudaFree (p->data);
          held_add (self, p->device, -(gint64) part_bytes (cr, p));
          p->data = NULL;
        }
    }
  for (d = 0; d < self->count; d++)
    if (cr->scratch[d])
      {
        cudaSetDevice (d);
        cudaFree (cr->scratch[d]);
        cudaFree (cr->partial[d]);
        cudaFree (cr->counts[d]);
        held_add (self, d, -(gint64) (2 * cr->scratch_n * sizeof (float)));
        cr->scratch[d] = NULL;
        cr->partial[d] = NULL;
        cr->counts[d] = NULL;
      }
  cudaGetLastError ();
}

/* The values to host memory, the device memory free: a run needs the
 * room. With the lock held. FALSE when host memory is short too. */
static gboolean
resident_spill (CudaResident *cr)
{
  const AiryStack *g = cr->geometry;
  AiryStack *host;
  guint i;

  if (cr->host != NULL)
    return TRUE;
  host = _airy_stack_new_uninitialised (g->depth, g->height, g->width);
  if (host == NULL)
    return FALSE;
  for (i = 0; i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);

      if (cudaSetDevice (p->device) != cudaSuccess
          || cudaMemcpy (airy_stack_plane (host, p->first), p->data, part_bytes (cr, p), cudaMemcpyDeviceToHost)
             != cudaSuccess)
        {
          cudaGetLastError ();
          airy_stack_free (host);
          return FALSE;
        }
    }
  airy_stack_copy_metadata (host, g);
  host->bits = g->bits;
  resident_free_device (cr);
  cr->host = airy_resident_new_host (host);
  cr->note = N_("the result was moved to host memory to make room for a later run");
  return TRUE;
}

/* Makes room on a device: every kept result with values there goes to host
 * memory. With the lock held. */
static void
residents_spill (CudaBackend *self, int device)
{
  guint i, k;

  for (i = 0; i < self->residents->len; i++)
    {
      CudaResident *cr = g_ptr_array_index (self->residents, i);

      for (k = 0; k < cr->parts->len; k++)
        if (((ResultPart *) g_ptr_array_index (cr->parts, k))->device == device)
          {
            resident_spill (cr);
            break;
          }
    }
}

static void
resident_release_all (CudaBackend *self)
{
  guint i;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->residents->len; i++)
    resident_free_device (g_ptr_array_index (self->residents, i));
  g_mutex_unlock (&self->lock);
}

/* Two slices and the statistics' buffers on a device, made on first use. */
static gboolean
resident_scratch (CudaResident *cr, int d, GError **error)
{
  if (cr->scratch[d])
    return TRUE;
  if (!CHECK (cudaSetDevice (d), error)
      || !CHECK (cudaMalloc ((void **) &cr->scratch[d], 2 * cr->scratch_n * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &cr->partial[d], 2 * AIRY_CUDA_STATS_BLOCKS * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &cr->counts[d], AIRY_STATS_BINS * sizeof (unsigned long long)), error))
    {
      cudaFree (cr->scratch[d]);
      cudaFree (cr->partial[d]);
      cr->scratch[d] = NULL;
      cr->partial[d] = NULL;
      return FALSE;
    }
  held_add (cr->backend, d, (gint64) (2 * cr->scratch_n * sizeof (float)));
  return TRUE;
}

/* The slice on device `dev`: a pointer into the result for a plane that
 * lives there, else assembled in the device's scratch (sections gathered
 * per part with a kernel, parts on other GPUs copied peer to peer, the
 * projection taken per part and combined). With the lock held; the values
 * are ready when this returns. */
static gboolean
resident_slice_on (CudaResident *cr, const AirySlice *slice, int dev, const float **out, GError **error)
{
  const AiryStack *g = cr->geometry;
  gsize n = airy_stack_plane_size (g);
  gboolean yz = slice->kind == AIRY_SLICE_YZ;
  guint len = yz ? g->height : g->width, i;
  float *dst;

  if (!resident_scratch (cr, dev, error) || !CHECK (cudaSetDevice (dev), error))
    return FALSE;
  dst = cr->scratch[dev];
  if (slice->kind == AIRY_SLICE_XY)
    {
      ResultPart *p = part_of (cr, slice->index);
      const float *src = p->data + (gsize) (slice->index - p->first) * n;

      if (p->device == dev)
        {
          *out = src;
          return TRUE;
        }
      if (!CHECK (cudaMemcpyPeer (dst, dev, src, p->device, n * sizeof (float)), error))
        return FALSE;
    }
  else
    for (i = 0; i < cr->parts->len; i++)
      {
        ResultPart *p = g_ptr_array_index (cr->parts, i);
        gboolean here = p->device == dev;
        float *tmp;
        gsize bytes;

        if (!here && !resident_scratch (cr, p->device, error))
          return FALSE;
        /* on the part's own device: into the result's place, or its scratch */
        tmp = here ? (slice->kind == AIRY_SLICE_MIP ? dst : dst + (gsize) p->first * len)
                   : cr->scratch[p->device] + cr->scratch_n;
        if (!CHECK (cudaSetDevice (p->device), error))
          return FALSE;
        if (slice->kind == AIRY_SLICE_MIP)
          {
            if (!CHECK (airy_cuda_launch_max_planes (p->data, p->count, n, tmp, here && i > 0, NULL), error))
              return FALSE;
            bytes = n * sizeof (float);
          }
        else
          {
            if (!CHECK (airy_cuda_launch_section (p->data, p->count, g->height, g->width, yz, slice->index, tmp, NULL),
                        error))
              return FALSE;
            bytes = (gsize) p->count * len * sizeof (float);
          }
        if (here)
          continue;
        if (!CHECK (cudaStreamSynchronize (NULL), error))
          return FALSE;
        if (slice->kind != AIRY_SLICE_MIP)
          {
            if (!CHECK (cudaMemcpyPeer (dst + (gsize) p->first * len, dev, tmp, p->device, bytes), error))
              return FALSE;
          }
        else if (!CHECK (cudaMemcpyPeer (i == 0 ? dst : cr->scratch[dev] + cr->scratch_n, dev, tmp, p->device, bytes), error)
                 || (i > 0
                     && (!CHECK (cudaSetDevice (dev), error)
                         || !CHECK (airy_cuda_launch_max_planes (cr->scratch[dev] + cr->scratch_n, 1, n, dst, TRUE, NULL),
                                    error))))
          return FALSE;
      }
  if (!CHECK (cudaSetDevice (dev), error) || !CHECK (cudaStreamSynchronize (NULL), error))
    return FALSE;
  *out = dst;
  return TRUE;
}

static int
resident_home (CudaResident *cr)
{
  return ((ResultPart *) g_ptr_array_index (cr->parts, 0))->device;
}

static gboolean
cuda_resident_read_slice (AiryResident *r, const AirySlice *slice, float *out, GError **error)
{
  CudaResident *cr = r->priv;
  const float *src;
  guint w, h;
  gboolean ok;

  g_mutex_lock (&cr->backend->lock);
  if (cr->host)
    ok = airy_resident_read_slice (cr->host, slice, out, error);
  else
    {
      int dev = slice->kind == AIRY_SLICE_XY ? part_of (cr, slice->index)->device : resident_home (cr);

      airy_slice_size (r->stack, slice, &w, &h);
      ok = resident_slice_on (cr, slice, dev, &src, error)
           && CHECK (cudaMemcpy (out, src, (gsize) w * h * sizeof (float), cudaMemcpyDeviceToHost), error);
    }
  g_mutex_unlock (&cr->backend->lock);
  return ok;
}

static gboolean
cuda_resident_read_box (AiryResident *r, const AiryBox *box, float *out, GError **error)
{
  CudaResident *cr = r->priv;
  const AiryStack *g = r->stack;
  gsize n = airy_stack_plane_size (g);
  gboolean ok = TRUE;
  guint i, z;

  g_mutex_lock (&cr->backend->lock);
  if (cr->host)
    ok = airy_resident_read_box (cr->host, box, out, error);
  for (i = 0; !cr->host && ok && i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);
      guint z0 = MAX (box->z, p->first), z1 = MIN (box->z + box->depth, p->first + p->count);

      if (z0 >= z1)
        continue;
      ok = CHECK (cudaSetDevice (p->device), error);
      if (ok && box->height == 1)
        /* one row per plane (a section, an axial profile): one strided copy */
        ok = CHECK (cudaMemcpy2D (out + (gsize) (z0 - box->z) * box->width, box->width * sizeof (float),
                                  p->data + (gsize) (z0 - p->first) * n + (gsize) box->y * g->width + box->x,
                                  n * sizeof (float), box->width * sizeof (float), z1 - z0,
                                  cudaMemcpyDeviceToHost), error);
      for (z = z0; ok && box->height > 1 && z < z1; z++)
        ok = CHECK (cudaMemcpy2D (out + (gsize) (z - box->z) * box->height * box->width, box->width * sizeof (float),
                                  p->data + (gsize) (z - p->first) * n + (gsize) box->y * g->width + box->x,
                                  g->width * sizeof (float), box->width * sizeof (float), box->height,
                                  cudaMemcpyDeviceToHost), error);
    }
  g_mutex_unlock (&cr->backend->lock);
  return ok;
}

/* min and max of n values on device d (current) */
static gboolean
device_min_max (CudaResident *cr, int d, const float *data, gsize n, float *lo, float *hi, GError **error)
{
  float partial[2 * AIRY_CUDA_STATS_BLOCKS];
  unsigned blocks = 0, b;

  if (!CHECK (airy_cuda_launch_minmax (data, n, cr->partial[d], &blocks, NULL), error)
      || !CHECK (cudaMemcpy (partial, cr->partial[d], 2 * blocks * sizeof (float), cudaMemcpyDeviceToHost), error))
    return FALSE;
  for (b = 0; b < blocks; b++)
    {
      *lo = MIN (*lo, partial[2 * b]);
      *hi = MAX (*hi, partial[2 * b + 1]);
    }
  return TRUE;
}

/* counts += the histogram of n values on device d (current) */
static gboolean
device_histogram (CudaResident *cr, int d, const float *data, gsize n, float lo, float hi, guint bins,
                  guint64 *counts, GError **error)
{
  g_autofree unsigned long long *host = g_new (unsigned long long, bins);
  unsigned long long *dev = cr->counts[d];
  gboolean ok;
  guint k;

  if (bins > AIRY_STATS_BINS && !CHECK (cudaMalloc ((void **) &dev, bins * sizeof (unsigned long long)), error))
    return FALSE;
  ok = CHECK (airy_cuda_launch_histogram (data, n, lo, hi, bins, dev, NULL), error)
       && CHECK (cudaMemcpy (host, dev, bins * sizeof (unsigned long long), cudaMemcpyDeviceToHost), error);
  if (dev != cr->counts[d])
    cudaFree (dev);
  for (k = 0; ok && k < bins; k++)
    counts[k] += host[k];
  return ok;
}

/* The statistics where the values are: the extremes, then the histogram
 * over them, of the slice assembled on one device or (the whole stack) of
 * every part on its own device. */
static gboolean
cuda_resident_stats (AiryResident *r, const AirySlice *slice, AirySliceStats *stats, GError **error)
{
  CudaResident *cr = r->priv;
  const AiryStack *g = r->stack;
  float lo = INFINITY, hi = -INFINITY;
  gboolean ok = TRUE;
  const float *src = NULL;
  guint i, w, h;
  int dev = -1;

  g_mutex_lock (&cr->backend->lock);
  if (cr->host)
    {
      ok = airy_resident_stats (cr->host, slice, stats, error);
      g_mutex_unlock (&cr->backend->lock);
      return ok;
    }
  if (slice->kind != AIRY_SLICE_STACK)
    {
      dev = slice->kind == AIRY_SLICE_XY ? part_of (cr, slice->index)->device : resident_home (cr);
      airy_slice_size (g, slice, &w, &h);
      ok = resident_slice_on (cr, slice, dev, &src, error)
           && device_min_max (cr, dev, src, (gsize) w * h, &lo, &hi, error);
    }
  for (i = 0; ok && dev < 0 && i < cr->parts->len; i++)
    {
      ResultPart *p = g_ptr_array_index (cr->parts, i);

      ok = resident_scratch (cr, p->device, error) && CHECK (cudaSetDevice (p->device), error)
           && device_min_max (cr, p->device, p->data, (gsize) p->count * airy_stack_plane_size (g), &lo, &hi, error);
    }
  stats->min = isfinite (lo) ? lo : 0.0f;
  stats->max = isfinite (hi) ? hi : 1.0f;
  if (ok && stats->n_bins > 0)
    {
      memset (stats->counts, 0, stats->n_bins * sizeof (guint64));
      if (dev >= 0)
        ok = device_histogram (cr, dev, src, (gsize) w * h, stats->min, airy_stats_hist_max (stats),
                               stats->n_bins, stats->counts, error);
      for (i = 0; ok && dev < 0 && i < cr->parts->len; i++)
        {
          ResultPart *p = g_ptr_array_index (cr->parts, i);

          ok = CHECK (cudaSetDevice (p->device), error)
               && device_histogram (cr, p->device, p->data, (gsize) p->count * airy_stack_plane_size (g), stats->min,
                                    airy_stats_hist_max (stats), stats->n_bins, stats->counts, error);
        }
    }
  g_mutex_unlock (&cr->backend->lock);
  return ok;
}

/* The CUDA device of the GL context (cudaGLGetDevices, asked once per
 * context with it current); -1 when it is not on one of ours, GL_PROBE
 * when the driver does not say. With the lock held. */
static GlContext *
gl_context_get (CudaBackend *self, gpointer context)
{
  unsigned int n = 0;
  int devices[8];
  GlContext *c;
  guint i;

  for (i = 0; i < self->gl_contexts->len; i++)
    {
      c = g_ptr_array_index (self->gl_contexts, i);
      if (c->context == context)
        return c;
    }
  c = g_new0 (GlContext, 1);
  c->context = context;
  if (cudaGLGetDevices (&n, devices, G_N_ELEMENTS (devices), cudaGLDeviceListAll) != cudaSuccess || n == 0)
    {
      cudaGetLastError ();
      c->device = GL_PROBE;
    }
  else
    c->device = devices[0];
  g_ptr_array_add (self->gl_contexts, c);
  return c;
}

/* The driver did not name the context's GPU: the first device (those that
 * hold the result first) on which the texture registers is it. With the
 * lock held. */
static void
gl_context_probe (CudaBackend *self, CudaResident *cr, GlContext *c, const AiryGlRegistration *key)
{
  AiryGlRegistration k = *key;
  int order[64], n = 0, d, status;
  guint i;

  for (i = 0; i < cr->parts->len && n < (int) G_N_ELEMENTS (order); i++)
    order[n++] = ((ResultPart *) g_ptr_array_index (cr->parts, i))->device;
  for (d = 0; d < self->count && n < (int) G_N_ELEMENTS (order); d++)
    order[n++] = d;
  c->device = -1;
  c->note = N_("the GL context is not on a CUDA device");
  for (i = 0; i < (guint) n; i++)
    {
      k.device = order[i];
      if (cudaSetDevice (k.device) == cudaSuccess
          && _airy_gl_registration_get (self->registered, &k, &gl_registration_ops, NULL, &status) != NULL)
        {
          c->device = k.device;
          c->note = NULL;
          break;
        }
      cudaGetLastError ();
    }
}

/* Device to device into the viewer's texture when its GL context is on one
 * of the GPUs (cudaGLGetDevices); through host memory otherwise. */
static gboolean
cuda_resident_to_texture (AiryResident *r, const AirySlice *slice, AiryTexture *texture, GError **error)
{
  CudaResident *cr = r->priv;
  CudaBackend *self = cr->backend;
  const char *note = NULL;
  const float *src = NULL;
  AiryGlRegistration key, *reg;
  cudaGraphicsResource_t resource;
  cudaArray_t array;
  g_autofree float *host = NULL;
  guint w, h;
  int dev = -1, status;
  gboolean ok;

  airy_slice_size (r->stack, slice, &w, &h);
  g_mutex_lock (&self->lock);
  if (cr->host)
    note = cr->note;
  else if (!texture->interop)
    note = N_("the GL context is not on an NVIDIA GPU");
  else
    {
      GlContext *c = gl_context_get (self, texture->context);

      if (c->device == GL_PROBE)
        gl_context_probe (self, cr, c, &(AiryGlRegistration) { texture->context, texture->texture,
                                                               texture->generation, w, h, 0, NULL });
      dev = c->device;
      note = c->note;
    }
  if (dev < 0)
    {
      /* through host memory, as the CPU's */
      if (cr->host)
        ok = airy_resident_to_texture (cr->host, slice, texture, error);
      else
        {
          host = g_new (float, (gsize) w * h);
          g_mutex_unlock (&self->lock);
          ok = cuda_resident_read_slice (r, slice, host, error);
          g_mutex_lock (&self->lock);
          if (ok)
            texture->upload (host, w, h, texture->user_data);
        }
      texture->path = AIRY_TEXTURE_HOST;
      texture->note = note;
      g_mutex_unlock (&self->lock);
      return ok;
    }
  key = (AiryGlRegistration) { texture->context, texture->texture, texture->generation, w, h, dev, NULL };
  ok = resident_slice_on (cr, slice, dev, &src, error) && CHECK (cudaSetDevice (dev), error);
  reg = ok ? _airy_gl_registration_get (self->registered, &key, &gl_registration_ops, NULL, &status) : NULL;
  if (ok && reg == NULL)
    ok = CHECK (status, error);
  if (ok)
    {
      resource = reg->resource;
      ok = CHECK (cudaGraphicsMapResources (1, &resource, NULL), error);
      if (ok)
        {
          ok = CHECK (cudaGraphicsSubResourceGetMappedArray (&array, resource, 0, 0), error)
               && CHECK (cudaMemcpy2DToArray (array, 0, 0, src, w * sizeof (float), w * sizeof (float), h,
                                              cudaMemcpyDeviceToDevice), error);
          CHECK (cudaGraphicsUnmapResources (1, &resource, NULL), ok ? error : NULL);
        }
    }
  texture->path = AIRY_TEXTURE_DEVICE;
  texture->device = dev;
  g_mutex_unlock (&self->lock);
  return ok;
}

static void
cuda_resident_free (AiryResident *r)
{
  CudaResident *cr = r->priv;
  CudaBackend *self = cr->backend;

  g_mutex_lock (&self->lock);
  g_ptr_array_remove (self->residents, cr);
  resident_free_device (cr);
  g_mutex_unlock (&self->lock);
  airy_resident_unref (cr->host);
  g_ptr_array_free (cr->parts, TRUE);
  g_free (cr->scratch);
  g_free (cr->partial);
  g_free (cr->counts);
  g_free (cr);
}

static const AiryResidentOps cuda_resident_ops = {
  .read_slice = cuda_resident_read_slice,
  .read_box = cuda_resident_read_box,
  .stats = cuda_resident_stats,
  .to_texture = cuda_resident_to_texture,
  .free = cuda_resident_free,
};

/* Takes geometry (a stack without data) and the parts. */
static AiryResident *
cuda_resident_new (AiryBackend *backend, AiryStack *geometry, GPtrArray *parts)
{
  CudaBackend *self = backend->priv;
  CudaResident *cr = g_new0 (CudaResident, 1);
  guint i;

  cr->backend = self;
  cr->geometry = geometry;
  cr->parts = parts;
  cr->scratch = g_new0 (float *, self->count);
  cr->partial = g_new0 (float *, self->count);
  cr->counts = g_new0 (unsigned long long *, self->count);
  cr->scratch_n = MAX ((gsize) geometry->height * geometry->width,
                       (gsize) geometry->depth * MAX (geometry->height, geometry->width));
  for (i = 0; i < parts->len; i++)
    held_add (self, ((ResultPart *) g_ptr_array_index (parts, i))->device,
              (gint64) part_bytes (cr, g_ptr_array_index (parts, i)));
  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->residents, cr);
  g_mutex_unlock (&self->lock);
  return airy_resident_new (backend, &cuda_resident_ops, geometry, cr);
}

static void
cuda_gl_release (AiryBackend *backend, gpointer context)
{
  CudaBackend *self = backend->priv;
  guint i = 0;

  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  _airy_gl_registrations_release (self->registered, context, &gl_registration_ops, NULL);
  while (i < self->gl_contexts->len)
    if (((GlContext *) g_ptr_array_index (self->gl_contexts, i))->context == context)
      g_ptr_array_remove_index_fast (self->gl_contexts, i);
    else
      i++;
  g_mutex_unlock (&self->lock);
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
pupil_new (AiryPlan *plan, CudaBackend *self, GError **error)
{
  AiryPsfShared *shared = _airy_psf_shared_new (plan, error);
  guint w = plan->psf_width, l;
  gsize n = (gsize) plan->psf_height * w;
  g_autofree float2 *F = NULL;
  g_autofree double *G = NULL;
  Pupil *p;

  if (shared == NULL)
    return NULL;
  p = g_new0 (Pupil, 1);
  p->ref = 1;
  p->backend = self;
  p->n_lambda = plan->spectrum->n;
  _airy_psf_shared_band (shared, &p->y0, &p->rows);
  p->nband = (gsize) p->rows * w;
  p->F = g_new (float2, p->n_lambda * p->nband);
  p->G = g_new (double, p->n_lambda * p->nband);
  p->scale = g_new (float, p->n_lambda);
  F = g_new (float2, n);
  G = g_new (double, n);
  for (l = 0; l < p->n_lambda; l++)
    {
      _airy_psf_shared_full (shared, l, (fftwf_complex *) F, G);
      memcpy (p->F + l * p->nband, F + (gsize) p->y0 * w, p->nband * sizeof (float2));
      memcpy (p->G + l * p->nband, G + (gsize) p->y0 * w, p->nband * sizeof (double));
      p->scale[l] = _airy_psf_shared_scale (shared, l);
    }
  p->z0 = _airy_psf_shared_z0 (shared);
  p->count = self->count;
  p->dF = g_new0 (float2 *, p->count);
  p->dG = g_new0 (double *, p->count);
  p->ready = g_new0 (cudaEvent_t, p->count);
  _airy_psf_shared_free (shared);
  return p;
}

/* The device's copy of the pupil data, made once, on the slot's stream (the
 * slot's kernels come after it); a later run on another stream waits for
 * the copy through `ready`. */
static gboolean
pupil_upload (CudaBackend *self, Pupil *p, Slot *s, GError **error)
{
  int d = s->device;
  gsize nf = p->n_lambda * p->nband;
  gboolean ok = TRUE;

  g_mutex_lock (&self->lock);
  if (p->dF[d] == NULL)
    {
      ok = CHECK (cudaMalloc ((void **) &p->dF[d], nf * sizeof (float2)), error)
           && CHECK (cudaMalloc ((void **) &p->dG[d], nf * sizeof (double)), error)
           && CHECK (cudaEventCreateWithFlags (&p->ready[d], cudaEventDisableTiming), error)
           && CHECK (cudaMemcpyAsync (p->dF[d], p->F, nf * sizeof (float2), cudaMemcpyHostToDevice, s->stream), error)
           && CHECK (cudaMemcpyAsync (p->dG[d], p->G, nf * sizeof (double), cudaMemcpyHostToDevice, s->stream), error)
           && CHECK (cudaEventRecord (p->ready[d], s->stream), error);
      if (!ok)
        {
          cudaFree (p->dF[d]);
          cudaFree (p->dG[d]);
          if (p->ready[d])
            cudaEventDestroy (p->ready[d]);
          p->dF[d] = NULL;
          p->dG[d] = NULL;
          p->ready[d] = NULL;
        }
      else
        held_add (self, d, (gint64) (nf * (sizeof (float2) + sizeof (double))));
    }
  else
    ok = CHECK (cudaStreamWaitEvent (s->stream, p->ready[d], 0), error);
  g_mutex_unlock (&self->lock);
  return ok;
}

/* Without a host copy: the stack's geometry only (values on the devices). */
static AiryStack *
geometry_new (guint depth, guint height, guint width)
{
  AiryStack *s = g_new0 (AiryStack, 1);

  s->depth = depth;
  s->height = height;
  s->width = width;
  s->bits = 32;
  return s;
}

static gboolean
alloc_outputs (AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  if (!state->want_resident)
    return _airy_run_state_alloc_outputs (state, error);
  state->out = geometry_new (plan->reduce ? 1 : plan->out_depth, plan->out_height, plan->out_width);
  if (state->keep_psf)
    state->psf = airy_stack_new (plan->n_planes, plan->psf_height, plan->psf_width);
  return TRUE;
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
      run->slots[i].n_lambda = plan->spectrum->n;
    }
  run->slots[run->active[0]].root = TRUE;
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
      return alloc_outputs (state, error);
    }

  /* the pupil data of the last run when the optics are the same */
  {
    CudaBackend *self = run->backend;
    g_autofree char *key = pupil_key (plan);
    Pupil *p = NULL, *old = NULL;

    g_mutex_lock (&self->lock);
    if (self->pupil && g_str_equal (self->pupil->key, key))
      {
        p = self->pupil;
        g_atomic_int_inc (&p->ref);
      }
    g_mutex_unlock (&self->lock);
    if (p == NULL)
      {
        if ((p = pupil_new (plan, self, error)) == NULL)
          return FALSE;
        p->key = g_steal_pointer (&key);
        g_atomic_int_inc (&p->ref);      /* the cache's and this run's */
        g_mutex_lock (&self->lock);
        old = self->pupil;
        self->pupil = p;
        g_mutex_unlock (&self->lock);
        pupil_unref (old);
      }
    run->pupil = p;
    run->scale = p->scale;
    run->z0 = p->z0;
    run->y0 = p->y0;
    run->rows = p->rows;
  }
  return alloc_outputs (state, error);
}

/* ---- cuFFT plans: pooled, one work area per slot ---- */

typedef struct
{
  cufftHandle *dst;
  int          rank;
  int          n[2];
  gboolean     embed;
  int          stride;
  int          dist;
  cufftType    type;
  int          batch;
} PlanSpec;

static char *
plan_key (int device, const PlanSpec *p)
{
  return g_strdup_printf ("%d|%d|%d×%d|%d|%d|%d|%d|%d", device, p->rank, p->n[0], p->rank > 1 ? p->n[1] : 0,
                          p->embed, p->stride, p->dist, (int) p->type, p->batch);
}

static void
spec_add (GArray *specs, cufftHandle *dst, int rank, int n0, int n1, gboolean embed, int stride, int dist,
          cufftType type, guint batch)
{
  PlanSpec p = { dst, rank, { n0, n1 }, embed, stride, dist, type, (int) batch };

  if (batch > 0)
    g_array_append_val (specs, p);
}

/* Every cuFFT plan a slot uses for batches of `batch` planes (the last one
 * of `rest`). */
static void
slot_plan_specs (AiryRunState *state, Slot *s, guint batch, guint rest, GArray *specs)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  guint i;

  if (run->ops)
    for (i = 0; i < run->ops->ops->len; i++)
      {
        AiryOp *op = g_ptr_array_index (run->ops->ops, i);

        if (op->kind == AIRY_OP_FFT)
          spec_add (specs, &s->op_plan[i], 2, op->height, op->width, FALSE, 1, 0, CUFFT_C2C, s->n_lambda);
      }
  else
    {
      /* the pruned 2-D transform of row-interleaved planes (u[y][b][x]):
       * rows: the pupil's rows of all planes, one contiguous block, in place;
       * cols: every column of every plane (stride batch·w), field → field2 */
      int w = (int) plan->psf_width, h = (int) plan->psf_height;

      spec_add (specs, &s->rows, 1, w, 0, FALSE, 1, 0, CUFFT_C2C, run->rows * batch);
      spec_add (specs, &s->cols, 1, h, 0, TRUE, (int) batch * w, 1, CUFFT_C2C, batch * w);
      spec_add (specs, &s->rows_rest, 1, w, 0, FALSE, 1, 0, CUFFT_C2C, run->rows * rest);
      spec_add (specs, &s->cols_rest, 1, h, 0, TRUE, (int) rest * w, 1, CUFFT_C2C, rest * w);
    }
  if (plan->imaging)
    {
      spec_add (specs, &s->r2c, 2, plan->pad_height, plan->pad_width, FALSE, 1, 0, CUFFT_R2C, batch);
      spec_add (specs, &s->r2c_rest, 2, plan->pad_height, plan->pad_width, FALSE, 1, 0, CUFFT_R2C, rest);
      spec_add (specs, &s->r2c_one, 2, plan->pad_height, plan->pad_width, FALSE, 1, 0, CUFFT_R2C, 1);
      if (s->root)
        spec_add (specs, &s->c2r, 2, plan->pad_height, plan->pad_width, FALSE, 1, 0, CUFFT_C2R, 1);
    }
}

static GPtrArray *
spec_keys (int device, GArray *specs)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  guint i;

  for (i = 0; i < specs->len; i++)
    g_ptr_array_add (keys, plan_key (device, &g_array_index (specs, PlanSpec, i)));
  return keys;
}

static void
taken_free (TakenPlan *t)
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
  int n[2] = { spec->n[0], spec->n[1] };
  int *embed = spec->embed ? n : NULL;
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
           || !CUFFT (cufftMakePlanMany (h, spec->rank, n, embed, spec->stride, spec->dist, embed, spec->stride,
                                         spec->dist, spec->type, spec->batch, &work), error))
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
static gboolean
slot_plans (AiryRunState *state, Slot *s, GError **error)
{
  g_autoptr(GArray) specs = g_array_new (FALSE, FALSE, sizeof (PlanSpec));
  guint i;

  slot_plan_specs (state, s, s->batch, s->rest, specs);
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
static void
plans_return (Slot *s)
{
  guint i;

  if (s->taken == NULL)
    return;
  g_mutex_lock (&s->backend->lock);
  plans_destroy (s->backend, s->device, NULL);
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

/* ---- downloads ---- */

static gboolean
dl_init (CudaBackend *self, Slot *s, GError **error)
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
static gboolean
dl_poll (Transfers *dl, GError **error)
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

static gboolean
dl_finish (Transfers *dl, GError **error)
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
static gboolean
dl_push (Slot *s, cudaEvent_t ready, const void *src, void *dst, gsize bytes, gboolean reuse, GError **error)
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
static gboolean
dl_upload (Slot *s, void *dst, const void *src, gsize bytes, GError **error)
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

static void
dl_free (CudaBackend *self, Transfers *dl)
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

/* ---- slots ---- */

static gboolean
upload (void **dst, const void *src, gsize bytes, cudaStream_t stream, GError **error)
{
  return CHECK (cudaMalloc (dst, bytes), error)
         && CHECK (cudaMemcpyAsync (*dst, src, bytes, cudaMemcpyHostToDevice, stream), error);
}

/* The operation list on this device: its factors, scales and grids, two
 * fields of the largest shape (the cuFFT plans come with the slot's). */
static gboolean
slot_alloc_ops (AiryRunState *state, Slot *s, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  guint L = s->n_lambda, i, l;
  g_autofree float *weights = g_new (float, L);

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
    }
  /* the host arrays above are pageable: the copies are done on return,
   * but wait for them before the list's buffers can be freed */
  return CHECK (cudaStreamSynchronize (s->stream), error);
}

static gboolean
slot_alloc (AiryRunState *state, Slot *s, const AiryChunk *chunk, GError **error)
{
  AiryPlan *plan = state->plan;
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  gsize np = plan->imaging ? (gsize) plan->pad_height * plan->pad_width : 0;
  gsize nspec = plan->imaging ? (gsize) plan->pad_height * (plan->pad_width / 2 + 1) : 0;
  gsize nvol = plan->imaging ? (gsize) plan->vol_height * plan->vol_width : 0;
  gboolean varying = plan->imaging && plan->sample.kind != AIRY_SAMPLE_CONSTANT;
  CudaRun *run = state->backend_data;
  CudaBackend *self = run->backend;
  gsize nband = (gsize) run->rows * plan->psf_width;
  gsize fixed, per_plane, free_b = 0, total = 0;
  guint64 budget;
  AiryBatchVerdict verdict;
  gboolean room_made = FALSE;

  if (!device_budget (&budget, error))
    return FALSE;
  if (run->ops)
    {
      s->n_ops = run->ops->ops->len;
      s->op_factor = g_new0 (void *, s->n_ops);
      s->op_phase = g_new0 (float *, s->n_ops);
      s->op_scale = g_new0 (float2 *, s->n_ops);
      s->op_geom = g_new0 (double *, s->n_ops);
      s->op_plan = g_new0 (cufftHandle, s->n_ops);
    }
  s->taken = g_ptr_array_new_with_free_func ((GDestroyNotify) taken_free);

  /* pooled plans this run cannot use go before the free memory is measured */
  {
    g_autoptr(GArray) specs = g_array_new (FALSE, FALSE, sizeof (PlanSpec));
    g_autoptr(GPtrArray) keys = NULL;
    guint want = MIN (MAX_BATCH, chunk->count);

    slot_plan_specs (state, s, want, chunk->count % want, specs);
    keys = spec_keys (s->device, specs);
    g_mutex_lock (&self->lock);
    plans_destroy (self, s->device, keys);
    g_mutex_unlock (&self->lock);
  }

  /* budget the device before allocating: fixed buffers, then as many
   * planes per batch as fit (cuFFT's one work area counted as one more
   * copy of a batch) */
  fixed = (run->ops ? _airy_ops_bytes (run->ops) + 3 * run->ops->max_size * sizeof (float2)
                    : run->pupil->dF[s->device] ? 0 : s->n_lambda * nband * (sizeof (float2) + sizeof (double)))
          + (plan->reduce ? 0 : (gsize) chunk->count * plan->out_height * plan->out_width * sizeof (float))
          + (plan->reduce && !plan->imaging ? n * sizeof (float) : 0)
          + (plan->imaging ? 2 * nspec * sizeof (float2) + np * sizeof (float) : 0);
  per_plane = n * ((run->ops ? 0 : 3 * sizeof (float2)) + sizeof (float))
              + (plan->imaging ? np * sizeof (float) + 2 * nspec * sizeof (float2) : 0)
              + (varying ? nvol * sizeof (float) + np * sizeof (float) + 2 * nspec * sizeof (float2) : 0);
  for (;;)
    {
      if (!CHECK (cudaMemGetInfo (&free_b, &total), error))
        return FALSE;
      verdict = _airy_device_batch (_airy_device_usable (free_b, budget, held_get (self, s->device)), fixed,
                                    per_plane, chunk->count, MAX_BATCH, room_made, &s->batch);
      if (verdict != AIRY_BATCH_MAKE_ROOM)
        break;
      /* short of a full batch: the pooled plans go, and results kept for
       * the viewer move to host memory (the viewer keeps showing them) */
      g_mutex_lock (&self->lock);
      plans_destroy (self, s->device, NULL);
      residents_spill (self, s->device);
      g_mutex_unlock (&self->lock);
      room_made = TRUE;
      /* that went through other devices too */
      if (!CHECK (cudaSetDevice (s->device), error))
        return FALSE;
    }
  if (verdict == AIRY_BATCH_TOO_BIG)
    {
      g_autofree char *need = airy_format_bytes (fixed + per_plane);
      g_autofree char *have = airy_format_bytes (_airy_device_usable (free_b, budget, held_get (self, s->device)));
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("grid.shape: device %d needs at least %s for this run, %s is free"), s->device, need, have);
      return FALSE;
    }
  s->rest = chunk->count % s->batch;

  if (!CHECK (cudaMalloc ((void **) &s->inten, s->batch * n * sizeof (float)), error)
      || !CHECK (cudaMalloc ((void **) &s->zbuf, chunk->count * sizeof (double)), error))
    return FALSE;
  if (run->ops ? !slot_alloc_ops (state, s, error)
               : (!pupil_upload (self, run->pupil, s, error)
                  || !CHECK (cudaMalloc ((void **) &s->field, s->batch * n * sizeof (float2)), error)
                  || !CHECK (cudaMemsetAsync (s->field, 0, s->batch * n * sizeof (float2), s->stream), error)
                  || !CHECK (cudaMalloc ((void **) &s->field2, s->batch * n * sizeof (float2)), error)))
    return FALSE;
  if (!plan->reduce
      && !CHECK (cudaMalloc ((void **) &s->out, (gsize) chunk->count * plan->out_height * plan->out_width * sizeof (float)), error))
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
  if (!slot_plans (state, s, error))
    return FALSE;
  if (s->transfers && !dl_init (self, s, error))
    return FALSE;

  /* what this run took on the device, for `airy-sim bench` */
  {
    size_t now = 0;

    if (!CHECK (cudaMemGetInfo (&now, &total), error))
      return FALSE;
    g_mutex_lock (&self->lock);
    if (free_b > now)
      self->peak[s->device] = MAX (self->peak[s->device], (guint64) (free_b - now));
    g_mutex_unlock (&self->lock);
  }
  return TRUE;
}

static void
slot_free (AiryRunState *state, Slot *s)
{
  guint i;

  cudaSetDevice (s->device);
  if (s->stream)
    cudaStreamSynchronize (s->stream);
  dl_free (s->backend, &s->dl);
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
  cudaFree (s->work);
  if (s->stream)
    cudaStreamDestroy (s->stream);
  /* nothing of this slot's failures may reach the thread's next run */
  cudaGetLastError ();
}

/* The sensor of a plane (resampling into out, then the noise chain), on
 * the device, with the CPU's counter-based random numbers. */
static gboolean
sensor_plane (AiryRunState *state, Slot *s, const float *in, float *out, guint64 stream_id, GError **error)
{
  AiryPlan *plan = state->plan;
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
ops_plane (AiryRunState *state, Slot *s, guint b, const double *z, float *out, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
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

/* Planes [b0, b0 + nb) of this device's chunk, enqueued on its stream. */
static gboolean
execute_batch (AiryRunState *state, Slot *s, const AiryChunk *chunk, guint b0, guint nb, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  gsize n = (gsize) plan->psf_height * plan->psf_width;
  gsize nspec = plan->imaging ? (gsize) plan->pad_height * (plan->pad_width / 2 + 1) : 0;
  gsize nvol = plan->imaging ? (gsize) plan->vol_height * plan->vol_width : 0;
  gsize no = (gsize) plan->out_height * plan->out_width;
  gboolean varying = plan->imaging && plan->sample.kind != AIRY_SAMPLE_CONSTANT;
  gsize nband = (gsize) run->rows * plan->psf_width;
  gboolean direct = !plan->reduce && plan->sensor == NULL && state->psf == NULL;
  float *target = direct ? s->out + (gsize) (b0 - chunk->first) * n : s->inten;
  const double *z = s->zbuf + (b0 - chunk->first);
  guint k, l;

  for (k = 0; run->ops && k < nb; k++)
    if (!ops_plane (state, s, b0 + k, z + k, target + k * n, error))
      return FALSE;
  /* the last, smaller batch has its own layout: zero it once */
  if (!run->ops && nb != s->batch
      && !CHECK (cudaMemsetAsync (s->field, 0, nb * n * sizeof (float2), s->stream), error))
    return FALSE;
  for (l = 0; !run->ops && l < s->n_lambda; l++)
    {
      float2 *band = s->field + (gsize) run->y0 * nb * plan->psf_width;

      if (!CHECK (airy_cuda_launch_generate_band (s->F + l * nband, s->G + l * nband, z, nb, run->rows,
                                                  plan->psf_width, band, s->stream), error)
          || !CUFFT (cufftExecC2C (nb == s->batch ? s->rows : s->rows_rest, (cufftComplex *) band,
                                   (cufftComplex *) band, CUFFT_FORWARD), error)
          || !CUFFT (cufftExecC2C (nb == s->batch ? s->cols : s->cols_rest, (cufftComplex *) s->field,
                                   (cufftComplex *) s->field2, CUFFT_FORWARD), error)
          || !CHECK (airy_cuda_launch_intensity_interleaved (s->field2, run->scale[l], nb, plan->psf_height,
                                                             plan->psf_width, target, l > 0, s->stream), error))
        return FALSE;
    }
  /* the kept PSF: its buffer is reused by the next batch, so the compute
   * stream waits for this copy */
  if (state->psf)
    {
      cudaEvent_t ready = s->dl.ready[0];

      if (!CHECK (cudaEventRecord (ready, s->stream), error)
          || !dl_push (s, ready, target, airy_stack_plane (state->psf, b0), nb * n * sizeof (float), TRUE, error))
        return FALSE;
    }

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
                : dl_upload (s, plane, airy_stack_plane (plan->volume, b0 + k), nvol * sizeof (float), error);
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
  if (plan->reduce)
    return CHECK (airy_cuda_launch_sum_planes (target, nb, n, s->img, s->stream), error);
  if (plan->sensor)
    {
      for (k = 0; k < nb; k++)
        if (!sensor_plane (state, s, target + k * n, s->out + (gsize) (b0 - chunk->first + k) * no, b0 + k, error))
          return FALSE;
      return TRUE;
    }
  return direct
         || CHECK (cudaMemcpyAsync (s->out + (gsize) (b0 - chunk->first) * n, target, nb * n * sizeof (float),
                                    cudaMemcpyDeviceToDevice, s->stream), error);
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
  gsize nout = (gsize) plan->out_height * plan->out_width;
  gsize nvol = plan->imaging ? (gsize) plan->vol_height * plan->vol_width : 0;
  gboolean varying = plan->imaging && plan->sample.kind != AIRY_SAMPLE_CONSTANT;
  g_autofree double *zhost = g_new (double, chunk->count);
  cudaEvent_t done[2] = { NULL, NULL };
  guint b0, k, i = 0, prev_b0 = 0, prev_nb = 0;
  gboolean ok = FALSE;

  /* an earlier failure on this thread must not surface in this run */
  cudaGetLastError ();
  s->host_out = !plan->reduce && !state->want_resident;
  s->transfers = s->host_out || state->psf != NULL || (plan->imaging && plan->volume != NULL);
  if (!CHECK (cudaSetDevice (s->device), error)
      || !CHECK (cudaStreamCreateWithFlags (&s->stream, cudaStreamNonBlocking), error)
      || !slot_alloc (state, s, chunk, error)
      || !CHECK (cudaEventCreateWithFlags (&done[0], cudaEventDisableTiming), error)
      || !CHECK (cudaEventCreateWithFlags (&done[1], cudaEventDisableTiming), error))
    goto out;

  /* every plane's z, once (pageable, but before any work on the stream) */
  for (k = 0; k < chunk->count; k++)
    zhost[k] = plan->z[chunk->first + k] + run->z0;
  if (!CHECK (cudaMemcpyAsync (s->zbuf, zhost, chunk->count * sizeof (double), cudaMemcpyHostToDevice, s->stream),
              error))
    goto out;

  /* a constant sample: one spectrum for every plane */
  if (plan->imaging && !varying
      && (!CHECK (airy_cuda_launch_fill (s->vol, nvol, (float) plan->sample.value, s->stream), error)
          || !CHECK (airy_cuda_launch_pad (s->vol, plan->vol_height, plan->vol_width, 1, s->pad,
                                           plan->pad_height, plan->pad_width, s->stream), error)
          || !CUFFT (cufftExecR2C (s->r2c_one, s->pad, (cufftComplex *) s->vconst), error)))
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
               && !dl_push (s, prev, s->out + (gsize) (prev_b0 - chunk->first) * nout,
                            airy_stack_plane (state->out, prev_b0), prev_nb * nout * sizeof (float), FALSE, error))
              || !CHECK (cudaEventSynchronize (prev), error)
              || (s->transfers && !dl_poll (&s->dl, error)))
            goto out;
          for (k = 0; k < prev_nb; k++)
            _airy_run_state_plane_done (state);
        }
      if (nb == 0)
        break;
      prev_b0 = b0;
      prev_nb = nb;
    }
  ok = !s->transfers || dl_finish (&s->dl, error);

out:
  if (done[0])
    cudaEventDestroy (done[0]);
  if (done[1])
    cudaEventDestroy (done[1]);
  return ok;
}

/* One all-reduce of the sums of the slots with planes (one device: none),
 * with NCCL communicators made once per device set and kept; after a
 * failure they are aborted and made anew by the next reduction. */
static gboolean
cuda_all_reduce (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaBackend *self = backend->priv;
  CudaRun *run = state->backend_data;
  gsize count = plan->imaging ? 2 * (gsize) plan->pad_height * (plan->pad_width / 2 + 1)
                              : (gsize) plan->psf_height * plan->psf_width;
  g_autofree int *devices = g_new (int, run->n_active);
  gboolean ok = TRUE;
  guint i;

  if (run->n_active < 2)
    return TRUE;
  for (i = 0; i < run->n_active; i++)
    devices[i] = run->slots[run->active[i]].device;
  g_mutex_lock (&self->comm_lock);
  if (!NCCL (_airy_comms_get (&self->comms, devices, (int) run->n_active, &comm_ops, NULL), error))
    {
      g_mutex_unlock (&self->comm_lock);
      return FALSE;
    }
  ok = NCCL (ncclGroupStart (), error);
  for (i = 0; ok && i < run->n_active; i++)
    {
      Slot *s = &run->slots[run->active[i]];
      void *buf = plan->imaging ? (void *) s->acc : (void *) s->img;

      ok = CHECK (cudaSetDevice (s->device), error)
           && NCCL (ncclAllReduce (buf, buf, count, ncclFloat, ncclSum, self->comms.comms[i], s->stream), error);
    }
  ok = NCCL (ncclGroupEnd (), ok ? error : NULL) && ok;
  for (i = 0; ok && i < run->n_active; i++)
    ok = CHECK (cudaSetDevice (run->slots[run->active[i]].device), error)
         && CHECK (cudaStreamSynchronize (run->slots[run->active[i]].stream), error);
  if (!ok)
    _airy_comms_failed (&self->comms, &comm_ops, NULL);
  g_mutex_unlock (&self->comm_lock);
  return ok;
}

static gboolean
cuda_finish (AiryBackend *backend, AiryRunState *state, GError **error)
{
  AiryPlan *plan = state->plan;
  CudaRun *run = state->backend_data;
  Slot *s0 = &run->slots[run->active[0]];
  gsize no = (gsize) plan->out_height * plan->out_width;
  guint i;

  if (!plan->reduce)
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
          state->resident = cuda_resident_new (backend, g_steal_pointer (&state->out), parts);
        }
      return TRUE;
    }

  /* one image, made on the root */
  {
    guint h = plan->imaging ? plan->vol_height : plan->psf_height;
    guint w = plan->imaging ? plan->vol_width : plan->psf_width;
    float *image = NULL, *shown = NULL;

    if (!CHECK (cudaSetDevice (s0->device), error)
        || !CHECK (cudaMalloc ((void **) &image, (gsize) h * w * sizeof (float)), error)
        || !CHECK (cudaMalloc ((void **) &shown, no * sizeof (float)), error))
      goto fail;
    if (plan->imaging)
      {
        /* the inverse transform of Σ_z V̂_z·P̂_z, then the "same" crop */
        if (!CUFFT (cufftExecC2R (s0->c2r, (cufftComplex *) s0->acc, s0->pad), error)
            || !CHECK (airy_cuda_launch_crop (s0->pad, plan->pad_width, h, w, plan->psf_height / 2, plan->psf_width / 2,
                                              1.0f / ((float) plan->pad_height * plan->pad_width), image, s0->stream), error))
          goto fail;
      }
    else if (!CHECK (cudaMemcpyAsync (image, s0->img, (gsize) h * w * sizeof (float), cudaMemcpyDeviceToDevice, s0->stream), error))
      goto fail;
    if (plan->sensor)
      {
        if (!sensor_plane (state, s0, image, shown, 0, error))
          goto fail;
      }
    else if (!CHECK (cudaMemcpyAsync (shown, image, no * sizeof (float), cudaMemcpyDeviceToDevice, s0->stream), error))
      goto fail;
    if (!state->want_resident)
      state->out = airy_stack_new (1, plan->out_height, plan->out_width);
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
        state->resident = cuda_resident_new (backend, g_steal_pointer (&state->out), parts);
      }
    else
      cudaFree (shown);
    return TRUE;

  fail:
    cudaFree (image);
    cudaFree (shown);
    return FALSE;
  }
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
      slot_free (state, &run->slots[i]);
  pupil_unref (run->pupil);
  g_free (run->slots);
  g_free (run->active);
  _airy_ops_free (run->ops);
  g_free (run);
  state->backend_data = NULL;
}

static guint64
cuda_peak_memory (AiryBackend *backend, guint device)
{
  CudaBackend *self = backend->priv;

  return device < (guint) self->count ? self->peak[device] : 0;
}

/* The floor for `airy-sim bench`: batched in-place C2C transforms of the
 * stack's planes, timed with events after one warm-up. */
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
  .gl_release = cuda_gl_release,
};

G_MODULE_EXPORT gboolean airy_module_register (const char *path, GError **error);

G_MODULE_EXPORT gboolean
airy_module_register (const char *path,
                      GError    **error)
{
  airy_backend_register (&cuda_ops, path);
  return TRUE;
}

/* The CUDA backend's own header, shared by its parts (airy-cuda-*.c; never
 * by another backend): the check macros, the backend's and a run's slot
 * structures, and what each part offers the others. The parts:
 *
 *   airy-cuda-backend.c  the run: prepare, each device's chunk in batches
 *                        ("produce an intensity batch", "consume an
 *                        intensity batch"), the image, release; the vtable
 *   airy-cuda-slot.c     a device's slot: its buffers (one list, budgeted and
 *                        kept across runs), plans and batch
 *   airy-cuda-common.c   checks, holdings, device budget, pinned transfers
 *   airy-cuda-device.c   open, device info and memory, benchmark floor, the
 *                        cuFFT plan pool
 *   airy-cuda-psf.c      FUSED_PSF: pupil copies per device, batched cuFFT
 *   airy-cuda-ops.c      the unfused field ops, one plane at a time
 *   airy-cuda-imaging.c  CONVOLVE and SENSOR
 *   airy-cuda-nccl.c     the all-reduce across devices
 *   airy-cuda-fit.c      the fit's forward and adjoint passes
 *   airy-cuda-interop.c  results kept on the devices, CUDA–GL interop
 *
 * Every part runs the plan's program (airy-ops-private.h): the op list is
 * all a run is given. */
#pragma once

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <nccl.h>

#include "airy-backend-impl.h"
#include "airy-error.h"
#include "airy-ops-private.h"
#include "airy-plan-private.h"
#include "airy-cuda-kernels.h"
#include "airy-cuda-private.h"

G_BEGIN_DECLS

#define MAX_BATCH 16
#define STAGING_PIECES 4
#define STAGING_BYTES (16u << 20)

G_STATIC_ASSERT (AIRY_GPU_CUDA_OUT_OF_MEMORY == cudaErrorMemoryAllocation);
G_STATIC_ASSERT (AIRY_GPU_CUFFT_ALLOC_FAILED == CUFFT_ALLOC_FAILED);
G_STATIC_ASSERT (AIRY_NCCL_IN_PROGRESS == ncclInProgress);

extern const AiryGpuHooks _airy_cuda_gpu_hooks;

/* Every CUDA, cuFFT and NCCL call goes through here (airy-cuda-private.h):
 * a failure becomes a GError naming the call, the file and the line, the
 * thread's last error is cleared, running out of memory is reported as
 * such, never an abort. */
#define CHECK(expr, error) _airy_gpu_check (&_airy_cuda_gpu_hooks, (int) (expr), #expr, __FILE__, __LINE__, AIRY_GPU_CUDA, (error))
#define CUFFT(expr, error) _airy_gpu_check (&_airy_cuda_gpu_hooks, (int) (expr), #expr, __FILE__, __LINE__, AIRY_GPU_CUFFT, (error))
#define NCCL(expr, error)  _airy_gpu_check (&_airy_cuda_gpu_hooks, (int) (expr), #expr, __FILE__, __LINE__, AIRY_GPU_NCCL, (error))

/* ---- state ---- */

/* FUSED_PSF's device copies, kept across runs of the same optics: the op
 * (made by the engine's fusion pass, F and G on the pupil's rows, G in
 * double as on the CPU) is kept with them; each device gets its copy once,
 * uploaded on the stream of the run that needed it, and `ready` orders
 * every other run's use after that copy. The key is the op's hash, which
 * leaves z out: a run that only changes the planes uploads nothing. */
typedef struct
{
  gint          ref;
  guint64       hash;        /* AiryFusedPsf.hash */
  AiryOp       *op;          /* the FUSED_PSF op (host F, G, scale, z0) */
  guint         n_lambda;
  guint         width;
  gsize         nband;       /* rows × width */
  guint         y0, rows;
  int           count;       /* devices */
  float2      **dF;          /* per device, NULL until uploaded */
  double      **dG;
  float       **dS;          /* the op's scale per entry */
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
  guint                  pupil_builds; /* counters (airy_backend_get_counter): pupils made, */
  guint                  pupil_uploads;/* device copies of them */
  GHashTable            *plans;        /* key → PooledPlan*: the last run's cuFFT plans, per device */
  GPtrArray             *blocks;       /* AiryDeviceBlock*: the last run's slot buffers, per device */
  guint                  allocations;  /* counters: slot buffers cudaMalloc'd, */
  guint                  convolutions; /* padded forward transforms of intensity planes or their sum */
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
  guint         n_lambda; /* entries of a plane: wavelengths × vectorial components */
  float2       *F;        /* n_lambda × rows × w: the pupil's rows (borrowed) */
  double       *G;
  float        *S;        /* n_lambda: the op's scale per entry (borrowed) */
  float2       *field;    /* h × (n_lambda · batch) × w (airy-cuda-layout.h), zero outside the pupil's rows */
  float2       *field2;   /* the column pass's output, same layout */
  float        *chan;     /* per-wavelength runs: n_channels × batch × h × w */
  float        *inten;    /* batch × h × w */
  double       *zbuf;     /* the chunk's planes: z + the objective's z */
  float        *out;      /* this device's planes of the stack (no reduction) */
  float        *img;      /* Σ_z I (SUM, or CONVOLVE of a sample constant in z) */
  float        *pad;      /* batch × ph × pw */
  float2       *spec;     /* batch × nspec */
  float        *vol;      /* batch × vol h × vol w (z-varying sample) */
  float2       *vspec;    /* batch × nspec */
  float2       *vconst;   /* the constant sample's spectrum */
  float2       *acc;      /* Σ_z P̂·V̂ (a sample varying in z), or (Σ_z P)^·V̂ */
  guint64       bytes[AIRY_SLOT_N_BUFFERS];   /* the list's buffers (airy-cuda-private.h) as allocated */
  cufftHandle   rows, rows_rest, cols, cols_rest, r2c, r2c_rest, r2c_one, c2r;
  guint         rest;
  void         *work;     /* the one work area of all the slot's cuFFT plans */
  size_t        work_bytes;
  /* the operation list: two fields of the largest shape, each op's data */
  float2       *ga, *gb;
  void        **op_factor;
  double      **op_phase;
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
  AiryStages     stages;   /* the shape of the plan's program */
  const AiryConvolveOp *conv; /* CONVOLVE's data (the sample, the padding), or NULL */
  Slot          *slots;
  guint         *active;   /* the slots with planes; active[0] is the root */
  guint          n_active;
  double         z0;       /* the source's extra z, added to each plane's on the device */
  Pupil         *pupil;    /* FUSED_PSF */
  guint          n_ops;    /* otherwise: the field ops before INTENSITY */
  gboolean       sum_first; /* Σ_z I on the device: SUM, or CONVOLVE of a sample constant in z */
  CudaBackend   *backend;
} CudaRun;

/* ---- cuFFT plans: pooled, one work area per slot ---- */

typedef struct
{
  cufftHandle *dst;
  int          rank;
  long long    n[2];
  gboolean     embed;
  long long    stride;
  long long    dist;
  cufftType    type;
  long long    batch;
} PlanSpec;

/* ---- between the parts (airy-cuda-*.c) ---- */

/* the run ends in one image (CONVOLVE or SUM) */
static inline gboolean
_airy_cuda_run_reduces (const CudaRun *run)
{
  return run->stages.convolve != NULL || run->stages.sum != NULL;
}

/* slots (airy-cuda-slot.c) */
gboolean      _airy_cuda_slot_alloc    (AiryRunState *state, Slot *s, const AiryChunk *chunk, GError **error);
void          _airy_cuda_slot_free     (Slot *s);

/* common */
extern const AiryBlockOps _airy_cuda_block_ops;
void          _airy_cuda_held_add      (CudaBackend *self, int device, gint64 bytes);
guint64       _airy_cuda_held_get      (CudaBackend *self, int device);
gboolean      _airy_cuda_device_budget (guint64 *budget, GError **error);
gboolean      _airy_cuda_upload        (void **dst, const void *src, gsize bytes, cudaStream_t stream, GError **error);
AiryStack    *_airy_cuda_geometry_new  (guint depth, guint height, guint width);
gboolean      _airy_cuda_dl_init       (CudaBackend *self, Slot *s, GError **error);
gboolean      _airy_cuda_dl_poll       (Transfers *dl, GError **error);
gboolean      _airy_cuda_dl_finish     (Transfers *dl, GError **error);
gboolean      _airy_cuda_dl_push       (Slot *s, cudaEvent_t ready, const void *src, void *dst, gsize bytes,
                                        gboolean reuse, GError **error);
gboolean      _airy_cuda_dl_upload     (Slot *s, void *dst, const void *src, gsize bytes, GError **error);
void          _airy_cuda_dl_free       (CudaBackend *self, Transfers *dl);

/* device */
gboolean      _airy_cuda_open          (AiryBackend *backend, GError **error);
void          _airy_cuda_close         (AiryBackend *backend);
guint         _airy_cuda_n_devices     (AiryBackend *backend);
void          _airy_cuda_device_info   (AiryBackend *backend, guint device, AiryDeviceInfo *info);
guint64       _airy_cuda_free_memory   (AiryBackend *backend, guint device);
guint64       _airy_cuda_peak_memory   (AiryBackend *backend, guint device);
guint64       _airy_cuda_counter       (AiryBackend *backend, const char *name);
double        _airy_cuda_fft_floor     (AiryBackend *backend, guint device, guint h, guint w, guint planes,
                                        GError **error);
double        _airy_cuda_download_floor (AiryBackend *backend, guint device, guint64 bytes, GError **error);
void          _airy_cuda_plans_destroy (CudaBackend *self, int device, GPtrArray *keep);
void          _airy_cuda_spec_add      (GArray *specs, cufftHandle *dst, int rank, guint n0, guint n1, gboolean embed,
                                        guint64 stride, guint64 dist, cufftType type, guint64 batch);
gboolean      _airy_cuda_make_plan     (cufftHandle handle, const PlanSpec *spec, size_t *work, GError **error);
GPtrArray    *_airy_cuda_spec_keys     (int device, GArray *specs);
void          _airy_cuda_taken_free    (TakenPlan *t);
gboolean      _airy_cuda_slot_plans    (Slot *s, GArray *specs, GError **error);
void          _airy_cuda_plans_return  (Slot *s);

/* fused PSF */
Pupil        *_airy_cuda_pupil_get     (CudaBackend *self, const AiryOp *fused);
void          _airy_cuda_pupil_unref   (Pupil *p);
gboolean      _airy_cuda_pupil_upload  (CudaBackend *self, Pupil *p, Slot *s, GError **error);
void          _airy_cuda_psf_specs     (AiryRunState *state, Slot *s, guint batch, guint rest, GArray *specs);
gboolean      _airy_cuda_psf_alloc     (AiryRunState *state, Slot *s, GError **error);
gboolean      _airy_cuda_psf_produce   (AiryRunState *state, Slot *s, guint nb, const double *z, float *out,
                                        GError **error);

/* field ops */
gboolean      _airy_cuda_ops_check     (GPtrArray *ops, CudaRun *run, GError **error);
void          _airy_cuda_ops_specs     (AiryRunState *state, Slot *s, GArray *specs);
gboolean      _airy_cuda_ops_alloc     (AiryRunState *state, Slot *s, GError **error);
gboolean      _airy_cuda_ops_produce   (AiryRunState *state, Slot *s, guint b0, guint nb, const double *z,
                                        float *out, GError **error);

/* intensity stage */
void          _airy_cuda_imaging_specs (AiryRunState *state, Slot *s, guint batch, guint rest, GArray *specs);
gboolean      _airy_cuda_imaging_alloc (AiryRunState *state, Slot *s, GError **error);
gboolean      _airy_cuda_imaging_start (AiryRunState *state, Slot *s, GError **error);
gboolean      _airy_cuda_imaging_consume (AiryRunState *state, Slot *s, guint b0, guint nb, const float *in,
                                          GError **error);
gboolean      _airy_cuda_imaging_image (AiryRunState *state, Slot *s, float *image, GError **error);
gboolean      _airy_cuda_sensor_plane  (AiryRunState *state, Slot *s, const float *in, float *out,
                                        guint64 stream_id, GError **error);

/* the fit's model (airy-cuda-fit.c) */
gpointer      _airy_cuda_fit_new       (AiryBackend *backend, guint device, const AiryFitShape *shape,
                                        GError **error);
gboolean      _airy_cuda_fit_set_data  (AiryBackend *backend, gpointer fit, const float *dpos, const double *dconst,
                                        const float *data, GError **error);
gboolean      _airy_cuda_fit_pass      (AiryBackend *backend, gpointer fit, AiryFitPass *pass, GError **error);
void          _airy_cuda_fit_free      (AiryBackend *backend, gpointer fit);

/* NCCL */
extern const AiryCommOps _airy_cuda_comm_ops;
gboolean      _airy_cuda_all_reduce    (AiryBackend *backend, AiryRunState *state, GError **error);

/* results for the viewer, GL interop */
extern const AiryGlRegistrationOps _airy_cuda_gl_registration_ops;
AiryResident *_airy_cuda_resident_new  (AiryBackend *backend, AiryStack *geometry, GPtrArray *parts);
void          _airy_cuda_residents_spill (CudaBackend *self, int device);
void          _airy_cuda_residents_release_all (CudaBackend *self);
void          _airy_cuda_gl_release    (AiryBackend *backend, gpointer context);

G_END_DECLS

/* airy-backend-impl.h: what a backend implements, for backends and
 * modules only (never installed, never included by app/ or ui/).
 *
 * A backend is one C vtable (ggml style); a NULL slot means "not
 * supported", and the public wrappers in airy-backend.h own that rule, so
 * callers never reach into the vtable. Backends never see GTK, GL headers
 * or each other's headers. */
#pragma once

#include "airy-backend.h"
#include "airy-comm.h"
#include "airy-fit-kernels.h"
#include "airy-run.h"

G_BEGIN_DECLS

typedef struct _AiryPlan     AiryPlan;
typedef struct _AiryRunState AiryRunState;
typedef struct _AiryOp       AiryOp;

/* One contiguous piece of the batch axis on one device of the run. */
typedef struct
{
  guint slot;       /* position in the run's device list */
  guint device;     /* the backend's device index */
  guint first;      /* first plane */
  guint count;      /* planes */
  guint threads;    /* host threads for this device (CPU) */
} AiryChunk;

/* One run of a plan (DESIGN §4: the compiled plan is separate from a
 * run's state). The plan (airy-plan-private.h: geometry and the op list,
 * compiled once and shared by every run of the same optics) is read-only
 * here; everything that belongs to this one run is in the state: the
 * devices' chunks, the outputs, progress and cancellation, and the
 * backend's own data for the run. */
struct _AiryRunState
{
  AiryPlan        *plan;           /* a reference */
  /* What this backend computes (airy-ops-private.h): the plan's program,
   * or its beginning ops[0 … n) when the backend does not run an op of the
   * intensity stage (supports_op): then the engine hands the planes it
   * made to the CPU backend, which runs the rest (the fallback per op). */
  GPtrArray       *ops;            /* plan->ops or a prefix of them (a reference) */
  gboolean         reduce;         /* the program ends in one image (CONVOLVE or SUM) */
  guint            out_height;     /* its result's planes */
  guint            out_width;
  AiryStack       *input;          /* the fallback's run: the planes (this process's part) that another
                                    * backend made, instead of the field stage (CPU only) */
  guint            tail_from;      /* the engine's: the op the CPU backend takes over from (0: none) */
  AiryComm        *comm;           /* the run's processes (airy-comm.h) */
  guint            part_first;     /* this process's planes: [part_first, */
  guint            part_count;     /*   part_first + part_count) of the plan's */
  guint            n_slots;
  AiryChunk       *chunks;         /* one per slot */
  gboolean         keep_psf;       /* imaging: also return the PSF stack */
  gboolean         want_resident;  /* AiryRunOptions.resident */
  AiryStack       *out;            /* host result */
  AiryStack       *psf;            /* host PSF stack when kept */
  gboolean         per_wavelength; /* AiryRunOptions.per_wavelength */
  guint            n_channels;     /*   then one stack per wavelength (this part's */
  AiryStack      **channels;       /*   planes), out their sum */
  AiryResident    *resident;       /* the backend's result when wanted (finish) */
  gpointer         backend_data;

  GMutex           lock;
  guint            done;
  AiryProgressFunc progress;
  gpointer         progress_data;
  GCancellable    *cancellable;
  gint64           reduce_us;      /* in _airy_run_state_reduce_ranks */
};

/* The host planes of global plane b of this process's part (out: the
 * result unless the run reduces; psf: the kept PSF stack). */
float    *_airy_run_state_out_plane     (AiryRunState *state,
                                         guint         b);
float    *_airy_run_state_psf_plane     (AiryRunState *state,
                                         guint         b);
/* Global plane b of wavelength l's stack (per_wavelength runs). */
float    *_airy_run_state_channel_plane (AiryRunState *state,
                                         guint         l,
                                         guint         b);
/* The reduction across processes, after the one across devices: buf (count
 * floats, the root slot's partial sum, or zeros on a process without
 * planes) becomes the sum over every rank, in place. */
gboolean  _airy_run_state_reduce_ranks  (AiryRunState *state,
                                         float        *buf,
                                         gsize         count,
                                         GError      **error);
/* For backends: one more plane done (progress, thread-safe). */
void      _airy_run_state_plane_done    (AiryRunState *state);
/* The host stacks a backend fills: the result (unless the run reduces to
 * one image, made at the end) and the PSF stack when kept. */
gboolean  _airy_run_state_alloc_outputs (AiryRunState *state,
                                         GError      **error);
/* The host stacks of each wavelength (per_wavelength runs; part of
 * _airy_run_state_alloc_outputs, for a backend that keeps the sum itself). */
gboolean  _airy_run_state_alloc_channels (AiryRunState *state,
                                          GError      **error);
/* Voxel sizes, plane positions and provenance of the finished stacks. */
void      _airy_run_state_set_metadata  (AiryRunState *state);
/* The slots that have planes, in order: active[0] is the reduction's root
 * (where the image is made); returns how many. */
guint     _airy_run_state_active_slots  (AiryRunState *state,
                                         guint        *active);

/* The fit's model on one device (airy-fit-model.c; the steps are
 * airy-fit-kernels.h's): its constant parts, given once. */
typedef struct
{
  guint          L, height, width;  /* entries (wavelengths × components), plane size */
  guint          y0, rows;          /* the pupil's band */
  guint          win_y0, win_x0, win_h, win_w;
  guint          depth;             /* planes of the data */
  const float   *scale;             /* L: the op's s_l */
  const double  *G;                 /* L × rows × width: defocus phase per µm */
} AiryFitShape;

/* One forward pass over some planes, and its adjoint when grad: the host
 * makes base = F·e^{iΦ} (the parameters' phase) and finishes the
 * gradient from M. */
typedef struct
{
  const float   *base;              /* L × rows × width complex (interleaved) */
  guint          n;                 /* planes in this pass */
  const guint   *k;                 /* their data planes (< depth) */
  const double  *zt;                /* their defocus, µm (z_k − z_b + z0) */
  double         A, B;              /* amplitude, background */
  gboolean       has_data;          /* a loss of the data set last (else μ only) */
  gboolean       poisson;           /* Poisson, else least squares */
  double         inv_var;
  gboolean       grad;
  float         *mu;                /* n × window μ, or NULL */
  /* results */
  double         loss, dA, dB;      /* Σ loss, ∂L/∂A, ∂L/∂B */
  double        *M;                 /* grad: L × rows × width, Σ_planes −2 Im(conj(V)·u) (set, not added) */
} AiryFitPass;

/* The kernels' arguments of one pass (airy-fit-kernels.h), with the
 * device's copies of the scales and the data. */
static inline AiryFitLossArgs
_airy_fit_loss_args (const AiryFitShape *shape, const AiryFitPass *pass, const float *scale, const float *dpos,
                     const double *dconst, const float *data)
{
  AiryFitLossArgs a = {
    .L = shape->L, .h = shape->height, .w = shape->width, .y0 = shape->y0, .rows = shape->rows,
    .win_y0 = shape->win_y0, .win_x0 = shape->win_x0, .win_h = shape->win_h, .win_w = shape->win_w,
    .scale = scale, .A = pass->A, .B = pass->B, .logB = pass->B > 0 ? log (pass->B) : 0.0,
    .poisson = pass->has_data && pass->poisson, .inv_var = pass->inv_var,
    .dpos = dpos, .dconst = dconst, .data = pass->has_data && !pass->poisson ? data : NULL,
    .grad = pass->grad,
  };

  return a;
}

struct _AiryBackendOps
{
  const char *name;
  const char *description;

  /* Probe; FALSE with an error when the backend cannot run here
   * ("no CUDA device: …"). Called once, when registered. */
  gboolean (*open)          (AiryBackend     *backend,
                             GError         **error);
  void     (*close)         (AiryBackend     *backend);
  guint    (*n_devices)     (AiryBackend     *backend);
  void     (*device_info)   (AiryBackend     *backend,
                             guint            device,
                             AiryDeviceInfo  *info);
  guint64  (*free_memory)   (AiryBackend     *backend,
                             guint            device);

  /* The backend's state for one run on the chosen devices
   * (state->backend_data), then chunks (one call per device, from its own
   * thread), the cross-device reduction, and the host copy of the result,
   * or (state->want_resident) the result kept by the backend in
   * state->resident (airy-resident.h; NULL: airy_run keeps the host stack
   * as a resident of the CPU backend). release is called after every
   * prepare, also a failed one. What to compute is state->plan's op list
   * (airy-ops-private.h), nothing else. */
  gboolean (*prepare)       (AiryBackend     *backend,
                             AiryRunState    *state,
                             GError         **error);
  gboolean (*execute)       (AiryBackend     *backend,
                             AiryRunState    *state,
                             const AiryChunk *chunk,
                             GError         **error);
  gboolean (*all_reduce)    (AiryBackend     *backend,
                             AiryRunState    *state,
                             GError         **error);
  gboolean (*finish)        (AiryBackend     *backend,
                             AiryRunState    *state,
                             GError         **error);
  void     (*release)       (AiryBackend     *backend,
                             AiryRunState    *state);
  /* runs keep one stack per wavelength besides the sum
   * (AiryRunOptions.per_wavelength, state->channels) */
  gboolean   per_wavelength;

  /* Whether the backend runs this op (its kind, or this op's data: FFTW's
   * solvers say "applicable"). The engine gives the backend the program up
   * to the first op it does not run: an op of the field stage runs the
   * whole program on the CPU backend instead, an op of the intensity stage
   * (CONVOLVE, SUM, SENSOR) leaves that op and the ones after it to the
   * CPU backend, on the planes this one made (state->ops). NULL: every op
   * (a backend from before the slot). */
  gboolean (*supports_op)   (AiryBackend     *backend,
                             const AiryOp    *op);

  /* The benchmark floor on this backend: seconds for `planes` bare 2-D
   * complex single-precision transforms of h × w on one device. */
  double   (*fft_floor)     (AiryBackend     *backend,
                             guint            device,
                             guint            height,
                             guint            width,
                             guint            planes,
                             GError         **error);

  /* The PCIe floor of `airy-sim bench --resident`: seconds for a bare
   * copy of `bytes` from the device into pinned host memory. NULL for a
   * backend whose results are in host memory. */
  double   (*download_floor) (AiryBackend    *backend,
                              guint           device,
                              guint64         bytes,
                              GError        **error);

  /* The most device memory one run allocated on `device` since the
   * backend opened (bytes: buffers, FFT plans and their work areas). */
  guint64  (*peak_memory)   (AiryBackend     *backend,
                             guint            device);

  /* The viewer's GL context is going away (its textures with it): drop
   * whatever the backend registered for it (CUDA–GL registrations); the
   * context is current. Slices reach the textures through the resident's
   * slots (AiryResidentOps.to_texture). */
  void     (*gl_release)    (AiryBackend     *backend,
                             gpointer         context);

  /* Debug and benchmark counters by name (airy_backend_get_counter). */
  guint64  (*counter)       (AiryBackend     *backend,
                             const char      *name);

  /* The fit's model on one device (AiryFitShape, AiryFitPass): made once
   * per fit, the data set when it changes (Poisson: d⁺ and d⁺·log d⁺ − d;
   * least squares: d; depth × window each), then one call per forward and
   * adjoint pass. Called from the fitting thread only. */
  gpointer (*fit_new)       (AiryBackend        *backend,
                             guint               device,
                             const AiryFitShape *shape,
                             GError            **error);
  gboolean (*fit_set_data)  (AiryBackend        *backend,
                             gpointer            fit,
                             const float        *dpos,
                             const double       *dconst,
                             const float        *data,
                             GError            **error);
  gboolean (*fit_pass)      (AiryBackend        *backend,
                             gpointer            fit,
                             AiryFitPass        *pass,
                             GError            **error);
  void     (*fit_free)      (AiryBackend        *backend,
                             gpointer            fit);
};

/* The fit's slots, with the empty-slot rule (airy-fit-model.c): new fails
 * with "backend X: cannot fit" when the backend has none. */
gboolean      _airy_backend_can_fit      (AiryBackend          *backend);
gpointer      _airy_backend_fit_new      (AiryBackend          *backend,
                                          guint                 device,
                                          const AiryFitShape   *shape,
                                          GError              **error);
gboolean      _airy_backend_fit_set_data (AiryBackend          *backend,
                                          gpointer              fit,
                                          const float          *dpos,
                                          const double         *dconst,
                                          const float          *data,
                                          GError              **error);
gboolean      _airy_backend_fit_pass     (AiryBackend          *backend,
                                          gpointer              fit,
                                          AiryFitPass          *pass,
                                          GError              **error);
void          _airy_backend_fit_free     (AiryBackend          *backend,
                                          gpointer              fit);

/* supports_op's rule: NULL runs every op. */
gboolean      _airy_backend_supports_op  (AiryBackend          *backend,
                                          const AiryOp         *op);

/* Registers a backend (built in, or from a module's airy_module_register)
 * and probes it with its open slot; the same name twice gives the first. */
AiryBackend  *airy_backend_register   (const AiryBackendOps *ops,
                                       const char           *module_path);

G_END_DECLS

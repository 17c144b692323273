/* airy-backend-impl.h: what a backend implements, for backends and
 * modules only (never installed, never included by app/ or ui/).
 *
 * A backend is one C vtable (ggml style); a NULL slot means "not
 * supported", and the public wrappers in airy-backend.h own that rule, so
 * callers never reach into the vtable. Backends never see GTK, GL headers
 * or each other's headers. */
#pragma once

#include "airy-backend.h"

G_BEGIN_DECLS

typedef struct _AiryPlan AiryPlan;

/* One contiguous piece of the batch axis on one device of the run. */
typedef struct
{
  guint slot;       /* position in the run's device list */
  guint device;     /* the backend's device index */
  guint first;      /* first plane */
  guint count;      /* planes */
  guint threads;    /* host threads for this device (CPU) */
} AiryChunk;

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

  /* Run state for one plan on the chosen devices, then chunks (one call
   * per device, from its own thread), the cross-device reduction, and the
   * host copy of the result, or (plan->want_resident) the result kept by
   * the backend in plan->resident (airy-resident.h; NULL: airy_run keeps
   * the host stack as a resident of the CPU backend). release is called
   * after every prepare, also a failed one. */
  gboolean (*prepare)       (AiryBackend     *backend,
                             AiryPlan        *plan,
                             GError         **error);
  gboolean (*execute)       (AiryBackend     *backend,
                             AiryPlan        *plan,
                             const AiryChunk *chunk,
                             GError         **error);
  gboolean (*all_reduce)    (AiryBackend     *backend,
                             AiryPlan        *plan,
                             GError         **error);
  gboolean (*finish)        (AiryBackend     *backend,
                             AiryPlan        *plan,
                             GError         **error);
  void     (*release)       (AiryBackend     *backend,
                             AiryPlan        *plan);

  /* The benchmark floor on this backend: seconds for `planes` bare 2-D
   * complex single-precision transforms of h × w on one device. */
  double   (*fft_floor)     (AiryBackend     *backend,
                             guint            device,
                             guint            height,
                             guint            width,
                             guint            planes,
                             GError         **error);

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
};

/* Registers a backend (built in, or from a module's airy_module_register)
 * and probes it with its open slot; the same name twice gives the first. */
AiryBackend  *airy_backend_register   (const AiryBackendOps *ops,
                                       const char           *module_path);

G_END_DECLS

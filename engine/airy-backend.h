#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "airy-resident.h"

G_BEGIN_DECLS

typedef struct _AiryBackend AiryBackend;
typedef struct _AiryPlan    AiryPlan;

typedef struct
{
  char    *name;        /* "CPU (virtual device 0)", "NVIDIA H200" */
  char    *detail;      /* "2 threads", "compute 9.0, 139 GiB" */
  guint64  memory;      /* bytes */
  guint    threads;
} AiryDeviceInfo;

void airy_device_info_clear (AiryDeviceInfo *info);

/* One contiguous piece of the batch axis on one device of the run. */
typedef struct
{
  guint slot;       /* position in the run's device list */
  guint device;     /* the backend's device index */
  guint first;      /* first plane */
  guint count;      /* planes */
  guint threads;    /* host threads for this device (CPU) */
} AiryChunk;

/**
 * AiryBackendOps:
 * The one vtable every backend implements (ggml style); a NULL slot means
 * "not supported". Backends never see GTK, GL headers or each other.
 */
typedef struct _AiryBackendOps
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
} AiryBackendOps;

struct _AiryBackend
{
  const AiryBackendOps *ops;
  gpointer              priv;
  gboolean              available;
  char                 *unavailable_reason;
  char                 *module_path;     /* NULL for built-in backends */
};

/* Registry. */
AiryBackend  *airy_backend_register   (const AiryBackendOps *ops,
                                       const char           *module_path);
AiryBackend  *airy_backend_lookup     (const char           *name);
GPtrArray    *airy_backend_list       (void);
AiryBackend  *airy_backend_choose     (const char           *name,
                                       GError              **error);

/* Every backend's gl_release for this context. */
void          airy_backends_gl_release (gpointer             context);

/* Modules: shared libraries on the modules path that export
 * `gboolean airy_module_register (GError **error)` and register backends
 * and element types from it. */
gboolean      airy_modules_load_dir   (const char           *dir,
                                       GError              **error);
GPtrArray    *airy_modules_loaded     (void);
GPtrArray    *airy_modules_errors     (void);
char        **airy_modules_path       (void);

G_END_DECLS

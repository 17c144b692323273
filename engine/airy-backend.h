#pragma once

#include <glib.h>
#include <gio/gio.h>

#include "airy-resident.h"

G_BEGIN_DECLS

typedef struct _AiryBackend    AiryBackend;
typedef struct _AiryBackendOps AiryBackendOps;

typedef struct
{
  char    *name;        /* "CPU (virtual device 0)", "NVIDIA H200" */
  char    *detail;      /* "2 threads", "compute 9.0, 139 GiB" */
  guint64  memory;      /* bytes */
  guint    threads;
} AiryDeviceInfo;

void airy_device_info_clear (AiryDeviceInfo *info);

/* A registered backend. Callers use the functions below, which own the
 * rule that an empty slot of the backend's vtable means "not supported";
 * the vtable itself (AiryBackendOps) is for backends and modules only, in
 * airy-backend-impl.h. The fields are read-only. */
struct _AiryBackend
{
  const AiryBackendOps *ops;
  gpointer              priv;
  gboolean              available;
  char                 *unavailable_reason;
  char                 *module_path;     /* NULL for built-in backends */
};

const char   *airy_backend_get_name        (AiryBackend *backend);
/* untranslated (N_): the caller shows it with _() */
const char   *airy_backend_get_description (AiryBackend *backend);
gboolean      airy_backend_is_available    (AiryBackend *backend);
/* why it cannot run here ("no CUDA device: …"); NULL when available */
const char   *airy_backend_get_unavailable_reason (AiryBackend *backend);
/* the module it came from; NULL for built-in backends */
const char   *airy_backend_get_module_path (AiryBackend *backend);
/* 0 for a backend that is not available */
guint         airy_backend_n_devices       (AiryBackend *backend);
/* FALSE (info cleared) for a device that does not exist */
gboolean      airy_backend_device_info     (AiryBackend    *backend,
                                            guint           device,
                                            AiryDeviceInfo *info);
/* bytes free on the device now; 0 when the backend does not say */
guint64       airy_backend_free_memory     (AiryBackend *backend,
                                            guint        device);
/* the most device memory one run allocated on `device` since the backend
 * opened; 0 when the backend does not track it (the CPU) */
guint64       airy_backend_peak_memory     (AiryBackend *backend,
                                            guint        device);
/* TRUE when the backend has its own benchmark floor (airy_backend_fft_floor) */
gboolean      airy_backend_has_fft_floor   (AiryBackend *backend);
/* seconds for `planes` bare 2-D complex single-precision transforms of
 * height × width on one device; -1 with an error when it has none */
double        airy_backend_fft_floor       (AiryBackend *backend,
                                            guint        device,
                                            guint        height,
                                            guint        width,
                                            guint        planes,
                                            GError     **error);
/* TRUE when the backend's results live off the host, so that moving one
 * home has a floor (airy_backend_download_floor) */
gboolean      airy_backend_has_download_floor (AiryBackend *backend);
/* seconds for a bare copy of `bytes` from the device into pinned host
 * memory (the PCIe floor of a download); -1 with an error when it has none */
double        airy_backend_download_floor  (AiryBackend *backend,
                                            guint        device,
                                            guint64      bytes,
                                            GError     **error);
/* A named counter the backend keeps for tests and benchmarks (CUDA:
 * "pupil-builds", "pupil-uploads", "convolutions", "buffers-allocated";
 * CPU: "convolutions"); 0 for one it does not know. */
guint64       airy_backend_get_counter     (AiryBackend *backend,
                                            const char  *name);

/* Registry (backends register themselves: airy-backend-impl.h). */
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
/**
 * airy_modules_path:
 *
 * Returns: (transfer full) (array zero-terminated=1): the folders modules are loaded from, in order
 */
char        **airy_modules_path       (void);

G_END_DECLS

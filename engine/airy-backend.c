#define G_LOG_DOMAIN "airy-backend"
#define _GNU_SOURCE   /* dladdr */

#include "config.h"

#include <glib/gi18n-lib.h>

#include <dlfcn.h>
#include <gmodule.h>
#include <string.h>

#include "airy-backend-impl.h"
#include "airy-error.h"
#include "airy-options-private.h"

static GMutex     lock;
static GPtrArray *backends;       /* AiryBackend* */
static GPtrArray *modules;        /* char* paths loaded */
static GPtrArray *module_errors;  /* char* */

void
airy_device_info_clear (AiryDeviceInfo *info)
{
  g_clear_pointer (&info->name, g_free);
  g_clear_pointer (&info->detail, g_free);
}

AiryBackend *
airy_backend_register (const AiryBackendOps *ops,
                       const char           *module_path)
{
  AiryBackend *backend;
  g_autoptr(GError) error = NULL;
  guint i;

  g_return_val_if_fail (ops != NULL && ops->name != NULL, NULL);

  g_mutex_lock (&lock);
  if (backends == NULL)
    backends = g_ptr_array_new ();
  for (i = 0; i < backends->len; i++)
    if (g_str_equal (((AiryBackend *) g_ptr_array_index (backends, i))->ops->name, ops->name))
      {
        g_mutex_unlock (&lock);
        return g_ptr_array_index (backends, i);
      }
  backend = g_new0 (AiryBackend, 1);
  backend->ops = ops;
  backend->module_path = g_strdup (module_path);
  g_ptr_array_add (backends, backend);
  g_mutex_unlock (&lock);

  backend->available = ops->open == NULL || ops->open (backend, &error);
  if (!backend->available)
    backend->unavailable_reason = g_strdup (error ? error->message : "unavailable");
  return backend;
}

AiryBackend *
airy_backend_lookup (const char *name)
{
  AiryBackend *found = NULL;
  guint i;

  g_mutex_lock (&lock);
  for (i = 0; backends && i < backends->len; i++)
    if (g_str_equal (((AiryBackend *) g_ptr_array_index (backends, i))->ops->name, name))
      found = g_ptr_array_index (backends, i);
  g_mutex_unlock (&lock);
  return found;
}

GPtrArray *
airy_backend_list (void)
{
  GPtrArray *list = g_ptr_array_new ();
  guint i;

  g_mutex_lock (&lock);
  for (i = 0; backends && i < backends->len; i++)
    g_ptr_array_add (list, g_ptr_array_index (backends, i));
  g_mutex_unlock (&lock);
  return list;
}

/* ---- the callers' side of the vtable: empty slots are "not supported" ---- */

const char *
airy_backend_get_name (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->ops->name;
}

const char *
airy_backend_get_description (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->ops->description ? backend->ops->description : backend->ops->name;
}

gboolean
airy_backend_is_available (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  return backend->available;
}

const char *
airy_backend_get_unavailable_reason (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->available ? NULL : backend->unavailable_reason;
}

const char *
airy_backend_get_module_path (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, NULL);
  return backend->module_path;
}

guint
airy_backend_n_devices (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, 0);
  if (!backend->available || backend->ops->n_devices == NULL)
    return 0;
  return backend->ops->n_devices (backend);
}

gboolean
airy_backend_device_info (AiryBackend    *backend,
                          guint           device,
                          AiryDeviceInfo *info)
{
  g_return_val_if_fail (backend != NULL && info != NULL, FALSE);
  memset (info, 0, sizeof *info);
  if (device >= airy_backend_n_devices (backend) || backend->ops->device_info == NULL)
    return FALSE;
  backend->ops->device_info (backend, device, info);
  return TRUE;
}

guint64
airy_backend_free_memory (AiryBackend *backend,
                          guint        device)
{
  g_return_val_if_fail (backend != NULL, 0);
  if (backend->ops->free_memory == NULL || device >= airy_backend_n_devices (backend))
    return 0;
  return backend->ops->free_memory (backend, device);
}

guint64
airy_backend_peak_memory (AiryBackend *backend,
                          guint        device)
{
  g_return_val_if_fail (backend != NULL, 0);
  if (backend->ops->peak_memory == NULL || device >= airy_backend_n_devices (backend))
    return 0;
  return backend->ops->peak_memory (backend, device);
}

gboolean
airy_backend_has_fft_floor (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  return backend->available && backend->ops->fft_floor != NULL;
}

double
airy_backend_fft_floor (AiryBackend *backend,
                        guint        device,
                        guint        height,
                        guint        width,
                        guint        planes,
                        GError     **error)
{
  g_return_val_if_fail (backend != NULL, -1.0);
  if (!airy_backend_has_fft_floor (backend))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND, _("backend %s: has no benchmark floor of its own"),
                   backend->ops->name);
      return -1.0;
    }
  return backend->ops->fft_floor (backend, device, height, width, planes, error);
}

gboolean
airy_backend_has_download_floor (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  return backend->available && backend->ops->download_floor != NULL;
}

double
airy_backend_download_floor (AiryBackend *backend,
                             guint        device,
                             guint64      bytes,
                             GError     **error)
{
  g_return_val_if_fail (backend != NULL, -1.0);
  if (!airy_backend_has_download_floor (backend))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_BACKEND,
                   _("backend %s: its results are in host memory, there is no download to time"), backend->ops->name);
      return -1.0;
    }
  return backend->ops->download_floor (backend, device, bytes, error);
}

guint64
airy_backend_get_counter (AiryBackend *backend,
                          const char  *name)
{
  g_return_val_if_fail (backend != NULL && name != NULL, 0);
  if (!backend->available || backend->ops->counter == NULL)
    return 0;
  return backend->ops->counter (backend, name);
}

gboolean
_airy_backend_supports_op (AiryBackend  *backend,
                           const AiryOp *op)
{
  return backend->ops->supports_op == NULL || backend->ops->supports_op (backend, op);
}

gboolean
_airy_backend_can_fit (AiryBackend *backend)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  return backend->available && backend->ops->fit_new && backend->ops->fit_set_data && backend->ops->fit_pass
         && backend->ops->fit_free;
}

gpointer
_airy_backend_fit_new (AiryBackend        *backend,
                       guint               device,
                       const AiryFitShape *shape,
                       GError            **error)
{
  guint n;

  g_return_val_if_fail (backend != NULL && shape != NULL, NULL);
  if (!_airy_backend_can_fit (backend))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("backend %s: cannot fit"), backend->ops->name);
      return NULL;
    }
  n = airy_backend_n_devices (backend);
  if (device >= n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("device: must be in [0, %u] for backend %s, got %u"), n ? n - 1 : 0, backend->ops->name,
                   device);
      return NULL;
    }
  return backend->ops->fit_new (backend, device, shape, error);
}

gboolean
_airy_backend_fit_set_data (AiryBackend  *backend,
                            gpointer      fit,
                            const float  *dpos,
                            const double *dconst,
                            const float  *data,
                            GError      **error)
{
  g_return_val_if_fail (backend != NULL && fit != NULL, FALSE);
  return backend->ops->fit_set_data (backend, fit, dpos, dconst, data, error);
}

gboolean
_airy_backend_fit_pass (AiryBackend *backend,
                        gpointer     fit,
                        AiryFitPass *pass,
                        GError     **error)
{
  g_return_val_if_fail (backend != NULL && fit != NULL && pass != NULL, FALSE);
  return backend->ops->fit_pass (backend, fit, pass, error);
}

void
_airy_backend_fit_free (AiryBackend *backend,
                        gpointer     fit)
{
  if (backend != NULL && fit != NULL)
    backend->ops->fit_free (backend, fit);
}

/* "auto" (or NULL) prefers a usable GPU backend, then the CPU. */
AiryBackend *
airy_backend_choose (const char *name,
                     GError    **error)
{
  AiryBackend *backend;

  if (name == NULL || g_str_equal (name, "auto"))
    {
      backend = airy_backend_lookup ("cuda");
      if (backend != NULL && backend->available)
        return backend;
      name = "cpu";
    }
  backend = airy_backend_lookup (name);
  if (backend == NULL)
    {
      if (g_str_equal (name, "cuda"))
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_NO_DEVICE,
                     _("backend: no CUDA device: the CUDA backend module is not installed "
                     "(this build has no CUDA support, or the module is not on the modules path)"));
      else
        _airy_option_check_backend (name, "backend", error);
      return NULL;
    }
  if (!backend->available)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_NO_DEVICE, _("backend %s: %s"), name,
                   backend->unavailable_reason);
      return NULL;
    }
  return backend;
}

void
airy_backends_gl_release (gpointer context)
{
  g_autoptr(GPtrArray) list = airy_backend_list ();
  guint i;

  for (i = 0; i < list->len; i++)
    {
      AiryBackend *backend = g_ptr_array_index (list, i);

      if (backend->available && backend->ops->gl_release)
        backend->ops->gl_release (backend, context);
    }
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

typedef gboolean (*AiryModuleRegisterFunc) (const char *path, GError **error);

static gboolean
load_module (const char *path, GError **error)
{
  GModule *module;
  AiryModuleRegisterFunc reg = NULL;
  g_autoptr(GError) local = NULL;
  guint i;

  for (i = 0; modules && i < modules->len; i++)
    if (g_str_equal (g_ptr_array_index (modules, i), path))
      return TRUE;

  module = g_module_open (path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (module == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_MODULE, _("%s: %s"), path, g_module_error ());
      return FALSE;
    }
  if (!g_module_symbol (module, "airy_module_register", (gpointer *) &reg) || reg == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_MODULE,
                   _("%s: not an Airy module (no airy_module_register)"), path);
      g_module_close (module);
      return FALSE;
    }
  /* modules register GTypes and vtables: they stay loaded */
  g_module_make_resident (module);
  if (!reg (path, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_MODULE, _("%s: %s"), path,
                   local ? local->message : "registration failed");
      return FALSE;
    }
  if (modules == NULL)
    modules = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (modules, g_strdup (path));
  return TRUE;
}

/* Loads every *.so in dir; failures are collected (airy_modules_errors) so
 * one broken module does not hide the others. */
gboolean
airy_modules_load_dir (const char *dir,
                       GError    **error)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  gboolean ok = TRUE;
  guint i;

  if (d == NULL)
    return TRUE;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, "." G_MODULE_SUFFIX))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, g_ptr_array_index (names, i), NULL);
      g_autoptr(GError) local = NULL;

      if (!load_module (path, &local))
        {
          if (module_errors == NULL)
            module_errors = g_ptr_array_new_with_free_func (g_free);
          g_ptr_array_add (module_errors, g_strdup (local->message));
          if (ok && error)
            *error = g_error_copy (local);
          ok = FALSE;
        }
    }
  return ok;
}

GPtrArray *
airy_modules_loaded (void)
{
  if (modules == NULL)
    modules = g_ptr_array_new_with_free_func (g_free);
  return modules;
}

GPtrArray *
airy_modules_errors (void)
{
  if (module_errors == NULL)
    module_errors = g_ptr_array_new_with_free_func (g_free);
  return module_errors;
}

/* <libdir>/airy/backends beside the libairy.so.0 this process loaded, when
 * that folder exists and is not listed yet: a program outside the prefix
 * (Python through the typelib) finds the modules of the library it uses. */
static char *
library_modules_dir (void)
{
  Dl_info info;
  g_autofree char *libdir = NULL;
  char *dir;

  if (!dladdr ((void *) airy_modules_path, &info) || info.dli_fname == NULL
      || !g_path_is_absolute (info.dli_fname))
    return NULL;
  libdir = g_path_get_dirname (info.dli_fname);
  dir = g_build_filename (libdir, "airy", "backends", NULL);
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    g_clear_pointer (&dir, g_free);
  return dir;
}

static void
add_dir (GPtrArray *dirs,
         char      *dir)
{
  guint i;

  for (i = 0; dir && i < dirs->len; i++)
    if (g_str_equal (g_ptr_array_index (dirs, i), dir))
      g_clear_pointer (&dir, g_free);
  if (dir != NULL)
    g_ptr_array_add (dirs, dir);
}

/* The modules path: AIRY_BACKEND_PATH (colon-separated), then the install
 * location relative to the running program (a relocated prefix or DESTDIR
 * works without variables), then the one beside libairy.so.0 (a program
 * of another prefix using the library), then the configured libdir. */
char **
airy_modules_path (void)
{
  GPtrArray *dirs = g_ptr_array_new ();
  const char *env = g_getenv ("AIRY_BACKEND_PATH");
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);

  if (env != NULL)
    {
      g_auto(GStrv) parts = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);
      guint i;

      for (i = 0; parts[i]; i++)
        if (*parts[i])
          g_ptr_array_add (dirs, g_strdup (parts[i]));
    }
  if (exe != NULL)
    {
      g_autofree char *bindir = g_path_get_dirname (exe);
      g_autofree char *prefix = g_path_get_dirname (bindir);
      /* AIRY_BACKEND_DIR is <prefix>/<libdir>/airy/backends; keep <libdir> */
      const char *rel = AIRY_BACKEND_DIR;
      const char *p = strstr (rel, "/lib");

      if (p != NULL)
        g_ptr_array_add (dirs, g_build_filename (prefix, p, NULL));
    }
  add_dir (dirs, library_modules_dir ());
  g_ptr_array_add (dirs, g_strdup (AIRY_BACKEND_DIR));
  g_ptr_array_add (dirs, NULL);
  return (char **) g_ptr_array_free (dirs, FALSE);
}

/* The registry answers for the CPU backend's virtual devices, so that the
 * run and the options never call into a backend (airy-run.h). */
gboolean
airy_cpu_devices_from_env (guint   *n_devices,
                           GError **error)
{
  const char *env = g_getenv ("AIRY_CPU_DEVICES");
  guint64 n = 1;

  if (env != NULL && *env != '\0' && !g_ascii_string_to_unsigned (env, 10, 1, 64, &n, NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("AIRY_CPU_DEVICES: must be a whole number of virtual CPU devices in [1, 64], got \"%s\""),
                   env);
      return FALSE;
    }
  if (n_devices)
    *n_devices = (guint) n;
  return TRUE;
}

/* The backend names an option takes (airy-options-private.h): the
 * registry's, so that the registry and the options need not call each
 * other. */
char **
_airy_option_backend_names (void)
{
  g_autoptr(GPtrArray) list = airy_backend_list ();
  GPtrArray *names = g_ptr_array_new ();
  guint i;

  for (i = 0; i < list->len; i++)
    g_ptr_array_add (names, g_strdup (airy_backend_get_name (g_ptr_array_index (list, i))));
  if (airy_backend_lookup ("cuda") == NULL)
    g_ptr_array_add (names, g_strdup ("cuda"));
  g_ptr_array_add (names, g_strdup ("auto"));
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

gboolean
_airy_option_check_backend (const char *name,
                            const char *path,
                            GError    **error)
{
  g_auto(GStrv) names = _airy_option_backend_names ();
  g_autofree char *list = NULL;

  if (g_strv_contains ((const char *const *) names, name))
    return TRUE;
  list = g_strjoinv (", ", names);
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: must be one of %s, got \"%s\""), path, list,
               name);
  return FALSE;
}

/* An example backend module: the CPU backend's slots under another name,
 * "test-host", so that the tests can choose a module's backend by name
 * (airy-sim run --backend test-host) and compare its files with the CPU's.
 * Kept in a folder of its own, off the tests' modules path, so the other
 * tests see the usual backends. */
#include "config.h"

#include <gmodule.h>

#include "airy-backend-impl.h"
#include "cpu/airy-cpu-backend.h"

G_MODULE_EXPORT gboolean airy_module_register (const char *path, GError **error);

G_MODULE_EXPORT gboolean
airy_module_register (const char *path,
                      GError    **error)
{
  static AiryBackendOps ops;

  ops = *_airy_cpu_backend_ops ();
  ops.name = "test-host";
  ops.description = "the CPU backend, from a module (tests)";
  airy_backend_register (&ops, path);
  return TRUE;
}

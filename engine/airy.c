#define G_LOG_DOMAIN "airy"

#include "config.h"

#include "airy.h"
#include "airy-elements-private.h"
#include "cpu/airy-cpu-backend.h"
#include "airy-fft-private.h"

void
airy_init (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      g_auto(GStrv) dirs = NULL;
      guint i;

      _airy_elements_register_builtin ();
      airy_backend_register (_airy_cpu_backend_ops (), NULL);
      dirs = airy_modules_path ();
      for (i = 0; dirs[i]; i++)
        airy_modules_load_dir (dirs[i], NULL);
      g_once_init_leave (&once, 1);
    }
}

void
airy_shutdown (void)
{
  _airy_fft_shutdown ();
}

const char *
airy_version_string (void)
{
  return PACKAGE_VERSION;
}

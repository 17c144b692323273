#define G_LOG_DOMAIN "airy-memory"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <string.h>

#include "airy-run.h"
#include "airy-error.h"
#include "airy-atomic-private.h"

/* The host memory budget and sizes in messages (airy-run.h): a leaf that the
 * readers, the writers, the planner and the run all use. */

char *
airy_format_bytes (guint64 bytes)
{
  if (bytes >= (G_GUINT64_CONSTANT (1) << 40))
    return g_strdup_printf ("%.1f TiB", bytes / 1099511627776.0);
  if (bytes >= (1u << 30))
    return g_strdup_printf ("%.2f GiB", bytes / 1073741824.0);
  return g_strdup_printf ("%.1f MiB", bytes / 1048576.0);
}

/* 90 % of MemAvailable (4 GiB where /proc/meminfo says nothing) */
static guint64
available_budget (void)
{
  g_autofree char *meminfo = NULL;
  const char *p;

  _airy_file_io_note ("/proc/meminfo");
  if (g_file_get_contents ("/proc/meminfo", &meminfo, NULL, NULL)
      && (p = strstr (meminfo, "MemAvailable:")) != NULL)
    return (guint64) (g_ascii_strtoull (p + strlen ("MemAvailable:"), NULL, 10) * 1024 * 0.9);
  return G_GUINT64_CONSTANT (4) << 30;
}

gboolean
airy_memory_budget_get (guint64 *budget,
                        GError **error)
{
  const char *env = g_getenv ("AIRY_MEMORY_BUDGET");
  char *end = NULL;
  double v, scale = 1.0;

  if (env == NULL || *env == '\0')
    {
      if (budget)
        *budget = available_budget ();
      return TRUE;
    }
  v = g_ascii_strtod (env, &end);
  if (end != env)
    switch (g_ascii_toupper (*end))
      {
      case 'K': scale = 1024.0; end++; break;
      case 'M': scale = 1024.0 * 1024.0; end++; break;
      case 'G': scale = 1024.0 * 1024.0 * 1024.0; end++; break;
      case 'T': scale = 1024.0 * 1024.0 * 1024.0 * 1024.0; end++; break;
      default: break;
      }
  v *= scale;
  /* at least a byte, and below 2^63 so that it converts exactly */
  if (end == env || *end != '\0' || !(v >= 1.0 && v < 9223372036854775808.0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("AIRY_MEMORY_BUDGET: must be a size from 1 byte to 8 EiB, a number with an optional "
                     "K, M, G or T suffix (powers of 1024) such as 8G, got \"%s\""), env);
      return FALSE;
    }
  if (budget)
    *budget = (guint64) v;
  return TRUE;
}

char *
airy_memory_budget_describe (guint64  budget,
                             gboolean process)
{
  const char *env = g_getenv ("AIRY_MEMORY_BUDGET");
  g_autofree char *size = airy_format_bytes (budget);

  if (!process)
    return g_steal_pointer (&size);
  if (env && *env && airy_memory_budget_get (NULL, NULL))
    return g_strdup_printf (_("%s (AIRY_MEMORY_BUDGET=%s)"), size, env);
  return g_strdup_printf (_("%s (90 %% of available memory; AIRY_MEMORY_BUDGET sets another)"), size);
}

guint64
airy_memory_budget (void)
{
  guint64 budget;

  /* a wrong value is reported by airy_run () and airy_system_validate () */
  if (!airy_memory_budget_get (&budget, NULL))
    budget = available_budget ();
  return budget;
}

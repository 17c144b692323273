/* The options of runs and fits, declared once (airy-options-private.h). */
#define G_LOG_DOMAIN "airy-options"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-options-private.h"
#include "airy-backend.h"
#include "airy-error.h"
#include "airy-param.h"

typedef struct
{
  const char *name;
  const char *nick;
  const char *blurb;
  int         minimum;
  int         maximum;
  int         default_value;
} IntOption;

/* airy-sim's --threads, --device, --devices N, fit's --zernike, --crop,
 * --restarts, --max-iterations and --seed, optimize's --steps; the panel's
 * Threads and the fit dialog's Highest ANSI index and Crop */
static const IntOption int_options[] = {
  { "threads", N_("Threads"), N_("Host threads (0: all cores)"), 0, 4096, 0 },
  { "device", N_("Device"), N_("The backend's device index"), 0, 1023, 0 },
  { "devices", N_("Devices"), N_("The number of devices"), 1, 1024, 1 },
  { "fit-zernike", N_("Highest ANSI index"), N_("The highest ANSI index of the fitted Zernike terms"), 3, 65, 14 },
  { "fit-crop", N_("Crop (pixels, 0: all)"), N_("The fitted window's size in pixels (0: the whole stack)"), 0, 65536, 0 },
  { "fit-restarts", N_("Restarts"), N_("Starts from other points (0: one start)"), 0, 100, 0 },
  { "fit-max-iterations", N_("Iterations"), N_("The most iterations of one start (0: the fit's own)"), 0, 100000, 0 },
  { "fit-seed", N_("Seed"), N_("The seed of the restarts' starting points"), 0, G_MAXINT, 0 },
  { "optimize-steps", N_("Steps"), N_("The optimizer's steps (iterations)"), 1, 1000000, 50 },
};

static const IntOption *
find (const char *name)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (int_options); i++)
    if (g_str_equal (int_options[i].name, name))
      return &int_options[i];
  return NULL;
}

GParamSpec *
_airy_option_spec_new (const char *name,
                       const char *property)
{
  const IntOption *o = find (name);

  g_return_val_if_fail (o != NULL, NULL);
  return airy_param_spec_int (property ? property : o->name, o->nick, o->blurb, o->minimum, o->maximum,
                              o->default_value, 0);
}

GParamSpec *
_airy_option_spec (const char *name)
{
  static GHashTable *specs;
  static GMutex lock;
  GParamSpec *spec;

  if (find (name) == NULL)
    return NULL;
  g_mutex_lock (&lock);
  if (specs == NULL)
    specs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_param_spec_unref);
  spec = g_hash_table_lookup (specs, name);
  if (spec == NULL)
    {
      spec = g_param_spec_ref_sink (_airy_option_spec_new (name, NULL));
      g_hash_table_insert (specs, (gpointer) find (name)->name, spec);
    }
  g_mutex_unlock (&lock);
  return spec;
}

int
_airy_option_default (const char *name)
{
  const IntOption *o = find (name);

  g_return_val_if_fail (o != NULL, 0);
  return o->default_value;
}

gboolean
_airy_option_check_int (const char *name,
                        gint64      value,
                        const char *as,
                        GError    **error)
{
  GParamSpec *spec = _airy_option_spec (name);

  g_return_val_if_fail (spec != NULL, FALSE);
  return airy_param_check_number (spec, (double) value, as, error);
}


#define G_LOG_DOMAIN "airy-system"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gio/gio.h>

#include "airy-system.h"
#include "airy-error.h"
#include "airy-elements-private.h"
#include "airy-json-private.h"
#include "airy-plan-private.h"
#include "airy-run.h"
#include "airy-sensor-private.h"

/* A system: grid, spectrum, z planes and either an ordered optical chain
 * (source first) or a microscope (objective + pupil-plane elements + tube
 * lens, a sample and a sensor). JSON format: DESIGN §6, README. */

struct _AirySystem
{
  GObject       parent_instance;

  char         *name;
  char         *description;
  char         *schema;       /* "$schema", kept as written */
  char         *base_dir;
  guint         height;
  guint         width;
  double        spacing;
  AirySpectrum *spectrum;
  GArray       *z;            /* double */
  gboolean      z_is_range;
  double        z_start, z_stop;
  GPtrArray    *elements;     /* AiryElement */
  AiryElement  *objective;    /* microscope only */
  double        f_tube;
  AiryElement  *sensor;
  AirySample    sample;
};

G_DEFINE_FINAL_TYPE (AirySystem, airy_system, G_TYPE_OBJECT)

/* The loader's limits, which the schema states too (the messages spell
 * them out for translators). */
#define GRID_MAX_SIDE      65536
#define SPACING_MAX        1e4      /* µm */
#define WAVELENGTH_MAX     100.0    /* µm, airy_spectrum_new () */
#define Z_MAX              1e6      /* µm, |z| */
#define Z_COUNT_MAX        1000000
#define F_TUBE_MAX         1e6      /* µm */
#define SAMPLE_VALUE_MAX   1e12
#define BEADS_COUNT_MAX    10000000

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
airy_system_finalize (GObject *object)
{
  AirySystem *self = AIRY_SYSTEM (object);

  g_free (self->name);
  g_free (self->description);
  g_free (self->schema);
  g_free (self->base_dir);
  airy_spectrum_free (self->spectrum);
  g_array_unref (self->z);
  g_ptr_array_unref (self->elements);
  g_clear_object (&self->objective);
  g_clear_object (&self->sensor);
  g_free (self->sample.file);
  G_OBJECT_CLASS (airy_system_parent_class)->finalize (object);
}

static void
airy_system_class_init (AirySystemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = airy_system_finalize;
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
airy_system_init (AirySystem *self)
{
  double lambda = 0.532;

  self->height = self->width = 256;
  self->spacing = 0.5;
  self->spectrum = airy_spectrum_new (&lambda, NULL, 1, NULL);
  self->z = g_array_new (FALSE, TRUE, sizeof (double));
  g_array_append_val (self->z, (double) { 0.0 });
  self->elements = g_ptr_array_new_with_free_func (g_object_unref);
  self->f_tube = 200.0;
}

AirySystem *
airy_system_new (void)
{
  return g_object_new (AIRY_TYPE_SYSTEM, NULL);
}

void
airy_system_changed (AirySystem *self)
{
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* ---- JSON reading ---- */

static const char *
kind_of (JsonNode *node)
{
  if (JSON_NODE_HOLDS_OBJECT (node)) return "an object";
  if (JSON_NODE_HOLDS_ARRAY (node)) return "an array";
  if (JSON_NODE_HOLDS_NULL (node)) return "null";
  switch (json_node_get_value_type (node))
    {
    case G_TYPE_INT64: case G_TYPE_DOUBLE: return "a number";
    case G_TYPE_BOOLEAN: return "a boolean";
    default: return "a string";
    }
}

static gboolean
is_number (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node) && (json_node_get_value_type (node) == G_TYPE_INT64
                                          || json_node_get_value_type (node) == G_TYPE_DOUBLE);
}

static gboolean
check_keys (JsonObject *object, const char *path, const char *const *allowed, GError **error)
{
  g_autoptr(GList) members = json_object_get_members (object);
  GList *m;

  for (m = members; m; m = m->next)
    if (!g_strv_contains (allowed, m->data))
      {
        g_autofree char *known = g_strjoinv (", ", (char **) allowed);
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_KEY,
                     _("%s%s%s: unknown key (known: %s)"), path, *path ? "." : "",
                     (char *) m->data, known);
        return FALSE;
      }
  return TRUE;
}

static JsonObject *
get_object (JsonObject *parent, const char *key, const char *path, gboolean required, GError **error)
{
  JsonNode *node = json_object_get_member (parent, key);

  if (node == NULL)
    {
      if (required)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: missing"), path);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an object, got %s"),
                   path, kind_of (node));
      return NULL;
    }
  return json_node_get_object (node);
}

static gboolean
get_number (JsonObject *parent, const char *key, const char *path, double *out, GError **error)
{
  JsonNode *node = json_object_get_member (parent, key);

  if (node == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: missing"), path);
      return FALSE;
    }
  if (!is_number (node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected a number, got %s"),
                   path, kind_of (node));
      return FALSE;
    }
  *out = json_node_get_double (node);
  /* the text scan reports 1e999 as written; this guards JSON built in memory */
  if (!isfinite (*out))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: must be a finite number, got %g"),
                   path, *out);
      return FALSE;
    }
  return TRUE;
}

static gboolean
get_uint (JsonObject *parent, const char *key, const char *path, guint lo, guint hi,
          guint *out, GError **error)
{
  JsonNode *node = json_object_get_member (parent, key);
  gint64 v;

  if (node == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: missing"), path);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an integer, got %s"),
                   path, kind_of (node));
      return FALSE;
    }
  v = json_node_get_int (node);
  if (v < lo || v > hi)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: must be in [%u, %u], got %lld"),
                   path, lo, hi, (long long) v);
      return FALSE;
    }
  *out = (guint) v;
  return TRUE;
}

static double *
get_numbers (JsonObject *parent, const char *key, const char *path, guint *n, GError **error)
{
  JsonNode *node = json_object_get_member (parent, key);
  JsonArray *array;
  double *out;
  guint i;

  if (node == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: missing"), path);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an array of numbers, got %s"),
                   path, kind_of (node));
      return NULL;
    }
  array = json_node_get_array (node);
  *n = json_array_get_length (array);
  out = g_new0 (double, MAX (*n, 1));
  for (i = 0; i < *n; i++)
    {
      JsonNode *e = json_array_get_element (array, i);
      if (!is_number (e))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s[%u]: expected a number, got %s"),
                       path, i, kind_of (e));
          g_free (out);
          return NULL;
        }
      out[i] = json_node_get_double (e);
      if (!isfinite (out[i]))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s[%u]: must be a finite number, got %g"), path, i, out[i]);
          g_free (out);
          return NULL;
        }
    }
  return out;
}

static gboolean
parse_grid (AirySystem *self, JsonObject *root, GError **error)
{
  static const char *const keys[] = { "shape", "spacing", NULL };
  JsonObject *grid = get_object (root, "grid", "grid", TRUE, error);
  JsonNode *shape;
  JsonArray *a;
  guint i, hw[2];

  if (grid == NULL || !check_keys (grid, "grid", keys, error))
    return FALSE;
  shape = json_object_get_member (grid, "shape");
  if (shape == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("grid.shape: missing"));
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (shape) || json_array_get_length (json_node_get_array (shape)) != 2)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                   _("grid.shape: expected [height, width], got %s"), kind_of (shape));
      return FALSE;
    }
  a = json_node_get_array (shape);
  for (i = 0; i < 2; i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      gint64 v;

      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_INT64)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                       _("grid.shape[%u]: expected an integer, got %s"), i, kind_of (e));
          return FALSE;
        }
      v = json_node_get_int (e);
      if (v < 1 || v > GRID_MAX_SIDE)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("grid.shape[%u]: must be in [1, 65536], got %lld"), i, (long long) v);
          return FALSE;
        }
      hw[i] = (guint) v;
    }
  self->height = hw[0];
  self->width = hw[1];
  if (!get_number (grid, "spacing", "grid.spacing", &self->spacing, error))
    return FALSE;
  if (!(self->spacing > 0.0 && self->spacing <= SPACING_MAX))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("grid.spacing: must be in (0, 10000] µm, got %g"), self->spacing);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_spectrum (AirySystem *self, JsonObject *root, GError **error)
{
  static const char *const keys[] = { "wavelengths", "weights", NULL };
  JsonObject *spec = get_object (root, "spectrum", "spectrum", TRUE, error);
  g_autofree double *wl = NULL;
  g_autofree double *w = NULL;
  guint n = 0, nw = 0;
  AirySpectrum *s;

  if (spec == NULL || !check_keys (spec, "spectrum", keys, error))
    return FALSE;
  wl = get_numbers (spec, "wavelengths", "spectrum.wavelengths", &n, error);
  if (wl == NULL)
    return FALSE;
  if (json_object_has_member (spec, "weights"))
    {
      w = get_numbers (spec, "weights", "spectrum.weights", &nw, error);
      if (w == NULL)
        return FALSE;
      if (nw != n)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("spectrum.weights: must have one weight per wavelength (%u), got %u"), n, nw);
          return FALSE;
        }
    }
  s = airy_spectrum_new (wl, w, n, error);
  if (s == NULL)
    return FALSE;
  airy_spectrum_free (self->spectrum);
  self->spectrum = s;
  return TRUE;
}

static gboolean
parse_z (AirySystem *self, JsonObject *root, GError **error)
{
  static const char *const keys[] = { "start", "stop", "count", "values", NULL };
  JsonObject *z;
  guint i;

  if (!json_object_has_member (root, "z"))
    {
      airy_system_set_z_values (self, (double[]) { 0.0 }, 1);
      return TRUE;
    }
  z = get_object (root, "z", "z", TRUE, error);
  if (z == NULL || !check_keys (z, "z", keys, error))
    return FALSE;
  if (json_object_has_member (z, "values"))
    {
      static const char *const range_keys[] = { "start", "stop", "count", NULL };
      g_autofree double *v = NULL;
      guint n = 0;

      /* one or the other: a silent choice would run planes nobody asked for */
      for (i = 0; range_keys[i]; i++)
        if (json_object_has_member (z, range_keys[i]))
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("z: give either values or start, stop and count, got values and %s"),
                         range_keys[i]);
            return FALSE;
          }
      v = get_numbers (z, "values", "z.values", &n, error);
      if (v == NULL)
        return FALSE;
      if (n == 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("z.values: must hold at least one plane, got none"));
          return FALSE;
        }
      for (i = 0; i < n; i++)
        if (fabs (v[i]) > Z_MAX)
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("z.values[%u]: must be in [-1e6, 1e6] µm, got %g"), i, v[i]);
            return FALSE;
          }
      airy_system_set_z_values (self, v, n);
      return TRUE;
    }
  else
    {
      double start, stop;
      guint count;

      if (!get_uint (z, "count", "z.count", 1, Z_COUNT_MAX, &count, error)
          || !get_number (z, "start", "z.start", &start, error))
        return FALSE;
      if (count > 1 && !get_number (z, "stop", "z.stop", &stop, error))
        return FALSE;
      if (count == 1 && !json_object_has_member (z, "stop"))
        stop = start;
      else if (count == 1 && !get_number (z, "stop", "z.stop", &stop, error))
        return FALSE;
      if (fabs (start) > Z_MAX || fabs (stop) > Z_MAX)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("z: start and stop must be in [-1e6, 1e6] µm, got %g and %g"), start, stop);
          return FALSE;
        }
      airy_system_set_z_range (self, start, stop, count);
      return TRUE;
    }
}

static gboolean
parse_sample (AirySystem *self, JsonObject *root, GError **error)
{
  static const char *const keys[] = { "constant", "file", "beads", "channel", "frame", "resample", NULL };
  static const char *const file_options[] = { "channel", "frame", "resample", NULL };
  static const char *const bead_keys[] = { "count", "seed", "intensity", NULL };
  JsonObject *s = get_object (root, "sample", "sample", TRUE, error);
  AirySample sample = { AIRY_SAMPLE_NONE, 0 };
  guint i;

  if (s == NULL || !check_keys (s, "sample", keys, error))
    return FALSE;
  if (json_object_has_member (s, "constant") + json_object_has_member (s, "file")
      + json_object_has_member (s, "beads") != 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample: must have exactly one of constant, file, beads"));
      return FALSE;
    }
  for (i = 0; file_options[i]; i++)
    if (json_object_has_member (s, file_options[i]) && !json_object_has_member (s, "file"))
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("sample.%s: only a sample file has this option"), file_options[i]);
        return FALSE;
      }
  if (json_object_has_member (s, "constant"))
    {
      sample.kind = AIRY_SAMPLE_CONSTANT;
      if (!get_number (s, "constant", "sample.constant", &sample.value, error))
        return FALSE;
      if (!(sample.value >= 0.0 && sample.value <= SAMPLE_VALUE_MAX))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("sample.constant: must be in [0, 1e12], got %g"), sample.value);
          return FALSE;
        }
    }
  else if (json_object_has_member (s, "file"))
    {
      JsonNode *f = json_object_get_member (s, "file");

      if (!JSON_NODE_HOLDS_VALUE (f) || json_node_get_value_type (f) != G_TYPE_STRING)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("sample.file: expected a string, got %s"),
                       kind_of (f));
          return FALSE;
        }
      sample.kind = AIRY_SAMPLE_FILE;
      sample.file = (char *) json_node_get_string (f);
      sample.channel_set = json_object_has_member (s, "channel");
      sample.frame_set = json_object_has_member (s, "frame");
      if ((sample.channel_set
           && !get_uint (s, "channel", "sample.channel", 0, 1000000, &sample.channel, error))
          || (sample.frame_set
              && !get_uint (s, "frame", "sample.frame", 0, 1000000, &sample.frame, error)))
        return FALSE;
      if (json_object_has_member (s, "resample"))
        {
          JsonNode *r = json_object_get_member (s, "resample");

          if (!JSON_NODE_HOLDS_VALUE (r) || json_node_get_value_type (r) != G_TYPE_BOOLEAN)
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                           _("sample.resample: expected true or false, got %s"), kind_of (r));
              return FALSE;
            }
          sample.resample = json_node_get_boolean (r);
        }
    }
  else
    {
      JsonObject *b = get_object (s, "beads", "sample.beads", TRUE, error);

      if (b == NULL || !check_keys (b, "sample.beads", bead_keys, error))
        return FALSE;
      sample.kind = AIRY_SAMPLE_BEADS;
      sample.intensity = 1.0;
      if (!get_uint (b, "count", "sample.beads.count", 0, BEADS_COUNT_MAX, &sample.count, error))
        return FALSE;
      if (json_object_has_member (b, "seed")
          && !get_uint (b, "seed", "sample.beads.seed", 0, G_MAXINT, &sample.seed, error))
        return FALSE;
      if (json_object_has_member (b, "intensity")
          && !get_number (b, "intensity", "sample.beads.intensity", &sample.intensity, error))
        return FALSE;
      if (!(sample.intensity > 0.0))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("sample.beads.intensity: must be > 0, got %g"), sample.intensity);
          return FALSE;
        }
    }
  airy_system_set_sample (self, &sample);
  return TRUE;
}

static gboolean
parse_root (AirySystem *self, JsonNode *root_node, GError **error)
{
  static const char *const keys[] = { "$schema", "airy", "name", "description", "grid", "spectrum",
                                      "z", "elements", "microscope", "sensor", "sample", NULL };
  static const char *const strings[] = { "$schema", "name", "description", NULL };
  JsonObject *root;
  JsonNode *version, *elements;
  guint i;

  if (root_node == NULL || !JSON_NODE_HOLDS_OBJECT (root_node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("(top level): expected an object, got %s"),
                   root_node ? kind_of (root_node) : "nothing");
      return FALSE;
    }
  root = json_node_get_object (root_node);
  if (!check_keys (root, "", keys, error))
    return FALSE;
  version = json_object_get_member (root, "airy");
  if (version == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("airy: missing (an Airy system file starts with \"airy\": 1)"));
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_VALUE (version) || json_node_get_value_type (version) != G_TYPE_INT64
      || json_node_get_int (version) != 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("airy: this version reads format 1, got %s"),
                   is_number (version) ? "another number" : kind_of (version));
      return FALSE;
    }
  for (i = 0; strings[i]; i++)
    {
      JsonNode *n = json_object_get_member (root, strings[i]);

      if (n == NULL)
        continue;
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected a string, got %s"),
                       strings[i], kind_of (n));
          return FALSE;
        }
    }
  if (json_object_has_member (root, "name"))
    airy_system_set_name (self, json_object_get_string_member (root, "name"));
  if (json_object_has_member (root, "description"))
    airy_system_set_description (self, json_object_get_string_member (root, "description"));
  if (json_object_has_member (root, "$schema"))
    self->schema = g_strdup (json_object_get_string_member (root, "$schema"));
  if (!parse_grid (self, root, error) || !parse_spectrum (self, root, error) || !parse_z (self, root, error))
    return FALSE;

  if (json_object_has_member (root, "microscope"))
    {
      JsonObject *m = get_object (root, "microscope", "microscope", TRUE, error);
      g_autoptr(JsonObject) rest = NULL;
      g_autoptr(GList) members = NULL;
      g_autoptr(AiryElement) objective = NULL;
      double f_tube = 0.0;
      GList *l;

      if (m == NULL)
        return FALSE;
      if (!get_number (m, "f-tube", "microscope.f-tube", &f_tube, error))
        return FALSE;
      if (!(f_tube > 0.0 && f_tube <= F_TUBE_MAX))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("microscope.f-tube: must be in (0, 1e+06] µm, got %g"), f_tube);
          return FALSE;
        }
      rest = json_object_new ();
      members = json_object_get_members (m);
      for (l = members; l; l = l->next)
        if (!g_str_equal (l->data, "f-tube"))
          json_object_set_member (rest, l->data, json_node_copy (json_object_get_member (m, l->data)));
      objective = airy_element_new ("objective-point-source", error);
      if (objective == NULL || !airy_element_set_from_json (objective, rest, "microscope", self->base_dir, error))
        return FALSE;
      airy_system_make_microscope (self, objective, f_tube);
    }

  elements = json_object_get_member (root, "elements");
  if (elements != NULL)
    {
      JsonArray *a;

      if (!JSON_NODE_HOLDS_ARRAY (elements))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("elements: expected an array, got %s"),
                       kind_of (elements));
          return FALSE;
        }
      a = json_node_get_array (elements);
      for (i = 0; i < json_array_get_length (a); i++)
        {
          JsonNode *e = json_array_get_element (a, i);
          g_autofree char *path = g_strdup_printf ("elements[%u]", i);
          AiryElement *element;

          if (!JSON_NODE_HOLDS_OBJECT (e))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an object, got %s"),
                           path, kind_of (e));
              return FALSE;
            }
          element = airy_element_new_from_json (json_node_get_object (e), path, G_TYPE_INVALID,
                                                self->base_dir, error);
          if (element == NULL)
            return FALSE;
          if (g_str_equal (airy_element_get_type_name (element), "sensor"))
            {
              if (i + 1 != json_array_get_length (a) || json_object_has_member (root, "sensor"))
                {
                  g_object_unref (element);
                  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                               _("%s: a sensor must be the last element, and only one"), path);
                  return FALSE;
                }
              airy_system_set_sensor (self, element);
              g_object_unref (element);
              continue;
            }
          g_ptr_array_add (self->elements, element);
        }
    }
  if (json_object_has_member (root, "sensor"))
    {
      JsonObject *s = get_object (root, "sensor", "sensor", TRUE, error);
      g_autoptr(JsonObject) copy = NULL;
      g_autoptr(GList) members = NULL;
      g_autoptr(AiryElement) sensor = NULL;
      GList *l;

      if (s == NULL)
        return FALSE;
      copy = json_object_new ();
      members = json_object_get_members (s);
      for (l = members; l; l = l->next)
        if (!g_str_equal (l->data, "type"))
          json_object_set_member (copy, l->data, json_node_copy (json_object_get_member (s, l->data)));
      sensor = airy_element_new ("sensor", error);
      if (sensor == NULL || !airy_element_set_from_json (sensor, copy, "sensor", self->base_dir, error))
        return FALSE;
      airy_system_set_sensor (self, sensor);
    }
  if (json_object_has_member (root, "sample"))
    {
      if (self->objective == NULL)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("sample: only a microscope (with a \"microscope\" object) images a sample"));
          return FALSE;
        }
      if (!parse_sample (self, root, error))
        return FALSE;
    }
  else if (self->objective != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample: missing (a microscope needs {\"constant\": v}, {\"file\": …} or {\"beads\": {…}})"));
      return FALSE;
    }
  if (self->objective == NULL && self->elements->len == 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: an optical system needs at least a source"));
      return FALSE;
    }
  return TRUE;
}

/* json-glib reports "<data>:LINE:COL: Parse error: …"; keep its position and
 * name the file instead. */
static void
set_parse_error (GError **error, const char *source, const GError *json_error)
{
  const char *msg = json_error->message;

  if (g_str_has_prefix (msg, "<data>:"))
    msg += strlen ("<data>:");
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE, _("%s:%s"), source, msg);
}

AirySystem *
airy_system_new_from_data (const char *data,
                           gssize      length,
                           const char *base_dir,
                           const char *source_name,
                           GError    **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(AirySystem) self = airy_system_new ();
  g_autoptr(GError) local = NULL;
  const char *source = source_name ? source_name : "(system)";
  AiryJsonScan scan;

  g_return_val_if_fail (data != NULL, NULL);

  if (length < 0)
    length = strlen (data);
  /* json-glib recurses per level: a file nested 100 000 deep would take it
   * down with a stack overflow, so the nesting is measured first */
  _airy_json_scan (data, length, &scan);
  if (scan.max_depth > AIRY_JSON_MAX_DEPTH)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE,
                   _("%s: arrays and objects nested %u levels deep, more than the limit of %u"),
                   source, scan.max_depth, AIRY_JSON_MAX_DEPTH);
      _airy_json_scan_clear (&scan);
      return NULL;
    }
  self->base_dir = g_strdup (base_dir);
  if (!json_parser_load_from_data (parser, data, length, &local))
    {
      set_parse_error (error, source, local);
      _airy_json_scan_clear (&scan);
      return NULL;
    }
  if (scan.bad_text != NULL)
    {
      _airy_json_set_number_error (&scan, error);
      _airy_json_scan_clear (&scan);
      return NULL;
    }
  g_ptr_array_set_size (self->elements, 0);
  if (!parse_root (self, json_parser_get_root (parser), error))
    return NULL;
  return g_steal_pointer (&self);
}

AirySystem *
airy_system_new_from_file (const char *path,
                           GError    **error)
{
  g_autofree char *data = NULL;
  g_autofree char *dir = NULL;
  gsize length;

  data = _airy_json_read_file (path, &length, error);
  if (data == NULL)
    return NULL;
  if (!g_utf8_validate (data, length, NULL))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_PARSE, _("%s: not UTF-8 text"), path);
      return NULL;
    }
  dir = g_path_get_dirname (path);
  return airy_system_new_from_data (data, length, dir, path, error);
}

/* ---- presets (GResource) ---- */

#define PRESET_PATH "/io/github/airyoptics/Airy/presets/"

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

char **
airy_presets_list (void)
{
  g_auto(GStrv) files = g_resources_enumerate_children (PRESET_PATH, 0, NULL);
  GPtrArray *names = g_ptr_array_new ();
  guint i;

  for (i = 0; files && files[i]; i++)
    if (g_str_has_suffix (files[i], ".json"))
      g_ptr_array_add (names, g_strndup (files[i], strlen (files[i]) - 5));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

char *
airy_preset_get_json (const char *name,
                      GError    **error)
{
  g_autofree char *path = g_strdup_printf (PRESET_PATH "%s.json", name);
  g_autoptr(GBytes) bytes = g_resources_lookup_data (path, 0, NULL);

  if (bytes == NULL)
    {
      g_auto(GStrv) names = airy_presets_list ();
      g_autofree char *list = g_strjoinv (", ", names);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("preset: unknown preset \"%s\" (known: %s)"), name, list);
      return NULL;
    }
  return g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

AirySystem *
airy_system_new_from_preset (const char *name,
                             GError    **error)
{
  g_autofree char *json = airy_preset_get_json (name, error);
  g_autofree char *source = NULL;

  if (json == NULL)
    return NULL;
  source = g_strdup_printf ("preset %s", name);
  return airy_system_new_from_data (json, -1, NULL, source, error);
}

/* ---- file names ---- */

/* realpath () of a path that exists, else its canonical form */
static char *
physical_path (const char *path)
{
  char *real = realpath (path, NULL);
  char *out;

  if (real == NULL)
    return g_canonicalize_filename (path, NULL);
  out = g_strdup (real);
  free (real);
  return out;
}

/* A file name as the run opens it: relative ones against their base folder
 * (NULL: the current folder). */
static char *
resolve_file (const char *file, const char *base)
{
  g_autofree char *abs_base = NULL;

  if (g_path_is_absolute (file))
    return g_strdup (file);
  abs_base = g_canonicalize_filename (base ? base : ".", NULL);
  return g_canonicalize_filename (file, abs_base);
}

/* An absolute file name as seen from the folder dir: relative ("../a.tif")
 * when the two share a folder below the root, else absolute. Symbolic links
 * are resolved first, so that ".." means what the kernel will make of it. */
static char *
path_from (const char *file, const char *dir)
{
  g_autofree char *file_dir = g_path_get_dirname (file);
  g_autofree char *base = g_path_get_basename (file);
  g_autofree char *pf = physical_path (file_dir);
  g_autofree char *pd = physical_path (dir);
  g_auto(GStrv) a = g_strsplit (pf + 1, G_DIR_SEPARATOR_S, -1);
  g_auto(GStrv) b = g_strsplit (pd + 1, G_DIR_SEPARATOR_S, -1);
  GString *out;
  guint common = 0, i;

  while (a[common] && b[common] && *a[common] && g_str_equal (a[common], b[common]))
    common++;
  if (common == 0)
    return g_build_filename (pf, base, NULL);
  out = g_string_new (NULL);
  for (i = common; b[i]; i++)
    g_string_append (out, ".." G_DIR_SEPARATOR_S);
  for (i = common; a[i]; i++)
    g_string_append_printf (out, "%s" G_DIR_SEPARATOR_S, a[i]);
  g_string_append (out, base);
  return g_string_free (out, FALSE);
}

typedef void (*FileFunc) (AirySystem  *self,
                          const char  *role,
                          AiryElement *element,   /* NULL: the sample */
                          const char  *property,
                          const char  *file,
                          const char  *base,
                          gpointer     data);

static void
foreach_element_file (AirySystem *self, AiryElement *e, const char *prefix, FileFunc func, gpointer data)
{
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), NULL);
  guint i;

  for (i = 0; pspecs[i]; i++)
    {
      const char *file;
      g_autofree char *role = NULL;

      if (!(airy_param_spec_get_flags (pspecs[i]) & AIRY_PARAM_FILE)
          || (file = airy_element_get_string (e, pspecs[i]->name)) == NULL || *file == '\0')
        continue;
      role = g_strdup_printf ("%s.%s", prefix, pspecs[i]->name);
      func (self, role, e, pspecs[i]->name, file, _airy_element_get_base_dir (e), data);
    }
}

/* Every file name the system reads: the file parameters of its elements
 * (AIRY_PARAM_FILE) and a sample volume. */
static void
foreach_file (AirySystem *self, FileFunc func, gpointer data)
{
  guint i;

  if (self->objective)
    foreach_element_file (self, self->objective, "microscope", func, data);
  for (i = 0; i < self->elements->len; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("elements[%u]", i);
      foreach_element_file (self, g_ptr_array_index (self->elements, i), prefix, func, data);
    }
  if (self->sensor)
    foreach_element_file (self, self->sensor, "sensor", func, data);
  if (self->objective && self->sample.kind == AIRY_SAMPLE_FILE && self->sample.file && *self->sample.file)
    func (self, "sample.file", NULL, NULL, self->sample.file, self->base_dir, data);
}

typedef char *(*FileMap) (const char *file, const char *base, gpointer data);

typedef struct
{
  FileMap  map;
  gpointer data;
} MapFiles;

static void
map_one (AirySystem *self, const char *role, AiryElement *element, const char *property,
         const char *file, const char *base, gpointer data)
{
  MapFiles *m = data;
  char *mapped = m->map (file, base, m->data);

  if (g_str_equal (mapped, file))
    g_free (mapped);
  else if (element == NULL)
    {
      g_free (self->sample.file);
      self->sample.file = mapped;
    }
  else
    {
      g_object_set (element, property, mapped, NULL);
      g_free (mapped);
    }
}

static void
set_base_dir (AirySystem *self, const char *base_dir)
{
  char *copy = g_strdup (base_dir);
  guint i;

  g_free (self->base_dir);
  self->base_dir = copy;
  for (i = 0; i < self->elements->len; i++)
    _airy_element_set_base_dir (g_ptr_array_index (self->elements, i), base_dir);
  if (self->objective)
    _airy_element_set_base_dir (self->objective, base_dir);
  if (self->sensor)
    _airy_element_set_base_dir (self->sensor, base_dir);
}

/* Save As into another folder: relative names are rewritten to point at the
 * same files from there (new_dir: absolute) */
static char *
rebase_file (const char *file, const char *base, gpointer new_dir)
{
  g_autofree char *abs = NULL;

  if (g_path_is_absolute (file))
    return g_strdup (file);
  abs = resolve_file (file, base);
  return path_from (abs, new_dir);
}

static void
rebase (AirySystem *self, const char *new_dir_abs, const char *new_base)
{
  MapFiles m = { rebase_file, (gpointer) new_dir_abs };

  foreach_file (self, map_one, &m);
  set_base_dir (self, new_base);
}

/* for the hash: the files themselves, however they are named */
static char *
identify_file (const char *file, const char *base, gpointer data)
{
  g_autofree char *abs = resolve_file (file, base);

  return physical_path (abs);
}

static void
add_input_file (AirySystem *self, const char *role, AiryElement *element, const char *property,
                const char *file, const char *base, gpointer data)
{
  AiryInputFile *f = g_new0 (AiryInputFile, 1);

  f->role = g_strdup (role);
  f->path = resolve_file (file, base);
  g_ptr_array_add (data, f);
}

void
airy_input_file_free (AiryInputFile *file)
{
  if (file == NULL)
    return;
  g_free (file->role);
  g_free (file->path);
  g_free (file);
}

GPtrArray *
airy_system_list_input_files (AirySystem *self)
{
  GPtrArray *files = g_ptr_array_new_with_free_func ((GDestroyNotify) airy_input_file_free);

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), files);
  foreach_file (self, add_input_file, files);
  return files;
}

/* ---- JSON writing ---- */

static JsonNode *
numbers_node (const double *v, guint n)
{
  JsonArray *a = json_array_new ();
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);
  guint i;

  for (i = 0; i < n; i++)
    json_array_add_double_element (a, v[i]);
  json_node_take_array (node, a);
  return node;
}

static JsonNode *
system_to_node (AirySystem *self)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  guint i;

  json_builder_begin_object (b);
  if (self->schema)
    {
      json_builder_set_member_name (b, "$schema");
      json_builder_add_string_value (b, self->schema);
    }
  json_builder_set_member_name (b, "airy");
  json_builder_add_int_value (b, 1);
  if (self->name)
    {
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, self->name);
    }
  if (self->description)
    {
      json_builder_set_member_name (b, "description");
      json_builder_add_string_value (b, self->description);
    }
  json_builder_set_member_name (b, "grid");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "shape");
  json_builder_begin_array (b);
  json_builder_add_int_value (b, self->height);
  json_builder_add_int_value (b, self->width);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "spacing");
  json_builder_add_double_value (b, self->spacing);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "spectrum");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "wavelengths");
  json_builder_add_value (b, numbers_node (self->spectrum->wavelengths, self->spectrum->n));
  json_builder_set_member_name (b, "weights");
  json_builder_add_value (b, numbers_node (self->spectrum->weights, self->spectrum->n));
  json_builder_end_object (b);

  json_builder_set_member_name (b, "z");
  json_builder_begin_object (b);
  if (self->z_is_range)
    {
      json_builder_set_member_name (b, "start");
      json_builder_add_double_value (b, self->z_start);
      json_builder_set_member_name (b, "stop");
      json_builder_add_double_value (b, self->z_stop);
      json_builder_set_member_name (b, "count");
      json_builder_add_int_value (b, self->z->len);
    }
  else
    {
      json_builder_set_member_name (b, "values");
      json_builder_add_value (b, numbers_node ((double *) self->z->data, self->z->len));
    }
  json_builder_end_object (b);

  if (self->objective)
    {
      JsonObject *o = airy_element_to_json (self->objective);
      JsonNode *node = json_node_new (JSON_NODE_OBJECT);

      json_object_remove_member (o, "type");
      json_object_set_double_member (o, "f-tube", self->f_tube);
      json_node_take_object (node, o);
      json_builder_set_member_name (b, "microscope");
      json_builder_add_value (b, node);
    }

  json_builder_set_member_name (b, "elements");
  json_builder_begin_array (b);
  for (i = 0; i < self->elements->len; i++)
    {
      JsonNode *node = json_node_new (JSON_NODE_OBJECT);

      json_node_take_object (node, airy_element_to_json (g_ptr_array_index (self->elements, i)));
      json_builder_add_value (b, node);
    }
  json_builder_end_array (b);

  if (self->sensor)
    {
      JsonObject *o = airy_element_to_json (self->sensor);
      JsonNode *node = json_node_new (JSON_NODE_OBJECT);

      json_object_remove_member (o, "type");
      json_node_take_object (node, o);
      json_builder_set_member_name (b, "sensor");
      json_builder_add_value (b, node);
    }

  if (self->objective && self->sample.kind != AIRY_SAMPLE_NONE)
    {
      json_builder_set_member_name (b, "sample");
      json_builder_begin_object (b);
      switch (self->sample.kind)
        {
        case AIRY_SAMPLE_CONSTANT:
          json_builder_set_member_name (b, "constant");
          json_builder_add_double_value (b, self->sample.value);
          break;
        case AIRY_SAMPLE_FILE:
          json_builder_set_member_name (b, "file");
          json_builder_add_string_value (b, self->sample.file);
          if (self->sample.channel_set)
            {
              json_builder_set_member_name (b, "channel");
              json_builder_add_int_value (b, self->sample.channel);
            }
          if (self->sample.frame_set)
            {
              json_builder_set_member_name (b, "frame");
              json_builder_add_int_value (b, self->sample.frame);
            }
          if (self->sample.resample)
            {
              json_builder_set_member_name (b, "resample");
              json_builder_add_boolean_value (b, TRUE);
            }
          break;
        case AIRY_SAMPLE_BEADS:
          json_builder_set_member_name (b, "beads");
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "count");
          json_builder_add_int_value (b, self->sample.count);
          json_builder_set_member_name (b, "seed");
          json_builder_add_int_value (b, self->sample.seed);
          json_builder_set_member_name (b, "intensity");
          json_builder_add_double_value (b, self->sample.intensity);
          json_builder_end_object (b);
          break;
        case AIRY_SAMPLE_NONE:
        default:
          break;
        }
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* JSON text whose numbers read back to the same doubles; error is set
 * (and null written) for a non-finite number. */
static char *
system_to_text (AirySystem *self, GError **error)
{
  g_autoptr(JsonNode) root = system_to_node (self);

  return _airy_json_to_string (root, error);
}

char *
airy_system_to_json (AirySystem *self)
{
  g_autoptr(GError) error = NULL;
  char *json;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), NULL);

  json = system_to_text (self, &error);
  /* the setters and the loader refuse non-finite numbers */
  if (error != NULL)
    g_critical ("%s", error->message);
  return json;
}

/* Writes the system to path; a save into another folder rewrites relative
 * file names so that they still name the same files, and the system's base
 * folder follows it there. */
gboolean
airy_system_save (AirySystem *self,
                  const char *path,
                  GError    **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *new_dir = physical_path (dir);
  g_autoptr(AirySystem) moved = airy_system_copy (self);
  g_autofree char *json = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GError) local = NULL;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), FALSE);

  rebase (moved, new_dir, dir);
  json = system_to_text (moved, &local);
  if (local != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: %s"), path, local->message);
      return FALSE;
    }
  data = g_strconcat (json, "\n", NULL);
  /* g_file_set_contents writes a temporary file and renames it */
  if (!g_file_set_contents (path, data, -1, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s"), local->message);
      return FALSE;
    }
  rebase (self, new_dir, dir);
  return TRUE;
}

AirySystem *
airy_system_copy (AirySystem *self)
{
  AirySystem *copy = airy_system_new ();
  guint i;

  copy->name = g_strdup (self->name);
  copy->description = g_strdup (self->description);
  copy->schema = g_strdup (self->schema);
  copy->base_dir = g_strdup (self->base_dir);
  copy->height = self->height;
  copy->width = self->width;
  copy->spacing = self->spacing;
  airy_system_set_spectrum (copy, self->spectrum);
  g_array_set_size (copy->z, 0);
  g_array_append_vals (copy->z, self->z->data, self->z->len);
  copy->z_is_range = self->z_is_range;
  copy->z_start = self->z_start;
  copy->z_stop = self->z_stop;
  for (i = 0; i < self->elements->len; i++)
    g_ptr_array_add (copy->elements, airy_element_copy (g_ptr_array_index (self->elements, i)));
  if (self->objective)
    copy->objective = airy_element_copy (self->objective);
  copy->f_tube = self->f_tube;
  if (self->sensor)
    copy->sensor = airy_element_copy (self->sensor);
  airy_system_set_sample (copy, &self->sample);
  return copy;
}

/* The parameters of a result: the JSON with every file named by its real
 * absolute path, so that a Save As that rewrites names keeps the hash. */
guint64
airy_system_hash (AirySystem *self)
{
  g_autoptr(AirySystem) copy = airy_system_copy (self);
  MapFiles m = { identify_file, NULL };
  g_autofree char *json = NULL;
  g_autofree char *sum = NULL;

  foreach_file (copy, map_one, &m);
  json = airy_system_to_json (copy);
  sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, json, -1);
  return g_ascii_strtoull (sum + 48, NULL, 16);
}

/* ---- JSON Schema ---- */

static JsonObject *
schema_object (const char *description)
{
  JsonObject *o = json_object_new ();

  if (description)
    json_object_set_string_member (o, "description", description);
  return o;
}

static JsonObject *
schema_number (const char *description, double min, double max, gboolean exclusive_min)
{
  JsonObject *o = schema_object (description);

  json_object_set_string_member (o, "type", "number");
  json_object_set_double_member (o, exclusive_min ? "exclusiveMinimum" : "minimum", min);
  if (isfinite (max))
    json_object_set_double_member (o, "maximum", max);
  return o;
}

static JsonObject *
schema_integer (const char *description, gint64 min, gint64 max)
{
  JsonObject *o = schema_object (description);

  json_object_set_string_member (o, "type", "integer");
  json_object_set_int_member (o, "minimum", min);
  json_object_set_int_member (o, "maximum", max);
  return o;
}

static JsonObject *
schema_array (const char *description, JsonObject *items, guint min_items, guint max_items)
{
  JsonObject *o = schema_object (description);

  json_object_set_string_member (o, "type", "array");
  json_object_set_object_member (o, "items", items);
  if (min_items)
    json_object_set_int_member (o, "minItems", min_items);
  if (max_items)
    json_object_set_int_member (o, "maxItems", max_items);
  return o;
}

static JsonArray *
string_list (const char *first, ...)
{
  JsonArray *a = json_array_new ();
  const char *s;
  va_list args;

  va_start (args, first);
  for (s = first; s; s = va_arg (args, const char *))
    json_array_add_string_element (a, s);
  va_end (args);
  return a;
}

/* {"type": "object", "properties": props, "required": […], "additionalProperties": false} */
static JsonObject *
schema_record (const char *description, JsonObject *props, JsonArray *required)
{
  JsonObject *o = schema_object (description);

  json_object_set_string_member (o, "type", "object");
  json_object_set_object_member (o, "properties", props);
  if (required)
    json_object_set_array_member (o, "required", required);
  json_object_set_boolean_member (o, "additionalProperties", FALSE);
  return o;
}

static JsonObject *
schema_z (void)
{
  JsonObject *range = json_object_new (), *values = json_object_new ();
  JsonObject *r, *v, *z, *cond, *cond_props, *then;
  JsonArray *one_of = json_array_new ();

  json_object_set_object_member (range, "start", schema_number ("First plane, in µm", -Z_MAX, Z_MAX, FALSE));
  json_object_set_object_member (range, "stop", schema_number ("Last plane (included), in µm", -Z_MAX, Z_MAX, FALSE));
  json_object_set_object_member (range, "count", schema_integer ("Number of planes, evenly spaced like linspace", 1, Z_COUNT_MAX));
  r = schema_record ("Evenly spaced planes from start to stop", range, string_list ("start", "count", NULL));
  /* stop may be left out of a single plane only */
  cond = json_object_new ();
  cond_props = json_object_new ();
  json_object_set_object_member (cond_props, "count", schema_integer (NULL, 2, Z_COUNT_MAX));
  json_object_set_object_member (cond, "properties", cond_props);
  then = json_object_new ();
  json_object_set_array_member (then, "required", string_list ("stop", NULL));
  json_object_set_object_member (r, "if", cond);
  json_object_set_object_member (r, "then", then);

  json_object_set_object_member (values, "values",
                                 schema_array ("The planes, in µm", schema_number (NULL, -Z_MAX, Z_MAX, FALSE), 1, 0));
  v = schema_record ("Planes listed one by one", values, string_list ("values", NULL));

  json_array_add_object_element (one_of, r);
  json_array_add_object_element (one_of, v);
  z = schema_object ("Defocus planes (stage focus offsets); without z, one plane at 0");
  json_object_set_array_member (z, "oneOf", one_of);
  return z;
}

static JsonObject *
schema_sample (void)
{
  JsonObject *constant = json_object_new (), *file = json_object_new ();
  JsonObject *beads = json_object_new (), *beads_props = json_object_new (), *string, *sample;
  JsonArray *one_of = json_array_new ();

  json_object_set_object_member (constant, "constant",
                                 schema_number ("The same value in every voxel", 0.0, SAMPLE_VALUE_MAX, FALSE));
  json_array_add_object_element (one_of, schema_record (NULL, constant, string_list ("constant", NULL)));

  string = schema_object ("A TIFF volume, one plane per z (a relative name is relative to the system file's folder)");
  json_object_set_string_member (string, "type", "string");
  json_object_set_object_member (file, "file", string);
  json_array_add_object_element (one_of, schema_record (NULL, file, string_list ("file", NULL)));

  json_object_set_object_member (beads_props, "count", schema_integer ("Number of beads", 0, BEADS_COUNT_MAX));
  json_object_set_object_member (beads_props, "seed", schema_integer ("Seed of their positions", 0, G_MAXINT));
  json_object_set_object_member (beads_props, "intensity", schema_number ("Intensity of each bead", 0.0, INFINITY, TRUE));
  json_object_set_object_member (beads, "beads",
                                 schema_record ("Random point-like beads", beads_props, string_list ("count", NULL)));
  json_array_add_object_element (one_of, schema_record (NULL, beads, string_list ("beads", NULL)));

  sample = schema_object ("What a microscope images");
  json_object_set_array_member (sample, "oneOf", one_of);
  return sample;
}

char *
airy_system_schema (gboolean with_modules)
{
  g_autoptr(JsonObject) root = json_object_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autofree GType *types = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *props = json_object_new (), *o, *grid, *spectrum, *elements_props, *cond, *then, *not;
  JsonObject *microscope, *sensor, *dependent, *elements;
  JsonArray *one_of = json_array_new ();
  guint n, i;
  char *text;

  json_object_set_string_member (root, "$schema", "https://json-schema.org/draft/2020-12/schema");
  json_object_set_string_member (root, "title", "Airy system file");
  json_object_set_string_member (root, "description",
                                 "An optical system or a microscope for Airy (format 1). Lengths in µm, "
                                 "phases in rad, wavelengths in vacuum. Cross-field rules (such as NA ≤ n) "
                                 "are checked by `airy-sim validate`.");
  json_object_set_string_member (root, "type", "object");

  o = schema_object ("The JSON Schema the file follows (kept on save)");
  json_object_set_string_member (o, "type", "string");
  json_object_set_object_member (props, "$schema", o);
  o = schema_object ("Format version");
  json_object_set_int_member (o, "const", 1);
  json_object_set_object_member (props, "airy", o);
  o = schema_object ("Name of the system");
  json_object_set_string_member (o, "type", "string");
  json_object_set_object_member (props, "name", o);
  o = schema_object ("What the system is for");
  json_object_set_string_member (o, "type", "string");
  json_object_set_object_member (props, "description", o);

  grid = json_object_new ();
  json_object_set_object_member (grid, "shape",
                                 schema_array ("[height, width] in samples",
                                               schema_integer (NULL, 1, GRID_MAX_SIDE), 2, 2));
  json_object_set_object_member (grid, "spacing",
                                 schema_number ("Sample spacing of the source plane (a microscope: the camera pixel), in µm",
                                                0.0, SPACING_MAX, TRUE));
  json_object_set_object_member (props, "grid",
                                 schema_record ("The sampling grid", grid, string_list ("shape", "spacing", NULL)));

  spectrum = json_object_new ();
  json_object_set_object_member (spectrum, "wavelengths",
                                 schema_array ("Vacuum wavelengths, in µm",
                                               schema_number (NULL, 0.0, WAVELENGTH_MAX, TRUE), 1, 0));
  json_object_set_object_member (spectrum, "weights",
                                 schema_array ("One weight per wavelength (normalised to sum 1)",
                                               schema_number (NULL, 0.0, INFINITY, FALSE), 1, 0));
  json_object_set_object_member (props, "spectrum",
                                 schema_record ("Wavelengths and their weights", spectrum,
                                                string_list ("wavelengths", NULL)));

  json_object_set_object_member (props, "z", schema_z ());

  types = airy_element_list_types (&n);
  for (i = 0; i < n; i++)
    if (with_modules || _airy_elements_is_builtin (types[i]))
      json_array_add_object_element (one_of, _airy_element_schema (types[i], AIRY_SCHEMA_TYPE_REQUIRED));
  o = schema_object (NULL);
  json_object_set_array_member (o, "oneOf", one_of);
  json_object_set_object_member (props, "elements",
                                 schema_array ("The optical chain in order, source first (a microscope: "
                                               "pupil-plane elements); a sensor may end it", o, 0, 0));

  microscope = _airy_element_schema (airy_element_lookup ("objective-point-source"), AIRY_SCHEMA_TYPE_NONE);
  json_object_set_string_member (microscope, "title", "Microscope");
  json_object_set_string_member (microscope, "description",
                                 "The objective (its parameters) and the tube lens of a 4f microscope");
  json_object_set_object_member (json_object_get_object_member (microscope, "properties"), "f-tube",
                                 schema_number ("Tube lens focal length, in µm", 0.0, F_TUBE_MAX, TRUE));
  json_object_set_array_member (microscope, "required", string_list ("f-tube", NULL));
  json_object_set_object_member (props, "microscope", microscope);

  sensor = _airy_element_schema (airy_element_lookup ("sensor"), AIRY_SCHEMA_TYPE_OPTIONAL);
  json_object_set_object_member (props, "sensor", sensor);
  json_object_set_object_member (props, "sample", schema_sample ());

  json_object_set_object_member (root, "properties", props);
  json_object_set_array_member (root, "required", string_list ("airy", "grid", "spectrum", NULL));
  json_object_set_boolean_member (root, "additionalProperties", FALSE);

  /* a microscope and its sample come together */
  dependent = json_object_new ();
  json_object_set_array_member (dependent, "sample", string_list ("microscope", NULL));
  json_object_set_array_member (dependent, "microscope", string_list ("sample", NULL));
  json_object_set_object_member (root, "dependentRequired", dependent);
  /* without a microscope the chain needs at least its source */
  cond = json_object_new ();
  not = json_object_new ();
  json_object_set_array_member (not, "required", string_list ("microscope", NULL));
  json_object_set_object_member (cond, "not", not);
  then = json_object_new ();
  elements = json_object_new ();
  json_object_set_int_member (elements, "minItems", 1);
  elements_props = json_object_new ();
  json_object_set_object_member (elements_props, "elements", elements);
  json_object_set_array_member (then, "required", string_list ("elements", NULL));
  json_object_set_object_member (then, "properties", elements_props);
  json_object_set_object_member (root, "if", cond);
  json_object_set_object_member (root, "then", then);

  json_node_set_object (node, root);
  text = _airy_json_to_string (node, &error);
  g_assert_no_error (error);
  return text;
}

/* ---- accessors ---- */

const char *
airy_system_get_name (AirySystem *self)
{
  return self->name;
}

void
airy_system_set_name (AirySystem *self, const char *name)
{
  char *copy = g_strdup (name);

  g_free (self->name);
  self->name = copy;
}

const char *
airy_system_get_description (AirySystem *self)
{
  return self->description;
}

void
airy_system_set_description (AirySystem *self, const char *description)
{
  char *copy = g_strdup (description);

  g_free (self->description);
  self->description = copy;
}

const char *
airy_system_get_base_dir (AirySystem *self)
{
  return self->base_dir;
}

gboolean
airy_system_is_microscope (AirySystem *self)
{
  return self->objective != NULL;
}

void
airy_system_get_shape (AirySystem *self, guint *height, guint *width)
{
  *height = self->height;
  *width = self->width;
}

void
airy_system_set_shape (AirySystem *self, guint height, guint width)
{
  self->height = height;
  self->width = width;
}

double
airy_system_get_spacing (AirySystem *self)
{
  return self->spacing;
}

void
airy_system_set_spacing (AirySystem *self, double spacing)
{
  g_return_if_fail (isfinite (spacing));
  self->spacing = spacing;
}

const AirySpectrum *
airy_system_get_spectrum (AirySystem *self)
{
  return self->spectrum;
}

void
airy_system_set_spectrum (AirySystem *self, const AirySpectrum *spectrum)
{
  AirySpectrum *copy;
  guint l;

  for (l = 0; l < spectrum->n; l++)
    g_return_if_fail (isfinite (spectrum->wavelengths[l]) && isfinite (spectrum->weights[l]));
  copy = airy_spectrum_copy (spectrum);

  airy_spectrum_free (self->spectrum);
  self->spectrum = copy;
}

const double *
airy_system_get_z (AirySystem *self, guint *n)
{
  *n = self->z->len;
  return (const double *) self->z->data;
}

/* z planes like numpy.linspace(start, stop, count): both ends included. */
void
airy_system_set_z_range (AirySystem *self, double start, double stop, guint count)
{
  guint i;

  g_return_if_fail (isfinite (start) && isfinite (stop));
  g_array_set_size (self->z, count);
  for (i = 0; i < count; i++)
    g_array_index (self->z, double, i) = count > 1 ? start + (stop - start) * i / (count - 1) : start;
  self->z_is_range = TRUE;
  self->z_start = start;
  self->z_stop = stop;
}

void
airy_system_set_z_values (AirySystem *self, const double *values, guint count)
{
  guint i;

  for (i = 0; i < count; i++)
    g_return_if_fail (isfinite (values[i]));
  g_array_set_size (self->z, 0);
  g_array_append_vals (self->z, values, count);
  self->z_is_range = FALSE;
}

GPtrArray *
airy_system_get_elements (AirySystem *self)
{
  return self->elements;
}

void
airy_system_add_element (AirySystem *self, AiryElement *element)
{
  g_ptr_array_add (self->elements, g_object_ref (element));
}

AiryElement *
airy_system_get_objective (AirySystem *self)
{
  return self->objective;
}

double
airy_system_get_f_tube (AirySystem *self)
{
  return self->f_tube;
}

void
airy_system_set_f_tube (AirySystem *self, double f_tube)
{
  g_return_if_fail (isfinite (f_tube));
  self->f_tube = f_tube;
}

AiryElement *
airy_system_get_sensor (AirySystem *self)
{
  return self->sensor;
}

void
airy_system_set_sensor (AirySystem *self, AiryElement *sensor)
{
  g_set_object (&self->sensor, sensor);
}

const AirySample *
airy_system_get_sample (AirySystem *self)
{
  return &self->sample;
}

void
airy_system_set_sample (AirySystem *self, const AirySample *sample)
{
  char *file;

  g_return_if_fail (isfinite (sample->value) && isfinite (sample->intensity));
  file = g_strdup (sample->file);

  g_free (self->sample.file);
  self->sample = *sample;
  self->sample.file = file;
}

void
airy_system_make_microscope (AirySystem *self, AiryElement *objective, double f_tube)
{
  g_return_if_fail (isfinite (f_tube));
  g_set_object (&self->objective, objective);
  self->f_tube = f_tube;
}

gboolean
airy_system_validate (AirySystem *self,
                      GPtrArray  *warnings,
                      GError    **error)
{
  g_autoptr(AiryPlan) plan = NULL;

  /* a wrong AIRY_MEMORY_BUDGET is an error, not the default in disguise */
  if (!airy_memory_budget_get (NULL, error))
    return FALSE;
  plan = _airy_plan_new (self, NULL, warnings, error);
  return plan != NULL;
}

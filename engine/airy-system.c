#define G_LOG_DOMAIN "airy-system"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>
#include <gio/gio.h>

#include "airy-system.h"
#include "airy-error.h"
#include "airy-plan-private.h"
#include "airy-sensor-private.h"

/* A system: grid, spectrum, z planes and either an ordered optical chain
 * (source first) or a microscope (objective + pupil-plane elements + tube
 * lens, a sample and a sensor). JSON format: DESIGN §6, README. */

struct _AirySystem
{
  GObject       parent_instance;

  char         *name;
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

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
airy_system_finalize (GObject *object)
{
  AirySystem *self = AIRY_SYSTEM (object);

  g_free (self->name);
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
      if (v < 1 || v > 65536)
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
  if (!(self->spacing > 0.0 && self->spacing <= 1e4))
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
      guint n = 0;
      g_autofree double *v = get_numbers (z, "values", "z.values", &n, error);

      if (v == NULL)
        return FALSE;
      if (n == 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("z.values: must hold at least one plane, got none"));
          return FALSE;
        }
      for (i = 0; i < n; i++)
        if (fabs (v[i]) > 1e6)
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

      if (!get_uint (z, "count", "z.count", 1, 1000000, &count, error)
          || !get_number (z, "start", "z.start", &start, error))
        return FALSE;
      if (count > 1 && !get_number (z, "stop", "z.stop", &stop, error))
        return FALSE;
      if (count == 1 && !json_object_has_member (z, "stop"))
        stop = start;
      else if (count == 1 && !get_number (z, "stop", "z.stop", &stop, error))
        return FALSE;
      if (fabs (start) > 1e6 || fabs (stop) > 1e6)
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
      if (!(sample.value >= 0.0 && sample.value <= 1e12))
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
      if (!get_uint (b, "count", "sample.beads.count", 0, 10000000, &sample.count, error))
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
  static const char *const keys[] = { "airy", "name", "description", "grid", "spectrum", "z",
                                      "elements", "microscope", "sensor", "sample", NULL };
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
  if (json_object_has_member (root, "name"))
    {
      JsonNode *n = json_object_get_member (root, "name");
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("name: expected a string, got %s"),
                       kind_of (n));
          return FALSE;
        }
      airy_system_set_name (self, json_node_get_string (n));
    }
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
      if (!(f_tube > 0.0 && f_tube <= 1e6))
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

  g_return_val_if_fail (data != NULL, NULL);

  self->base_dir = g_strdup (base_dir);
  if (!json_parser_load_from_data (parser, data, length, &local))
    {
      set_parse_error (error, source_name ? source_name : "(system)", local);
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
  g_autoptr(GError) local = NULL;
  gsize length;

  if (!g_file_get_contents (path, &data, &length, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s"), local->message);
      return NULL;
    }
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

char *
airy_system_to_json (AirySystem *self)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  guint i;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), NULL);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "airy");
  json_builder_add_int_value (b, 1);
  if (self->name)
    {
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, self->name);
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

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  return json_generator_to_data (gen, NULL);
}

gboolean
airy_system_save (AirySystem *self,
                  const char *path,
                  GError    **error)
{
  g_autofree char *json = airy_system_to_json (self);
  g_autofree char *data = g_strconcat (json, "\n", NULL);
  g_autoptr(GError) local = NULL;

  /* g_file_set_contents writes a temporary file and renames it */
  if (!g_file_set_contents (path, data, -1, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s"), local->message);
      return FALSE;
    }
  return TRUE;
}

AirySystem *
airy_system_copy (AirySystem *self)
{
  AirySystem *copy = airy_system_new ();
  guint i;

  copy->name = g_strdup (self->name);
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

guint64
airy_system_hash (AirySystem *self)
{
  g_autofree char *json = airy_system_to_json (self);
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, json, -1);

  return g_ascii_strtoull (sum + 48, NULL, 16);
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
  g_free (self->name);
  self->name = g_strdup (name);
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
  AirySpectrum *copy = airy_spectrum_copy (spectrum);

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
  char *file = g_strdup (sample->file);

  g_free (self->sample.file);
  self->sample = *sample;
  self->sample.file = file;
}

void
airy_system_make_microscope (AirySystem *self, AiryElement *objective, double f_tube)
{
  g_set_object (&self->objective, objective);
  self->f_tube = f_tube;
}

gboolean
airy_system_validate (AirySystem *self,
                      GPtrArray  *warnings,
                      GError    **error)
{
  g_autoptr(AiryPlan) plan = _airy_plan_new (self, NULL, warnings, error);

  return plan != NULL;
}

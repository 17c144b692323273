#define G_LOG_DOMAIN "airy-system"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <string.h>
#include <gio/gio.h>

#include "airy-system.h"
#include "airy-system-private.h"
#include "airy-atomic.h"
#include "airy-error.h"
#include "airy-json-private.h"
#include "airy-param-private.h"
#include "airy-modality.h"

/* The system file (DESIGN §6): a reader with one function per section,
 * whose fields are read and checked through their declarations
 * (airy-system.c), the writer, and the presets. */

/* ---- reading ---- */

static gboolean
check_keys (JsonObject *object, const char *path, const char *const *allowed, GError **error)
{
  g_autoptr(GList) members = json_object_get_members (object);
  GList *m;

  for (m = members; m; m = m->next)
    if (!g_strv_contains (allowed, m->data))
      {
        g_autofree char *known = g_strjoinv (", ", (char **) allowed);
        g_autofree char *key = _airy_json_clip (m->data, -1);
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_KEY,
                     _("%s%s%s: unknown key (known: %s)"), path, *path ? "." : "", key, known);
        return FALSE;
      }
  return TRUE;
}

/* a section ("grid"), checked for unknown keys against its declared fields */
static JsonObject *
get_section (JsonObject *parent, const char *key, const char *path, GError **error)
{
  g_auto(GStrv) keys = _airy_system_section_keys (path);
  JsonNode *node = json_object_get_member (parent, key);

  if (node == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: missing"), path);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an object, got %s"),
                   path, _airy_json_kind (node));
      return NULL;
    }
  if (keys[0] != NULL && !check_keys (json_node_get_object (node), path, (const char *const *) keys, error))
    return NULL;
  return json_node_get_object (node);
}

/* A field at its declared place in section, read into value (left unset
 * when it is absent and optional) and checked against its declaration. */
static gboolean
read_field (JsonObject *section, AirySystemProp prop, gboolean required, GValue *value, GError **error)
{
  GParamSpec *pspec = _airy_system_param (prop);
  g_autofree char *key = _airy_system_param_key (prop);
  const char *path = airy_param_spec_get_path (pspec);
  JsonNode *node = json_object_get_member (section, key);

  if (node == NULL)
    {
      if (required)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("%s: missing"), path);
      return !required;
    }
  return airy_value_from_json (pspec, node, value, path, error);
}

static const double *
doubles (const GValue *value, guint *n)
{
  gsize len = 0;
  const double *d = G_IS_VALUE (value) ? _airy_value_get_doubles (value, &len) : NULL;

  *n = (guint) len;
  return d;
}

static gboolean
parse_grid (AirySystem *self, JsonObject *root, GError **error)
{
  JsonObject *grid = get_section (root, "grid", "grid", error);
  g_auto(GValue) h = G_VALUE_INIT;
  g_auto(GValue) w = G_VALUE_INIT;
  g_auto(GValue) spacing = G_VALUE_INIT;
  GParamSpec *hs = _airy_system_param (AIRY_SYSTEM_PROP_HEIGHT);
  GParamSpec *ws = _airy_system_param (AIRY_SYSTEM_PROP_WIDTH);
  JsonNode *shape;
  JsonArray *a;

  if (grid == NULL)
    return FALSE;
  /* the declarations of height and width sit at grid.shape[0] and [1] */
  shape = json_object_get_member (grid, "shape");
  if (shape == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE, _("grid.shape: missing"));
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (shape) || json_array_get_length (json_node_get_array (shape)) != 2)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                   _("grid.shape: expected [height, width], got %s"), _airy_json_kind (shape));
      return FALSE;
    }
  a = json_node_get_array (shape);
  if (!airy_value_from_json (hs, json_array_get_element (a, 0), &h, airy_param_spec_get_path (hs), error)
      || !airy_value_from_json (ws, json_array_get_element (a, 1), &w, airy_param_spec_get_path (ws), error)
      || !read_field (grid, AIRY_SYSTEM_PROP_SPACING, TRUE, &spacing, error))
    return FALSE;
  airy_system_set_shape (self, (guint) g_value_get_int (&h), (guint) g_value_get_int (&w));
  airy_system_set_spacing (self, g_value_get_double (&spacing));
  return TRUE;
}

static gboolean
parse_spectrum (AirySystem *self, JsonObject *root, GError **error)
{
  JsonObject *spec = get_section (root, "spectrum", "spectrum", error);
  g_auto(GValue) wl = G_VALUE_INIT;
  g_auto(GValue) w = G_VALUE_INIT;
  g_auto(GValue) channels = G_VALUE_INIT;
  g_autoptr(AirySpectrum) s = NULL;
  guint n, nw;

  if (spec == NULL
      || !read_field (spec, AIRY_SYSTEM_PROP_WAVELENGTHS, TRUE, &wl, error)
      || !read_field (spec, AIRY_SYSTEM_PROP_WEIGHTS, FALSE, &w, error)
      || !read_field (spec, AIRY_SYSTEM_PROP_CHANNELS, FALSE, &channels, error))
    return FALSE;
  airy_system_set_channels (self, G_IS_VALUE (&channels) && g_value_get_boolean (&channels));
  doubles (&wl, &n);
  doubles (&w, &nw);
  if (G_IS_VALUE (&w) && nw != n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("spectrum.weights: must have one weight per wavelength (%u), got %u"), n, nw);
      return FALSE;
    }
  s = airy_spectrum_new (doubles (&wl, &n), doubles (&w, &nw), n, error);
  if (s == NULL)
    return FALSE;
  airy_system_set_spectrum (self, s);
  return TRUE;
}

static gboolean
parse_z (AirySystem *self, JsonObject *root, GError **error)
{
  g_auto(GValue) start = G_VALUE_INIT;
  g_auto(GValue) stop = G_VALUE_INIT;
  g_auto(GValue) count = G_VALUE_INIT;
  g_auto(GValue) values = G_VALUE_INIT;
  g_autofree char *values_key = _airy_system_param_key (AIRY_SYSTEM_PROP_Z_VALUES);
  JsonObject *z;
  guint p, n;

  if (!json_object_has_member (root, "z"))
    {
      airy_system_set_z_values (self, (double[]) { 0.0 }, 1);
      return TRUE;
    }
  z = get_section (root, "z", "z", error);
  if (z == NULL)
    return FALSE;
  if (json_object_has_member (z, values_key))
    {
      /* one or the other: a silent choice would run planes nobody asked for */
      for (p = AIRY_SYSTEM_PROP_Z_START; p <= AIRY_SYSTEM_PROP_Z_COUNT; p++)
        {
          g_autofree char *key = _airy_system_param_key (p);

          if (json_object_has_member (z, key))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           _("z: give either values or start, stop and count, got values and %s"), key);
              return FALSE;
            }
        }
      if (!read_field (z, AIRY_SYSTEM_PROP_Z_VALUES, TRUE, &values, error))
        return FALSE;
      if (doubles (&values, &n) == NULL || n == 0)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("z.values: must hold at least one plane, got none"));
          return FALSE;
        }
      airy_system_set_z_values (self, doubles (&values, &n), n);
      return TRUE;
    }
  /* stop may be left out of a single plane only */
  if (!read_field (z, AIRY_SYSTEM_PROP_Z_COUNT, TRUE, &count, error)
      || !read_field (z, AIRY_SYSTEM_PROP_Z_START, TRUE, &start, error)
      || !read_field (z, AIRY_SYSTEM_PROP_Z_STOP, g_value_get_int (&count) > 1, &stop, error))
    return FALSE;
  airy_system_set_z_range (self, g_value_get_double (&start),
                           G_IS_VALUE (&stop) ? g_value_get_double (&stop) : g_value_get_double (&start),
                           (guint) g_value_get_int (&count));
  return TRUE;
}

/* The section's members but one, for the element that takes the rest. */
static JsonObject *
members_but (JsonObject *o, const char *skip)
{
  JsonObject *rest = json_object_new ();
  g_autoptr(GList) members = json_object_get_members (o);
  GList *l;

  for (l = members; l; l = l->next)
    if (!g_str_equal (l->data, skip))
      json_object_set_member (rest, l->data, json_node_copy (json_object_get_member (o, l->data)));
  return rest;
}

static gboolean
parse_microscope (AirySystem *self, JsonObject *root, GError **error)
{
  JsonNode *node = json_object_get_member (root, "microscope");
  g_autofree char *key = _airy_system_param_key (AIRY_SYSTEM_PROP_F_TUBE);
  g_auto(GValue) f_tube = G_VALUE_INIT;
  g_autoptr(JsonObject) rest = NULL;
  g_autoptr(AiryElement) objective = NULL;
  JsonObject *m;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an object, got %s"),
                   "microscope", _airy_json_kind (node));
      return FALSE;
    }
  /* the objective's parameters and the tube lens's focal length */
  m = json_node_get_object (node);
  if (!read_field (m, AIRY_SYSTEM_PROP_F_TUBE, TRUE, &f_tube, error))
    return FALSE;
  rest = members_but (m, key);
  objective = airy_element_new ("objective-point-source", error);
  if (objective == NULL || !airy_element_set_from_json (objective, rest, "microscope", self->base_dir, error))
    return FALSE;
  airy_system_make_microscope (self, objective, g_value_get_double (&f_tube));
  return TRUE;
}

static gboolean
parse_elements (AirySystem *self, JsonObject *root, GError **error)
{
  JsonNode *elements = json_object_get_member (root, "elements");
  JsonArray *a;
  guint i;

  if (elements == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (elements))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("elements: expected an array, got %s"),
                   _airy_json_kind (elements));
      return FALSE;
    }
  a = json_node_get_array (elements);
  for (i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      g_autofree char *path = g_strdup_printf ("elements[%u]", i);
      g_autoptr(AiryElement) element = NULL;

      if (!JSON_NODE_HOLDS_OBJECT (e))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an object, got %s"),
                       path, _airy_json_kind (e));
          return FALSE;
        }
      element = airy_element_new_from_json (json_node_get_object (e), path, G_TYPE_INVALID,
                                            self->base_dir, error);
      if (element == NULL)
        return FALSE;
      if (!g_str_equal (airy_element_get_type_name (element), "sensor"))
        {
          g_ptr_array_add (self->elements, g_steal_pointer (&element));
          continue;
        }
      if (i + 1 != json_array_get_length (a) || json_object_has_member (root, "sensor"))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: a sensor must be the last element, and only one"), path);
          return FALSE;
        }
      airy_system_set_sensor (self, element);
    }
  return TRUE;
}

static gboolean
parse_sensor (AirySystem *self, JsonObject *root, GError **error)
{
  JsonNode *node = json_object_get_member (root, "sensor");
  g_autoptr(JsonObject) copy = NULL;
  g_autoptr(AiryElement) sensor = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("%s: expected an object, got %s"),
                   "sensor", _airy_json_kind (node));
      return FALSE;
    }
  /* "type" is optional here: it can only be a sensor */
  copy = members_but (json_node_get_object (node), "type");
  sensor = airy_element_new ("sensor", error);
  if (sensor == NULL || !airy_element_set_from_json (sensor, copy, "sensor", self->base_dir, error))
    return FALSE;
  airy_system_set_sensor (self, sensor);
  return TRUE;
}

/* what the value holds, or keep (an unset optional field) */
static int
int_or (const GValue *value, int keep)
{
  return G_IS_VALUE (value) ? g_value_get_int (value) : keep;
}

static gboolean
parse_sample_file (JsonObject *s, AirySample *sample, GError **error)
{
  g_auto(GValue) file = G_VALUE_INIT;
  g_auto(GValue) channel = G_VALUE_INIT;
  g_auto(GValue) frame = G_VALUE_INIT;
  g_auto(GValue) resample = G_VALUE_INIT;

  if (!read_field (s, AIRY_SYSTEM_PROP_SAMPLE_FILE, TRUE, &file, error)
      || !read_field (s, AIRY_SYSTEM_PROP_SAMPLE_CHANNEL, FALSE, &channel, error)
      || !read_field (s, AIRY_SYSTEM_PROP_SAMPLE_FRAME, FALSE, &frame, error)
      || !read_field (s, AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE, FALSE, &resample, error))
    return FALSE;
  sample->kind = AIRY_SAMPLE_FILE;
  sample->file = g_value_dup_string (&file);
  sample->channel_set = G_IS_VALUE (&channel);
  sample->channel = (guint) int_or (&channel, 0);
  sample->frame_set = G_IS_VALUE (&frame);
  sample->frame = (guint) int_or (&frame, 0);
  sample->resample = G_IS_VALUE (&resample) && g_value_get_boolean (&resample);
  return TRUE;
}

static gboolean
parse_sample_beads (JsonObject *s, AirySample *sample, GError **error)
{
  JsonObject *b = get_section (s, "beads", "sample.beads", error);
  GParamSpec *intensity_spec = _airy_system_param (AIRY_SYSTEM_PROP_BEADS_INTENSITY);
  g_auto(GValue) count = G_VALUE_INIT;
  g_auto(GValue) seed = G_VALUE_INIT;
  g_auto(GValue) intensity = G_VALUE_INIT;

  if (b == NULL
      || !read_field (b, AIRY_SYSTEM_PROP_BEADS_COUNT, TRUE, &count, error)
      || !read_field (b, AIRY_SYSTEM_PROP_BEADS_SEED, FALSE, &seed, error)
      || !read_field (b, AIRY_SYSTEM_PROP_BEADS_INTENSITY, FALSE, &intensity, error))
    return FALSE;
  sample->kind = AIRY_SAMPLE_BEADS;
  sample->count = (guint) g_value_get_int (&count);
  sample->seed = (guint) int_or (&seed, G_PARAM_SPEC_INT (_airy_system_param (AIRY_SYSTEM_PROP_BEADS_SEED))->default_value);
  sample->intensity = G_IS_VALUE (&intensity) ? g_value_get_double (&intensity)
                                              : G_PARAM_SPEC_DOUBLE (intensity_spec)->default_value;
  return TRUE;
}

static gboolean
parse_sample (AirySystem *self, JsonObject *root, GError **error)
{
  JsonObject *s;
  AirySample sample = { AIRY_SAMPLE_NONE, 0 };
  g_auto(GValue) constant = G_VALUE_INIT;
  g_autofree char *file = NULL;
  gboolean ok;
  guint p;

  if (!_airy_modality_of (self)->needs_sample)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample: only a microscope (with a \"microscope\" object) images a sample"));
      return FALSE;
    }
  s = get_section (root, "sample", "sample", error);
  if (s == NULL)
    return FALSE;
  if (json_object_has_member (s, "constant") + json_object_has_member (s, "file")
      + json_object_has_member (s, "beads") != 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample: must have exactly one of constant, file, beads"));
      return FALSE;
    }
  for (p = AIRY_SYSTEM_PROP_SAMPLE_CHANNEL; p <= AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE; p++)
    {
      g_autofree char *key = _airy_system_param_key (p);

      if (json_object_has_member (s, key) && !json_object_has_member (s, "file"))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("sample.%s: only a sample file has this option"), key);
          return FALSE;
        }
    }
  if (json_object_has_member (s, "constant"))
    {
      ok = read_field (s, AIRY_SYSTEM_PROP_SAMPLE_CONSTANT, TRUE, &constant, error);
      sample.kind = AIRY_SAMPLE_CONSTANT;
      sample.value = ok ? g_value_get_double (&constant) : 0.0;
    }
  else if (json_object_has_member (s, "file"))
    ok = parse_sample_file (s, &sample, error);
  else
    ok = parse_sample_beads (s, &sample, error);
  file = sample.file;
  if (ok)
    airy_system_set_sample (self, &sample);
  return ok;
}

static gboolean
parse_header (AirySystem *self, JsonObject *root, GError **error)
{
  static const char *const strings[] = { "$schema", "name", "description", "modality", NULL };
  JsonNode *version = json_object_get_member (root, "airy");
  guint i;

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
                   _airy_json_is_number (version) ? "another number" : _airy_json_kind (version));
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
                       strings[i], _airy_json_kind (n));
          return FALSE;
        }
    }
  if (json_object_has_member (root, "name"))
    airy_system_set_name (self, json_object_get_string_member (root, "name"));
  if (json_object_has_member (root, "description"))
    airy_system_set_description (self, json_object_get_string_member (root, "description"));
  if (json_object_has_member (root, "$schema"))
    self->schema = g_strdup (json_object_get_string_member (root, "$schema"));
  /* checked against the registry once the microscope is read (parse_modality) */
  if (json_object_has_member (root, "modality"))
    airy_system_set_modality (self, json_object_get_string_member (root, "modality"));
  return TRUE;
}

static gboolean
parse_root (AirySystem *self, JsonNode *root_node, GError **error)
{
  static const char *const keys[] = { "$schema", "airy", "name", "description", "modality", "grid", "spectrum",
                                      "z", "elements", "microscope", "sensor", "sample", NULL };
  JsonObject *root;

  if (root_node == NULL || !JSON_NODE_HOLDS_OBJECT (root_node))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE, _("(top level): expected an object, got %s"),
                   root_node ? _airy_json_kind (root_node) : "nothing");
      return FALSE;
    }
  root = json_node_get_object (root_node);
  if (!check_keys (root, "", keys, error)
      || !parse_header (self, root, error)
      || !parse_grid (self, root, error)
      || !parse_spectrum (self, root, error)
      || !parse_z (self, root, error)
      || (json_object_has_member (root, "microscope") && !parse_microscope (self, root, error))
      || !_airy_modality_check (self, self->modality, error)
      || !parse_elements (self, root, error)
      || (json_object_has_member (root, "sensor") && !parse_sensor (self, root, error)))
    return FALSE;
  if (json_object_has_member (root, "sample"))
    {
      if (!parse_sample (self, root, error))
        return FALSE;
    }
  else if (_airy_modality_of (self)->needs_sample)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sample: missing (a microscope needs {\"constant\": v}, {\"file\": …} or {\"beads\": {…}})"));
      return FALSE;
    }
  if (!_airy_modality_has_objective (_airy_modality_of (self)) && self->elements->len == 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("elements: an optical system needs at least a source"));
      return FALSE;
    }
  return TRUE;
}

/* The system of a parsed file; base_dir: where its relative file names start */
static AirySystem *
system_from_parser (JsonParser *parser, const char *base_dir, GError **error)
{
  g_autoptr(AirySystem) self = NULL;

  if (parser == NULL)
    return NULL;
  self = airy_system_new ();
  self->base_dir = g_strdup (base_dir);
  g_ptr_array_set_size (self->elements, 0);
  if (!parse_root (self, json_parser_get_root (parser), error))
    return NULL;
  return g_steal_pointer (&self);
}

AirySystem *
airy_system_new_from_data (const char *data,
                           gssize      length,
                           const char *base_dir,
                           const char *source_name,
                           GError    **error)
{
  g_autoptr(JsonParser) parser = NULL;

  g_return_val_if_fail (data != NULL, NULL);

  parser = _airy_json_parse (data, length < 0 ? strlen (data) : (gsize) length,
                             source_name ? source_name : "(system)", error);
  return system_from_parser (parser, base_dir, error);
}

AirySystem *
airy_system_new_from_file (const char *path,
                           GError    **error)
{
  g_autoptr(JsonParser) parser = _airy_json_parse_file (path, error);
  g_autofree char *dir = g_path_get_dirname (path);

  return system_from_parser (parser, dir, error);
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

/* ---- writing ---- */

/* a field's key, from its declaration */
static void
member (JsonBuilder *b, AirySystemProp prop)
{
  g_autofree char *key = _airy_system_param_key (prop);

  json_builder_set_member_name (b, key);
}

static void
add_numbers (JsonBuilder *b, const double *v, guint n)
{
  guint i;

  json_builder_begin_array (b);
  for (i = 0; i < n; i++)
    json_builder_add_double_value (b, v[i]);
  json_builder_end_array (b);
}

static void
add_element (JsonBuilder *b, const char *name, AiryElement *element, const char *drop, gboolean all)
{
  JsonObject *o = all ? airy_element_to_json_full (element) : airy_element_to_json (element);
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  if (drop)
    json_object_remove_member (o, drop);
  json_node_take_object (node, o);
  if (name)
    json_builder_set_member_name (b, name);
  json_builder_add_value (b, node);
}

static void
write_header (AirySystem *self, JsonBuilder *b)
{
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
  /* always written: files without it read as inferred */
  json_builder_set_member_name (b, "modality");
  json_builder_add_string_value (b, airy_system_get_modality (self));
}

static void
write_fields (AirySystem *self, JsonBuilder *b)
{
  json_builder_set_member_name (b, "grid");
  json_builder_begin_object (b);
  member (b, AIRY_SYSTEM_PROP_HEIGHT);
  json_builder_begin_array (b);
  json_builder_add_int_value (b, self->height);
  json_builder_add_int_value (b, self->width);
  json_builder_end_array (b);
  member (b, AIRY_SYSTEM_PROP_SPACING);
  json_builder_add_double_value (b, self->spacing);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "spectrum");
  json_builder_begin_object (b);
  member (b, AIRY_SYSTEM_PROP_WAVELENGTHS);
  add_numbers (b, self->spectrum->wavelengths, self->spectrum->n);
  member (b, AIRY_SYSTEM_PROP_WEIGHTS);
  add_numbers (b, self->spectrum->weights, self->spectrum->n);
  /* written when on: files without it stay as they were */
  if (self->channels)
    {
      member (b, AIRY_SYSTEM_PROP_CHANNELS);
      json_builder_add_boolean_value (b, TRUE);
    }
  json_builder_end_object (b);

  json_builder_set_member_name (b, "z");
  json_builder_begin_object (b);
  if (self->z_is_range)
    {
      member (b, AIRY_SYSTEM_PROP_Z_START);
      json_builder_add_double_value (b, self->z_start);
      member (b, AIRY_SYSTEM_PROP_Z_STOP);
      json_builder_add_double_value (b, self->z_stop);
      member (b, AIRY_SYSTEM_PROP_Z_COUNT);
      json_builder_add_int_value (b, self->z->len);
    }
  else
    {
      member (b, AIRY_SYSTEM_PROP_Z_VALUES);
      add_numbers (b, (double *) self->z->data, self->z->len);
    }
  json_builder_end_object (b);
}

static void
write_microscope (AirySystem *self, JsonBuilder *b, gboolean all)
{
  JsonObject *o = all ? airy_element_to_json_full (self->objective) : airy_element_to_json (self->objective);
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *key = _airy_system_param_key (AIRY_SYSTEM_PROP_F_TUBE);

  json_object_remove_member (o, "type");
  json_object_set_double_member (o, key, self->f_tube);
  json_node_take_object (node, o);
  json_builder_set_member_name (b, "microscope");
  json_builder_add_value (b, node);
}

static void
write_sample (AirySystem *self, JsonBuilder *b)
{
  const AirySample *s = &self->sample;

  json_builder_set_member_name (b, "sample");
  json_builder_begin_object (b);
  switch (s->kind)
    {
    case AIRY_SAMPLE_CONSTANT:
      member (b, AIRY_SYSTEM_PROP_SAMPLE_CONSTANT);
      json_builder_add_double_value (b, s->value);
      break;
    case AIRY_SAMPLE_FILE:
      member (b, AIRY_SYSTEM_PROP_SAMPLE_FILE);
      json_builder_add_string_value (b, s->file);
      if (s->channel_set)
        {
          member (b, AIRY_SYSTEM_PROP_SAMPLE_CHANNEL);
          json_builder_add_int_value (b, s->channel);
        }
      if (s->frame_set)
        {
          member (b, AIRY_SYSTEM_PROP_SAMPLE_FRAME);
          json_builder_add_int_value (b, s->frame);
        }
      if (s->resample)
        {
          member (b, AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE);
          json_builder_add_boolean_value (b, TRUE);
        }
      break;
    case AIRY_SAMPLE_BEADS:
      json_builder_set_member_name (b, "beads");
      json_builder_begin_object (b);
      member (b, AIRY_SYSTEM_PROP_BEADS_COUNT);
      json_builder_add_int_value (b, s->count);
      member (b, AIRY_SYSTEM_PROP_BEADS_SEED);
      json_builder_add_int_value (b, s->seed);
      member (b, AIRY_SYSTEM_PROP_BEADS_INTENSITY);
      json_builder_add_double_value (b, s->intensity);
      json_builder_end_object (b);
      break;
    case AIRY_SAMPLE_NONE:
    default:
      break;
    }
  json_builder_end_object (b);
}

static JsonNode *
system_to_node (AirySystem *self, gboolean all)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  guint i;

  json_builder_begin_object (b);
  write_header (self, b);
  write_fields (self, b);
  if (self->objective)
    write_microscope (self, b, all);
  json_builder_set_member_name (b, "elements");
  json_builder_begin_array (b);
  for (i = 0; i < self->elements->len; i++)
    add_element (b, NULL, g_ptr_array_index (self->elements, i), NULL, all);
  json_builder_end_array (b);
  if (self->sensor)
    add_element (b, "sensor", self->sensor, "type", all);
  if (self->objective && self->sample.kind != AIRY_SAMPLE_NONE)
    write_sample (self, b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* JSON text whose numbers read back to the same doubles; error is set
 * (and null written) for a non-finite number. */
static char *
system_to_text (AirySystem *self, gboolean all, GError **error)
{
  g_autoptr(JsonNode) root = system_to_node (self, all);

  return _airy_json_to_string (root, error);
}

static char *
system_json (AirySystem *self, gboolean all)
{
  g_autoptr(GError) error = NULL;
  char *json;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), NULL);

  json = system_to_text (self, all, &error);
  /* the setters and the loader refuse non-finite numbers */
  if (error != NULL)
    g_critical ("%s", error->message);
  return json;
}

char *
airy_system_to_json (AirySystem *self)
{
  return system_json (self, FALSE);
}

char *
airy_system_to_json_full (AirySystem *self)
{
  return system_json (self, TRUE);
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
  g_autofree char *new_dir = _airy_physical_path (dir);
  g_autoptr(AirySystem) moved = airy_system_copy (self);
  g_autofree char *json = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GError) local = NULL;

  g_return_val_if_fail (AIRY_IS_SYSTEM (self), FALSE);

  _airy_system_rebase (moved, new_dir, dir);
  json = system_to_text (moved, FALSE, &local);
  if (local != NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: %s"), path, local->message);
      return FALSE;
    }
  data = g_strconcat (json, "\n", NULL);
  if (!airy_atomic_set_contents (path, data, strlen (data), error))
    return FALSE;
  _airy_system_rebase (self, new_dir, dir);
  return TRUE;
}

/* The parameters of a result: the JSON of the system as the hash sees it
 * (_airy_system_copy_for_hash). */
guint64
airy_system_hash (AirySystem *self)
{
  g_autoptr(AirySystem) copy = _airy_system_copy_for_hash (self);
  g_autofree char *json = airy_system_to_json (copy);
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, json, -1);

  return g_ascii_strtoull (sum + 48, NULL, 16);
}

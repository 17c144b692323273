#define G_LOG_DOMAIN "airy-system"

#include "config.h"

#include "airy-modality.h"
#include "airy-system.h"
#include "airy-system-private.h"
#include "airy-elements-private.h"
#include "airy-json-private.h"
#include "airy-param-private.h"

/* The JSON Schema (draft 2020-12) of system files: the file's shape is
 * written here, every field in it comes from its declaration, the system's
 * own (airy-system.c) and the element types' parameters. */

static JsonObject *
schema_object (const char *description)
{
  JsonObject *o = json_object_new ();

  if (description)
    json_object_set_string_member (o, "description", description);
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

/* A field as declared; a field the file must give has no default. */
static JsonObject *
field (AirySystemProp prop, gboolean optional)
{
  JsonObject *o = _airy_param_spec_schema (_airy_system_param (prop));

  if (!optional)
    json_object_remove_member (o, "default");
  return o;
}

/* props[key of prop] = field (prop) */
static void
add_field (JsonObject *props, AirySystemProp prop, gboolean optional)
{
  g_autofree char *key = _airy_system_param_key (prop);

  json_object_set_object_member (props, key, field (prop, optional));
}

static JsonObject *
min_items (JsonObject *array, guint n)
{
  json_object_set_int_member (array, "minItems", n);
  return array;
}

static JsonObject *
schema_grid (void)
{
  JsonObject *grid = json_object_new ();
  JsonObject *shape = schema_object ("[height, width] in samples");
  JsonArray *sides = json_array_new ();

  json_array_add_object_element (sides, field (AIRY_SYSTEM_PROP_HEIGHT, FALSE));
  json_array_add_object_element (sides, field (AIRY_SYSTEM_PROP_WIDTH, FALSE));
  json_object_set_string_member (shape, "type", "array");
  json_object_set_array_member (shape, "prefixItems", sides);
  json_object_set_int_member (shape, "minItems", 2);
  json_object_set_int_member (shape, "maxItems", 2);
  json_object_set_object_member (grid, "shape", shape);
  add_field (grid, AIRY_SYSTEM_PROP_SPACING, FALSE);
  return schema_record ("The sampling grid", grid, string_list ("shape", "spacing", NULL));
}

static JsonObject *
schema_spectrum (void)
{
  JsonObject *spectrum = json_object_new ();

  json_object_set_object_member (spectrum, "wavelengths", min_items (field (AIRY_SYSTEM_PROP_WAVELENGTHS, FALSE), 1));
  json_object_set_object_member (spectrum, "weights", min_items (field (AIRY_SYSTEM_PROP_WEIGHTS, TRUE), 1));
  json_object_set_object_member (spectrum, "channels", field (AIRY_SYSTEM_PROP_CHANNELS, TRUE));
  return schema_record ("Wavelengths and their weights", spectrum, string_list ("wavelengths", NULL));
}

static JsonObject *
schema_z (void)
{
  JsonObject *range = json_object_new (), *values = json_object_new ();
  JsonObject *r, *v, *z, *cond, *cond_props, *several, *then;
  JsonArray *one_of = json_array_new ();

  add_field (range, AIRY_SYSTEM_PROP_Z_START, FALSE);
  add_field (range, AIRY_SYSTEM_PROP_Z_STOP, FALSE);
  add_field (range, AIRY_SYSTEM_PROP_Z_COUNT, FALSE);
  r = schema_record ("Evenly spaced planes from start to stop", range, string_list ("start", "count", NULL));
  /* stop may be left out of a single plane only */
  cond = json_object_new ();
  cond_props = json_object_new ();
  several = json_object_new ();
  json_object_set_int_member (several, "minimum", 2);
  json_object_set_object_member (cond_props, "count", several);
  json_object_set_object_member (cond, "properties", cond_props);
  then = json_object_new ();
  json_object_set_array_member (then, "required", string_list ("stop", NULL));
  json_object_set_object_member (r, "if", cond);
  json_object_set_object_member (r, "then", then);

  json_object_set_object_member (values, "values", min_items (field (AIRY_SYSTEM_PROP_Z_VALUES, FALSE), 1));
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
  JsonObject *beads = json_object_new (), *beads_props = json_object_new (), *sample;
  JsonArray *one_of = json_array_new ();

  add_field (constant, AIRY_SYSTEM_PROP_SAMPLE_CONSTANT, FALSE);
  json_array_add_object_element (one_of, schema_record (NULL, constant, string_list ("constant", NULL)));

  add_field (file, AIRY_SYSTEM_PROP_SAMPLE_FILE, FALSE);
  /* unset, the file must hold a single channel and time point */
  add_field (file, AIRY_SYSTEM_PROP_SAMPLE_CHANNEL, FALSE);
  add_field (file, AIRY_SYSTEM_PROP_SAMPLE_FRAME, FALSE);
  add_field (file, AIRY_SYSTEM_PROP_SAMPLE_RESAMPLE, TRUE);
  json_array_add_object_element (one_of, schema_record (NULL, file, string_list ("file", NULL)));

  add_field (beads_props, AIRY_SYSTEM_PROP_BEADS_COUNT, FALSE);
  add_field (beads_props, AIRY_SYSTEM_PROP_BEADS_SEED, TRUE);
  add_field (beads_props, AIRY_SYSTEM_PROP_BEADS_INTENSITY, TRUE);
  json_object_set_object_member (beads, "beads",
                                 schema_record ("Random point-like beads", beads_props, string_list ("count", NULL)));
  json_array_add_object_element (one_of, schema_record (NULL, beads, string_list ("beads", NULL)));

  sample = schema_object ("What a microscope images");
  json_object_set_array_member (sample, "oneOf", one_of);
  return sample;
}

static JsonObject *
schema_elements (gboolean with_modules)
{
  g_autofree GType *types = NULL;
  JsonArray *one_of = json_array_new ();
  JsonObject *o = schema_object (NULL), *elements;
  guint n, i;

  types = airy_element_list_types (&n);
  for (i = 0; i < n; i++)
    if (with_modules || _airy_elements_is_builtin (types[i]))
      json_array_add_object_element (one_of, _airy_element_schema (types[i], AIRY_SCHEMA_TYPE_REQUIRED));
  json_object_set_array_member (o, "oneOf", one_of);
  elements = schema_object ("The optical chain in order, source first (a microscope: pupil-plane elements); "
                            "a sensor may end it");
  json_object_set_string_member (elements, "type", "array");
  json_object_set_object_member (elements, "items", o);
  return elements;
}

static JsonObject *
schema_microscope (void)
{
  JsonObject *microscope = _airy_element_schema (airy_element_lookup ("objective-point-source"),
                                                 AIRY_SCHEMA_TYPE_NONE);

  json_object_set_string_member (microscope, "title", "Microscope");
  json_object_set_string_member (microscope, "description",
                                 "The objective (its parameters) and the tube lens of a 4f microscope");
  add_field (json_object_get_object_member (microscope, "properties"), AIRY_SYSTEM_PROP_F_TUBE, FALSE);
  json_object_set_array_member (microscope, "required", string_list ("f-tube", NULL));
  return microscope;
}

static void
add_string (JsonObject *props, const char *key, const char *description)
{
  JsonObject *o = schema_object (description);

  json_object_set_string_member (o, "type", "string");
  json_object_set_object_member (props, key, o);
}

/* "modality": one of the registered modalities, each with what it does */
static JsonObject *
schema_modality (void)
{
  g_autoptr(GString) d = g_string_new ("How the system becomes chains and how their intensities combine "
                                       "(absent: imaging with a \"microscope\", else psf):");
  JsonObject *o;
  JsonArray *names = json_array_new ();
  guint n, i;
  const AiryModality * const *list = _airy_modality_list (&n);

  for (i = 0; i < n; i++)
    {
      json_array_add_string_element (names, list[i]->name);
      g_string_append_printf (d, " %s: %s.", list[i]->name,
                              list[i]->schema_note ? list[i]->schema_note : list[i]->description);
    }
  o = schema_object (d->str);
  json_object_set_string_member (o, "type", "string");
  json_object_set_array_member (o, "enum", names);
  return o;
}

/* the rules across sections: a microscope and its sample come together;
 * without a microscope the chain needs at least its source */
static void
add_rules (JsonObject *root)
{
  JsonObject *dependent = json_object_new (), *cond = json_object_new (), *not = json_object_new ();
  JsonObject *then = json_object_new (), *elements = json_object_new (), *elements_props = json_object_new ();

  json_object_set_array_member (dependent, "sample", string_list ("microscope", NULL));
  json_object_set_array_member (dependent, "microscope", string_list ("sample", NULL));
  json_object_set_object_member (root, "dependentRequired", dependent);
  json_object_set_array_member (not, "required", string_list ("microscope", NULL));
  json_object_set_object_member (cond, "not", not);
  json_object_set_int_member (elements, "minItems", 1);
  json_object_set_object_member (elements_props, "elements", elements);
  json_object_set_array_member (then, "required", string_list ("elements", NULL));
  json_object_set_object_member (then, "properties", elements_props);
  json_object_set_object_member (root, "if", cond);
  json_object_set_object_member (root, "then", then);
}

char *
airy_system_schema (gboolean with_modules)
{
  g_autoptr(JsonObject) root = json_object_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(GError) error = NULL;
  JsonObject *props = json_object_new (), *o;
  char *text;

  json_object_set_string_member (root, "$schema", "https://json-schema.org/draft/2020-12/schema");
  json_object_set_string_member (root, "title", "Airy system file");
  json_object_set_string_member (root, "description",
                                 "An optical system or a microscope for Airy (format 1). Lengths in µm, "
                                 "phases in rad, wavelengths in vacuum. Cross-field rules (such as NA ≤ n) "
                                 "are checked by `airy-sim validate`.");
  json_object_set_string_member (root, "type", "object");

  add_string (props, "$schema", "The JSON Schema the file follows (kept on save)");
  o = schema_object ("Format version");
  json_object_set_int_member (o, "const", 1);
  json_object_set_object_member (props, "airy", o);
  add_string (props, "name", "Name of the system");
  add_string (props, "description", "What the system is for");
  json_object_set_object_member (props, "modality", schema_modality ());
  json_object_set_object_member (props, "grid", schema_grid ());
  json_object_set_object_member (props, "spectrum", schema_spectrum ());
  json_object_set_object_member (props, "z", schema_z ());
  json_object_set_object_member (props, "elements", schema_elements (with_modules));
  json_object_set_object_member (props, "microscope", schema_microscope ());
  json_object_set_object_member (props, "sensor",
                                 _airy_element_schema (airy_element_lookup ("sensor"), AIRY_SCHEMA_TYPE_OPTIONAL));
  json_object_set_object_member (props, "sample", schema_sample ());

  json_object_set_object_member (root, "properties", props);
  json_object_set_array_member (root, "required", string_list ("airy", "grid", "spectrum", NULL));
  json_object_set_boolean_member (root, "additionalProperties", FALSE);
  add_rules (root);

  json_node_set_object (node, root);
  text = _airy_json_to_string (node, &error);
  g_assert_no_error (error);
  return text;
}

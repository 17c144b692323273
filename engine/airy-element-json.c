#define G_LOG_DOMAIN "airy-element"

#include "config.h"

#include <glib/gi18n-lib.h>

#include "airy-element.h"
#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-json-private.h"
#include "airy-param-private.h"

/* An element in a system file, {"type": …, parameters…}, and its JSON
 * Schema, both from the parameters' declarations. */

static char *
known_keys (GObjectClass *klass)
{
  g_autofree GParamSpec **pspecs = NULL;
  GString *s = g_string_new ("type");
  guint n, i;

  pspecs = g_object_class_list_properties (klass, &n);
  for (i = 0; i < n; i++)
    g_string_append_printf (s, ", %s", pspecs[i]->name);
  return g_string_free (s, FALSE);
}

gboolean
airy_element_set_from_json (AiryElement *self,
                            JsonObject  *object,
                            const char  *path,
                            const char  *base_dir,
                            GError     **error)
{
  GObjectClass *klass = G_OBJECT_GET_CLASS (self);
  g_autoptr(GList) members = json_object_get_members (object);
  GList *m;

  for (m = members; m; m = m->next)
    {
      const char *key = m->data;
      GParamSpec *pspec;
      g_auto(GValue) value = G_VALUE_INIT;
      g_autofree char *sub = NULL;

      if (g_str_equal (key, "type"))
        continue;
      pspec = g_object_class_find_property (klass, key);
      if (pspec == NULL)
        {
          g_autofree char *known = known_keys (klass);
          g_autofree char *clipped = _airy_json_clip (key, -1);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_KEY,
                       _("%s.%s: unknown key for \"%s\" (known: %s)"), path, clipped,
                       airy_element_get_type_name (self), known);
          return FALSE;
        }
      sub = g_strdup_printf ("%s.%s", path, key);
      if (!airy_value_from_json (pspec, json_object_get_member (object, key), &value, sub, error))
        return FALSE;
      g_object_set_property (G_OBJECT (self), pspec->name, &value);
    }
  _airy_element_set_base_dir (self, base_dir);
  return TRUE;
}

AiryElement *
airy_element_new_from_json (JsonObject *object,
                            const char *path,
                            GType       required_type,
                            const char *base_dir,
                            GError    **error)
{
  g_autoptr(AiryElement) element = NULL;
  JsonNode *type_node = json_object_get_member (object, "type");
  const char *type_name;
  GType type;

  if (type_node == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: missing \"type\""), path);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_VALUE (type_node) || json_node_get_value_type (type_node) != G_TYPE_STRING)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                   _("%s.type: expected a string, got %s"), path, _airy_json_kind (type_node));
      return NULL;
    }
  type_name = json_node_get_string (type_node);
  type = airy_element_lookup (type_name);
  if (type == G_TYPE_INVALID)
    {
      g_autofree char *clipped = _airy_json_clip (type_name, -1);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_TYPE,
                   _("%s.type: unknown element type \"%s\" (see `airy-sim info --elements`)"),
                   path, clipped);
      return NULL;
    }
  if (required_type != G_TYPE_INVALID && !g_type_is_a (type, required_type))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.type: \"%s\" is not allowed here"), path, type_name);
      return NULL;
    }
  element = g_object_new (type, NULL);
  if (!airy_element_set_from_json (element, object, path, base_dir, error))
    return NULL;
  return g_steal_pointer (&element);
}

/* The type and the parameters, in the class's declaration order: those
 * that differ from their defaults (all: every one). */
static JsonObject *
element_to_json (AiryElement *self, gboolean all)
{
  JsonObject *object = json_object_new ();
  g_autofree GParamSpec **pspecs = NULL;
  guint n, i;

  json_object_set_string_member (object, "type", airy_element_get_type_name (self));
  pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (self), &n);
  for (i = 0; i < n; i++)
    {
      g_auto(GValue) v = G_VALUE_INIT;
      gboolean is_default;
      JsonNode *node;

      g_value_init (&v, pspecs[i]->value_type);
      g_object_get_property (G_OBJECT (self), pspecs[i]->name, &v);
      is_default = g_param_values_cmp (pspecs[i], &v, g_param_spec_get_default_value (pspecs[i])) == 0;

      /* (all: a default that is an unset string or an empty array states
       * nothing, and is left out) */
      if (is_default && (!all || (G_VALUE_HOLDS_STRING (&v) && g_value_get_string (&v) == NULL)
                         || (G_VALUE_HOLDS_BOXED (&v) && g_value_get_boxed (&v) == NULL)))
        continue;
      node = _airy_param_value_to_json (pspecs[i], &v);
      if (is_default && JSON_NODE_HOLDS_ARRAY (node) && json_array_get_length (json_node_get_array (node)) == 0)
        {
          json_node_unref (node);
          continue;
        }
      json_object_set_member (object, pspecs[i]->name, node);
    }
  return object;
}

/* Every parameter that differs from its default, so files stay short and
 * round-trip exactly. */
JsonObject *
airy_element_to_json (AiryElement *self)
{
  return element_to_json (self, FALSE);
}

JsonObject *
airy_element_to_json_full (AiryElement *self)
{
  return element_to_json (self, TRUE);
}

/* An element type's object: its parameters, and "type" as the
 * discriminator (required in "elements", optional or absent elsewhere). */
JsonObject *
_airy_element_schema (GType            type,
                      AirySchemaTypeKey type_key)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  AiryElementClass *ec = (AiryElementClass *) klass;
  JsonObject *o = json_object_new ();
  JsonObject *props = json_object_new ();
  g_autofree GParamSpec **pspecs = NULL;
  guint n, i;

  json_object_set_string_member (o, "title", ec->title);
  json_object_set_string_member (o, "type", "object");
  if (type_key != AIRY_SCHEMA_TYPE_NONE)
    {
      JsonObject *t = json_object_new ();

      json_object_set_string_member (t, "const", ec->type_name);
      json_object_set_object_member (props, "type", t);
    }
  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n);
  for (i = 0; i < n; i++)
    json_object_set_object_member (props, pspecs[i]->name, _airy_param_spec_schema (pspecs[i]));
  json_object_set_object_member (o, "properties", props);
  if (type_key == AIRY_SCHEMA_TYPE_REQUIRED)
    {
      JsonArray *required = json_array_new ();

      json_array_add_string_element (required, "type");
      json_object_set_array_member (o, "required", required);
    }
  json_object_set_boolean_member (o, "additionalProperties", FALSE);
  return o;
}

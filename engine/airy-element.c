#define G_LOG_DOMAIN "airy-element"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-element.h"
#include "airy-elements-private.h"
#include "airy-error.h"

/* Element parameters live in one generic store keyed by property name, so an
 * element class only declares its GParamSpecs: the panel, the JSON reader and
 * writer and the validation all read the same declarations (DESIGN §4). */

typedef struct
{
  GHashTable *values;    /* const char* (pspec name, interned) → GValue* */
  char       *base_dir;  /* where relative file names are resolved */
} AiryElementPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (AiryElement, airy_element, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ENABLED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];
static GQuark unit_quark;
static GQuark flags_quark;

static GMutex      registry_lock;
static GHashTable *registry;   /* type name → GType */
static GArray     *registry_order;

static void
value_free (gpointer p)
{
  GValue *v = p;

  g_value_unset (v);
  g_free (v);
}

static gboolean
doubles_are_finite (const GValue *value)
{
  GVariant *var = g_value_get_variant (value);
  gsize n = 0, i;
  const double *d = var ? g_variant_get_fixed_array (var, &n, sizeof (double)) : NULL;

  for (i = 0; i < n; i++)
    if (!isfinite (d[i]))
      return FALSE;
  return TRUE;
}

static void
airy_element_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  AiryElement *self = AIRY_ELEMENT (object);
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GValue *old = g_hash_table_lookup (priv->values, pspec->name);
  GValue *copy;

  /* GObject keeps doubles in their (finite) range; arrays are ours to check */
  if (G_VALUE_HOLDS_VARIANT (value) && !doubles_are_finite (value))
    {
      g_warning ("%s.%s: refusing an array with a non-finite number",
                 airy_element_get_type_name (self), pspec->name);
      return;
    }
  if (old != NULL && g_param_values_cmp (pspec, old, value) == 0)
    return;
  if (old == NULL)
    {
      g_auto(GValue) def = G_VALUE_INIT;

      g_value_init (&def, pspec->value_type);
      g_param_value_set_default (pspec, &def);
      if (g_param_values_cmp (pspec, &def, value) == 0)
        return;
    }
  copy = g_new0 (GValue, 1);
  g_value_init (copy, pspec->value_type);
  g_value_copy (value, copy);
  g_hash_table_replace (priv->values, (gpointer) pspec->name, copy);
  g_object_notify_by_pspec (object, pspec);
}

static void
airy_element_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  AiryElement *self = AIRY_ELEMENT (object);
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GValue *stored = g_hash_table_lookup (priv->values, pspec->name);

  if (stored != NULL)
    g_value_copy (stored, value);
  else
    g_param_value_set_default (pspec, value);
}

static gboolean
airy_element_real_check (AiryElement *self,
                         AiryContext *context,
                         GError     **error)
{
  return TRUE;
}

static void
airy_element_finalize (GObject *object)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (AIRY_ELEMENT (object));

  g_clear_pointer (&priv->values, g_hash_table_unref);
  g_clear_pointer (&priv->base_dir, g_free);
  G_OBJECT_CLASS (airy_element_parent_class)->finalize (object);
}

static void
airy_element_class_init (AiryElementClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->set_property = airy_element_set_property;
  object_class->get_property = airy_element_get_property;
  object_class->finalize = airy_element_finalize;
  klass->check = airy_element_real_check;

  unit_quark = g_quark_from_static_string ("airy-unit");
  flags_quark = g_quark_from_static_string ("airy-flags");

  properties[PROP_ENABLED] =
    airy_param_spec_boolean ("enabled", N_("Enabled"), N_("Whether the element takes part in the run"), TRUE);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
airy_element_init (AiryElement *self)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);

  priv->values = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, value_free);
}

/* GObject does not inherit get/set_property into subclasses: every element
 * class installs its parameters through here, onto the generic store. */
void
airy_element_class_install_property (GObjectClass *object_class,
                                     guint         property_id,
                                     GParamSpec   *pspec)
{
  g_return_if_fail (g_type_is_a (G_TYPE_FROM_CLASS (object_class), AIRY_TYPE_ELEMENT));

  object_class->set_property = airy_element_set_property;
  object_class->get_property = airy_element_get_property;
  g_object_class_install_property (object_class, property_id, pspec);
}

/* ---- parameter declarations ---- */

static GParamSpec *
decorate (GParamSpec *pspec, const char *unit, AiryParamFlags flags)
{
  if (unit != NULL)
    g_param_spec_set_qdata (pspec, unit_quark, (gpointer) unit);
  g_param_spec_set_qdata (pspec, flags_quark, GUINT_TO_POINTER (flags));
  return pspec;
}

#define PARAM_FLAGS (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)

GParamSpec *
airy_param_spec_double (const char    *name,
                        const char    *nick,
                        const char    *blurb,
                        const char    *unit,
                        double         minimum,
                        double         maximum,
                        double         default_value,
                        AiryParamFlags flags)
{
  /* a finite range keeps inf and nan out of every setter: GObject refuses
   * values outside it (nan included) */
  g_return_val_if_fail (isfinite (minimum) && isfinite (maximum), NULL);
  return decorate (g_param_spec_double (name, nick, blurb, minimum, maximum, default_value,
                                        PARAM_FLAGS), unit, flags);
}

GParamSpec *
airy_param_spec_int (const char    *name,
                     const char    *nick,
                     const char    *blurb,
                     int            minimum,
                     int            maximum,
                     int            default_value,
                     AiryParamFlags flags)
{
  return decorate (g_param_spec_int (name, nick, blurb, minimum, maximum, default_value,
                                     PARAM_FLAGS), NULL, flags);
}

GParamSpec *
airy_param_spec_boolean (const char *name,
                         const char *nick,
                         const char *blurb,
                         gboolean    default_value)
{
  return decorate (g_param_spec_boolean (name, nick, blurb, default_value, PARAM_FLAGS), NULL, 0);
}

GParamSpec *
airy_param_spec_enum (const char    *name,
                      const char    *nick,
                      const char    *blurb,
                      GType          enum_type,
                      int            default_value,
                      AiryParamFlags flags)
{
  return decorate (g_param_spec_enum (name, nick, blurb, enum_type, default_value, PARAM_FLAGS),
                   NULL, flags);
}

GParamSpec *
airy_param_spec_string (const char    *name,
                        const char    *nick,
                        const char    *blurb,
                        AiryParamFlags flags)
{
  return decorate (g_param_spec_string (name, nick, blurb, NULL, PARAM_FLAGS), NULL, flags);
}

GParamSpec *
airy_param_spec_doubles (const char *name,
                         const char *nick,
                         const char *blurb,
                         const char *unit)
{
  return decorate (g_param_spec_variant (name, nick, blurb, G_VARIANT_TYPE ("ad"), NULL,
                                         PARAM_FLAGS), unit, 0);
}

const char *
airy_param_spec_get_unit (GParamSpec *pspec)
{
  return g_param_spec_get_qdata (pspec, unit_quark);
}

AiryParamFlags
airy_param_spec_get_flags (GParamSpec *pspec)
{
  return GPOINTER_TO_UINT (g_param_spec_get_qdata (pspec, flags_quark));
}

char *
airy_param_spec_range_string (GParamSpec *pspec)
{
  const char *unit = airy_param_spec_get_unit (pspec);
  gboolean open = airy_param_spec_get_flags (pspec) & AIRY_PARAM_EXCLUSIVE_MIN;

  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (pspec);
      return g_strdup_printf ("%s%g, %g]%s%s", open ? "(" : "[", d->minimum, d->maximum,
                              unit ? " " : "", unit ? unit : "");
    }
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      GParamSpecInt *i = G_PARAM_SPEC_INT (pspec);
      return g_strdup_printf ("%s%d, %d]", open ? "(" : "[", i->minimum, i->maximum);
    }
  if (G_IS_PARAM_SPEC_ENUM (pspec))
    {
      GEnumClass *klass = G_PARAM_SPEC_ENUM (pspec)->enum_class;
      GString *s = g_string_new ("one of ");
      guint i;

      for (i = 0; i < klass->n_values; i++)
        g_string_append_printf (s, "%s%s", i ? ", " : "", klass->values[i].value_nick);
      return g_string_free (s, FALSE);
    }
  return g_strdup ("");
}

/* Checks a value against its spec; the message names the path, the allowed
 * range and the value, e.g. "elements[0].na: must be in (0, 1.6], got 1.7". */
gboolean
airy_param_check_value (GParamSpec   *pspec,
                        const GValue *value,
                        const char   *path,
                        GError      **error)
{
  gboolean open = airy_param_spec_get_flags (pspec) & AIRY_PARAM_EXCLUSIVE_MIN;
  g_autofree char *range = airy_param_spec_range_string (pspec);

  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (pspec);
      double v = g_value_get_double (value);

      if (!isfinite (v) || v < d->minimum || v > d->maximum || (open && v <= d->minimum))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: must be in %s, got %g"), path, range, v);
          return FALSE;
        }
    }
  else if (G_IS_PARAM_SPEC_INT (pspec))
    {
      GParamSpecInt *i = G_PARAM_SPEC_INT (pspec);
      int v = g_value_get_int (value);

      if (v < i->minimum || v > i->maximum || (open && v <= i->minimum))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: must be in %s, got %d"), path, range, v);
          return FALSE;
        }
    }
  return TRUE;
}

void
airy_element_class_set_metadata (AiryElementClass *klass,
                                 const char       *type_name,
                                 const char       *title,
                                 AiryCategory      category)
{
  klass->type_name = type_name;
  klass->title = title;
  klass->category = category;
}

const char *
airy_element_get_type_name (AiryElement *self)
{
  g_return_val_if_fail (AIRY_IS_ELEMENT (self), NULL);
  return AIRY_ELEMENT_GET_CLASS (self)->type_name;
}

gboolean
airy_element_get_enabled (AiryElement *self)
{
  return airy_element_get_boolean (self, "enabled");
}

void
airy_element_set_enabled (AiryElement *self,
                          gboolean     enabled)
{
  g_object_set (self, "enabled", enabled, NULL);
}

/* ---- typed access ---- */

static const GValue *
lookup_value (AiryElement *self, const char *name, GType type)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), name);
  const GValue *v;

  g_return_val_if_fail (pspec != NULL, NULL);
  g_return_val_if_fail (g_type_is_a (pspec->value_type, type), NULL);
  v = g_hash_table_lookup (priv->values, pspec->name);
  if (v == NULL)
    v = g_param_spec_get_default_value (pspec);
  return v;
}

double
airy_element_get_double (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_DOUBLE);
  return v ? g_value_get_double (v) : 0.0;
}

int
airy_element_get_int (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_INT);
  return v ? g_value_get_int (v) : 0;
}

gboolean
airy_element_get_boolean (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_BOOLEAN);
  return v ? g_value_get_boolean (v) : FALSE;
}

int
airy_element_get_enum (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_ENUM);
  return v ? g_value_get_enum (v) : 0;
}

const char *
airy_element_get_string (AiryElement *self, const char *name)
{
  const GValue *v = lookup_value (self, name, G_TYPE_STRING);
  return v ? g_value_get_string (v) : NULL;
}

const double *
airy_element_get_doubles (AiryElement *self, const char *name, gsize *n)
{
  const GValue *v = lookup_value (self, name, G_TYPE_VARIANT);
  GVariant *var = v ? g_value_get_variant (v) : NULL;

  *n = 0;
  if (var == NULL)
    return NULL;
  return g_variant_get_fixed_array (var, n, sizeof (double));
}

gboolean
airy_element_is_set (AiryElement *self, const char *name)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), name);

  return pspec != NULL && g_hash_table_contains (priv->values, pspec->name);
}

gboolean
airy_element_check (AiryElement *self,
                    AiryContext *context,
                    GError     **error)
{
  g_return_val_if_fail (AIRY_IS_ELEMENT (self), FALSE);
  return AIRY_ELEMENT_GET_CLASS (self)->check (self, context, error);
}

AiryElement *
airy_element_copy (AiryElement *self)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  AiryElement *copy = g_object_new (G_OBJECT_TYPE (self), NULL);
  AiryElementPrivate *cpriv = airy_element_get_instance_private (copy);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, priv->values);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GValue *v = g_new0 (GValue, 1);

      g_value_init (v, G_VALUE_TYPE ((GValue *) value));
      g_value_copy (value, v);
      g_hash_table_replace (cpriv->values, key, v);
    }
  cpriv->base_dir = g_strdup (priv->base_dir);
  return copy;
}

/* ---- JSON ---- */

static const char *
json_kind (JsonNode *node)
{
  if (JSON_NODE_HOLDS_OBJECT (node)) return "an object";
  if (JSON_NODE_HOLDS_ARRAY (node)) return "an array";
  if (JSON_NODE_HOLDS_NULL (node)) return "null";
  switch (json_node_get_value_type (node))
    {
    case G_TYPE_INT64: case G_TYPE_DOUBLE: return "a number";
    case G_TYPE_BOOLEAN: return "a boolean";
    case G_TYPE_STRING: return "a string";
    default: return "a value";
    }
}

static gboolean
json_is_number (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node)
         && (json_node_get_value_type (node) == G_TYPE_INT64
             || json_node_get_value_type (node) == G_TYPE_DOUBLE);
}

gboolean
airy_value_from_json (GParamSpec *pspec,
                      JsonNode   *node,
                      GValue     *value,
                      const char *path,
                      GError    **error)
{
  GType t = pspec->value_type;

  g_value_init (value, t);
  if (t == G_TYPE_DOUBLE)
    {
      if (!json_is_number (node))
        goto wrong;
      /* the system loader's text scan reports 1e999 as written; this guards
       * JSON built in memory */
      if (!isfinite (json_node_get_double (node)))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: must be a finite number, got %g"), path, json_node_get_double (node));
          return FALSE;
        }
      g_value_set_double (value, json_node_get_double (node));
    }
  else if (t == G_TYPE_INT)
    {
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
        goto wrong;
      if (json_node_get_int (node) < G_MININT || json_node_get_int (node) > G_MAXINT)
        {
          g_autofree char *range = airy_param_spec_range_string (pspec);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: must be in %s, got %lld"), path, range,
                       (long long) json_node_get_int (node));
          return FALSE;
        }
      g_value_set_int (value, (int) json_node_get_int (node));
    }
  else if (t == G_TYPE_BOOLEAN)
    {
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
        goto wrong;
      g_value_set_boolean (value, json_node_get_boolean (node));
    }
  else if (t == G_TYPE_STRING)
    {
      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
        goto wrong;
      g_value_set_string (value, json_node_get_string (node));
    }
  else if (G_TYPE_IS_ENUM (t))
    {
      GEnumClass *klass = G_PARAM_SPEC_ENUM (pspec)->enum_class;
      GEnumValue *ev;

      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
        goto wrong;
      ev = g_enum_get_value_by_nick (klass, json_node_get_string (node));
      if (ev == NULL)
        {
          g_autofree char *range = airy_param_spec_range_string (pspec);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: must be %s, got \"%s\""), path, range, json_node_get_string (node));
          return FALSE;
        }
      g_value_set_enum (value, ev->value);
    }
  else if (t == G_TYPE_VARIANT)
    {
      JsonArray *array;
      g_autofree double *v = NULL;
      guint i, n;

      if (!JSON_NODE_HOLDS_ARRAY (node))
        goto wrong;
      array = json_node_get_array (node);
      n = json_array_get_length (array);
      v = g_new0 (double, MAX (n, 1));
      for (i = 0; i < n; i++)
        {
          JsonNode *e = json_array_get_element (array, i);

          if (!json_is_number (e))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                           _("%s[%u]: expected a number, got %s"), path, i, json_kind (e));
              return FALSE;
            }
          v[i] = json_node_get_double (e);
          if (!isfinite (v[i]))
            {
              g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                           _("%s[%u]: must be a finite number, got %g"), path, i, v[i]);
              return FALSE;
            }
        }
      g_value_set_variant (value, g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, v, n,
                                                             sizeof (double)));
    }
  else
    g_assert_not_reached ();

  return airy_param_check_value (pspec, value, path, error);

wrong:
  {
    const char *want = t == G_TYPE_DOUBLE ? "a number"
                     : t == G_TYPE_INT ? "an integer"
                     : t == G_TYPE_BOOLEAN ? "a boolean"
                     : t == G_TYPE_VARIANT ? "an array of numbers"
                     : "a string";
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                 _("%s: expected %s, got %s"), path, want, json_kind (node));
    return FALSE;
  }
}

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
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
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
      sub = g_strdup_printf ("%s.%s", path, key);
      if (pspec == NULL)
        {
          g_autofree char *known = known_keys (klass);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_KEY,
                       _("%s: unknown key for \"%s\" (known: %s)"), sub,
                       airy_element_get_type_name (self), known);
          return FALSE;
        }
      if (!airy_value_from_json (pspec, json_object_get_member (object, key), &value, sub, error))
        return FALSE;
      g_object_set_property (G_OBJECT (self), pspec->name, &value);
    }
  g_free (priv->base_dir);
  priv->base_dir = g_strdup (base_dir);
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
                   _("%s.type: expected a string, got %s"), path, json_kind (type_node));
      return NULL;
    }
  type_name = json_node_get_string (type_node);
  type = airy_element_lookup (type_name);
  if (type == G_TYPE_INVALID)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_TYPE,
                   _("%s.type: unknown element type \"%s\" (see `airy-sim info --elements`)"),
                   path, type_name);
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

static JsonNode *
json_from_value (const GValue *value)
{
  GType t = G_VALUE_TYPE (value);
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  if (t == G_TYPE_DOUBLE)
    json_node_set_double (node, g_value_get_double (value));
  else if (t == G_TYPE_INT)
    json_node_set_int (node, g_value_get_int (value));
  else if (t == G_TYPE_BOOLEAN)
    json_node_set_boolean (node, g_value_get_boolean (value));
  else if (t == G_TYPE_STRING)
    json_node_set_string (node, g_value_get_string (value));
  else if (G_TYPE_IS_ENUM (t))
    {
      g_autoptr(GEnumClass) klass = g_type_class_ref (t);
      GEnumValue *ev = g_enum_get_value (klass, g_value_get_enum (value));
      json_node_set_string (node, ev ? ev->value_nick : "");
    }
  else if (t == G_TYPE_VARIANT)
    {
      GVariant *var = g_value_get_variant (value);
      JsonArray *array = json_array_new ();
      gsize n = 0, i;
      const double *d = var ? g_variant_get_fixed_array (var, &n, sizeof (double)) : NULL;

      for (i = 0; i < n; i++)
        json_array_add_double_element (array, d[i]);
      json_node_init_array (node, array);
      json_array_unref (array);
    }
  return node;
}

/* Writes the type and every parameter that differs from its default, in the
 * class's declaration order, so files stay short and round-trip exactly. */
JsonObject *
airy_element_to_json (AiryElement *self)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  JsonObject *object = json_object_new ();
  g_autofree GParamSpec **pspecs = NULL;
  guint n, i;

  json_object_set_string_member (object, "type", airy_element_get_type_name (self));
  pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (self), &n);
  for (i = 0; i < n; i++)
    {
      GValue *v = g_hash_table_lookup (priv->values, pspecs[i]->name);

      if (v != NULL && g_param_values_cmp (pspecs[i], v, g_param_spec_get_default_value (pspecs[i])) != 0)
        json_object_set_member (object, pspecs[i]->name, json_from_value (v));
    }
  return object;
}

/* ---- registry ---- */

void
airy_element_register (GType type)
{
  g_autoptr(GTypeClass) klass = NULL;
  const char *name;

  g_return_if_fail (g_type_is_a (type, AIRY_TYPE_ELEMENT));
  klass = g_type_class_ref (type);
  name = ((AiryElementClass *) klass)->type_name;
  g_return_if_fail (name != NULL);

  g_mutex_lock (&registry_lock);
  if (registry == NULL)
    {
      registry = g_hash_table_new (g_str_hash, g_str_equal);
      registry_order = g_array_new (FALSE, FALSE, sizeof (GType));
    }
  if (!g_hash_table_contains (registry, name))
    {
      g_hash_table_insert (registry, (gpointer) name, GSIZE_TO_POINTER (type));
      g_array_append_val (registry_order, type);
    }
  g_mutex_unlock (&registry_lock);
}

GType
airy_element_lookup (const char *type_name)
{
  GType type = G_TYPE_INVALID;

  g_mutex_lock (&registry_lock);
  if (registry != NULL)
    type = GPOINTER_TO_SIZE (g_hash_table_lookup (registry, type_name));
  g_mutex_unlock (&registry_lock);
  return type;
}

GType *
airy_element_list_types (guint *n)
{
  GType *types;

  g_mutex_lock (&registry_lock);
  *n = registry_order ? registry_order->len : 0;
  types = g_new0 (GType, *n + 1);
  if (*n)
    memcpy (types, registry_order->data, sizeof (GType) * *n);
  g_mutex_unlock (&registry_lock);
  return types;
}

AiryElement *
airy_element_new (const char *type_name,
                  GError    **error)
{
  GType type = airy_element_lookup (type_name);

  if (type == G_TYPE_INVALID)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_UNKNOWN_TYPE,
                   _("unknown element type \"%s\""), type_name);
      return NULL;
    }
  return g_object_new (type, NULL);
}

const char *
_airy_element_get_base_dir (AiryElement *self)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  return priv->base_dir;
}

void
_airy_element_set_base_dir (AiryElement *self,
                            const char  *base_dir)
{
  AiryElementPrivate *priv = airy_element_get_instance_private (self);
  char *copy = g_strdup (base_dir);

  g_free (priv->base_dir);
  priv->base_dir = copy;
}

/* ---- JSON Schema ---- */

static void
set_double (JsonObject *o, const char *key, double v)
{
  json_object_set_double_member (o, key, v);
}

static char *
schema_description (GParamSpec *pspec)
{
  const char *blurb = g_param_spec_get_blurb (pspec);
  const char *unit = airy_param_spec_get_unit (pspec);

  if (airy_param_spec_get_flags (pspec) & AIRY_PARAM_FILE)
    return g_strdup_printf ("%s (a relative name is relative to the system file's folder)", blurb);
  if (unit != NULL)
    return g_strdup_printf ("%s, in %s", blurb, unit);
  return g_strdup (blurb);
}

/* One parameter as JSON Schema (draft 2020-12): type, range (exclusive
 * bounds too), enumeration, default, and the blurb with its unit. */
JsonObject *
_airy_param_spec_schema (GParamSpec *pspec)
{
  JsonObject *o = json_object_new ();
  gboolean open = airy_param_spec_get_flags (pspec) & AIRY_PARAM_EXCLUSIVE_MIN;
  g_autofree char *description = schema_description (pspec);

  json_object_set_string_member (o, "title", g_param_spec_get_nick (pspec));
  json_object_set_string_member (o, "description", description);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (pspec);

      json_object_set_string_member (o, "type", "number");
      set_double (o, open ? "exclusiveMinimum" : "minimum", d->minimum);
      set_double (o, "maximum", d->maximum);
      set_double (o, "default", d->default_value);
    }
  else if (G_IS_PARAM_SPEC_INT (pspec))
    {
      GParamSpecInt *i = G_PARAM_SPEC_INT (pspec);

      json_object_set_string_member (o, "type", "integer");
      json_object_set_int_member (o, open ? "exclusiveMinimum" : "minimum", i->minimum);
      json_object_set_int_member (o, "maximum", i->maximum);
      json_object_set_int_member (o, "default", i->default_value);
    }
  else if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    {
      json_object_set_string_member (o, "type", "boolean");
      json_object_set_boolean_member (o, "default", G_PARAM_SPEC_BOOLEAN (pspec)->default_value);
    }
  else if (G_IS_PARAM_SPEC_ENUM (pspec))
    {
      GParamSpecEnum *e = G_PARAM_SPEC_ENUM (pspec);
      JsonArray *nicks = json_array_new ();
      GEnumValue *def = g_enum_get_value (e->enum_class, e->default_value);
      guint i;

      for (i = 0; i < e->enum_class->n_values; i++)
        json_array_add_string_element (nicks, e->enum_class->values[i].value_nick);
      json_object_set_string_member (o, "type", "string");
      json_object_set_array_member (o, "enum", nicks);
      if (def != NULL)
        json_object_set_string_member (o, "default", def->value_nick);
    }
  else if (G_IS_PARAM_SPEC_STRING (pspec))
    json_object_set_string_member (o, "type", "string");
  else if (G_IS_PARAM_SPEC_VARIANT (pspec))
    {
      JsonObject *items = json_object_new ();

      json_object_set_string_member (items, "type", "number");
      json_object_set_string_member (o, "type", "array");
      json_object_set_object_member (o, "items", items);
    }
  return o;
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

/* ---- context ---- */

void
airy_context_init (AiryContext        *context,
                   const AirySpectrum *spectrum,
                   guint               height,
                   guint               width,
                   const double       *spacing)
{
  guint l;

  memset (context, 0, sizeof *context);
  context->spectrum = spectrum;
  context->height = height;
  context->width = width;
  context->dy = g_new (double, spectrum->n);
  context->dx = g_new (double, spectrum->n);
  for (l = 0; l < spectrum->n; l++)
    context->dy[l] = context->dx[l] = spacing[l];
  context->n = 1.0;
}

void
airy_context_clear (AiryContext *context)
{
  g_clear_pointer (&context->dy, g_free);
  g_clear_pointer (&context->dx, g_free);
}

void
airy_context_copy (AiryContext       *dst,
                   const AiryContext *src)
{
  *dst = *src;
  dst->dy = g_memdup2 (src->dy, sizeof (double) * src->spectrum->n);
  dst->dx = g_memdup2 (src->dx, sizeof (double) * src->spectrum->n);
}

void
airy_context_warn (AiryContext *context,
                   const char  *format,
                   ...)
{
  va_list args;
  char *msg;

  if (context->warnings == NULL)
    return;
  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_ptr_array_add (context->warnings, msg);
}

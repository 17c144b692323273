#define G_LOG_DOMAIN "airy-param"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "airy-param.h"
#include "airy-param-private.h"
#include "airy-error.h"
#include "airy-json-private.h"

/* Parameter declarations: a GParamSpec with the unit, the flags, the range
 * of an array's entries and a field's place in the system file attached as
 * qdata, and what is done with them in one place: range strings, checks,
 * JSON values and JSON Schema. */

typedef struct
{
  double minimum;
  double maximum;
} ItemRange;

/* G_DEFINE_QUARK, static (a quark is the same whoever makes it first) */
#define PARAM_QUARK(name, string)                        \
  static GQuark                                          \
  name##_quark (void)                                    \
  {                                                      \
    static GQuark q;                                     \
    if (G_UNLIKELY (q == 0))                             \
      q = g_quark_from_static_string (string);           \
    return q;                                            \
  }

PARAM_QUARK (unit, "airy-param-unit")
PARAM_QUARK (flags, "airy-param-flags")
PARAM_QUARK (items, "airy-param-items")
PARAM_QUARK (path, "airy-param-path")
PARAM_QUARK (max_items, "airy-param-max-items")

#define PARAM_FLAGS (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)

static GParamSpec *
decorate (GParamSpec *pspec, const char *unit, AiryParamFlags flags)
{
  if (unit != NULL)
    g_param_spec_set_qdata (pspec, unit_quark (), (gpointer) unit);
  g_param_spec_set_qdata (pspec, flags_quark (), GUINT_TO_POINTER (flags));
  return pspec;
}

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

GParamSpec *
airy_param_spec_double_array (const char    *name,
                              const char    *nick,
                              const char    *blurb,
                              const char    *unit,
                              double         minimum,
                              double         maximum,
                              AiryParamFlags flags)
{
  GParamSpec *pspec;
  ItemRange *range;

  g_return_val_if_fail (isfinite (minimum) && isfinite (maximum) && minimum <= maximum, NULL);
  pspec = decorate (g_param_spec_variant (name, nick, blurb, G_VARIANT_TYPE ("ad"), NULL,
                                          PARAM_FLAGS), unit, flags);
  range = g_new (ItemRange, 1);
  range->minimum = minimum;
  range->maximum = maximum;
  g_param_spec_set_qdata_full (pspec, items_quark (), range, g_free);
  return pspec;
}

GParamSpec *
airy_param_spec_set_unit (GParamSpec *pspec,
                          const char *unit)
{
  g_return_val_if_fail (G_IS_PARAM_SPEC (pspec), pspec);
  g_param_spec_set_qdata (pspec, unit_quark (), (gpointer) unit);
  return pspec;
}

GParamSpec *
airy_param_spec_set_path (GParamSpec *pspec,
                          const char *path)
{
  g_return_val_if_fail (G_IS_PARAM_SPEC (pspec), pspec);
  g_param_spec_set_qdata (pspec, path_quark (), (gpointer) path);
  return pspec;
}

GParamSpec *
airy_param_spec_set_max_items (GParamSpec *pspec,
                               guint       max_items)
{
  g_return_val_if_fail (G_IS_PARAM_SPEC_VARIANT (pspec), pspec);
  g_param_spec_set_qdata (pspec, max_items_quark (), GUINT_TO_POINTER (max_items));
  return pspec;
}

guint
airy_param_spec_get_max_items (GParamSpec *pspec)
{
  return GPOINTER_TO_UINT (g_param_spec_get_qdata (pspec, max_items_quark ()));
}

const char *
airy_param_spec_get_unit (GParamSpec *pspec)
{
  return g_param_spec_get_qdata (pspec, unit_quark ());
}

const char *
airy_param_spec_get_path (GParamSpec *pspec)
{
  return g_param_spec_get_qdata (pspec, path_quark ());
}

AiryParamFlags
airy_param_spec_get_flags (GParamSpec *pspec)
{
  return GPOINTER_TO_UINT (g_param_spec_get_qdata (pspec, flags_quark ()));
}

gboolean
airy_param_spec_is_differentiable (GParamSpec *pspec, const char **why)
{
  AiryParamFlags flags = airy_param_spec_get_flags (pspec);
  const char *reason = NULL;

  if (G_IS_PARAM_SPEC_DOUBLE (pspec) || G_IS_PARAM_SPEC_VARIANT (pspec))
    {
      if (flags & AIRY_PARAM_INTEGER)
        reason = _("its entries are whole numbers (indices)");
      else if (flags & AIRY_PARAM_NOT_DIFFERENTIABLE)
        reason = _("it changes the grid or a count, a step the gradient cannot follow");
    }
  else if (G_IS_PARAM_SPEC_ENUM (pspec))
    reason = _("it is a choice among names");
  else if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    reason = _("it is on or off");
  else if (G_IS_PARAM_SPEC_INT (pspec) || G_IS_PARAM_SPEC_UINT (pspec))
    reason = _("it is a whole number");
  else
    reason = _("it is not a number");
  if (why)
    *why = reason;
  return reason == NULL;
}

gboolean
airy_param_spec_get_item_range (GParamSpec *pspec,
                                double     *minimum,
                                double     *maximum)
{
  ItemRange *range = g_param_spec_get_qdata (pspec, items_quark ());

  if (range == NULL)
    return FALSE;
  if (minimum)
    *minimum = range->minimum;
  if (maximum)
    *maximum = range->maximum;
  return TRUE;
}

/* "(0, 100] µm"; G_MAXDOUBLE as the maximum: "[0, ∞)" */
static char *
format_range (double minimum, double maximum, gboolean open, const char *unit)
{
  g_autofree char *hi = maximum >= G_MAXDOUBLE ? g_strdup ("∞)") : g_strdup_printf ("%g]", maximum);

  return g_strdup_printf ("%s%g, %s%s%s", open ? "(" : "[", minimum, hi,
                          unit ? " " : "", unit ? unit : "");
}

char *
airy_param_spec_range_string (GParamSpec *pspec)
{
  const char *unit = airy_param_spec_get_unit (pspec);
  gboolean open = airy_param_spec_get_flags (pspec) & AIRY_PARAM_EXCLUSIVE_MIN;
  double lo, hi;

  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (pspec);
      return format_range (d->minimum, d->maximum, open, unit);
    }
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      /* counts: the messages name no unit */
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
  if (airy_param_spec_get_item_range (pspec, &lo, &hi))
    return format_range (lo, hi, open, unit);
  return g_strdup ("");
}

const double *
_airy_value_get_doubles (const GValue *value,
                         gsize        *n)
{
  GVariant *var = g_value_get_variant (value);

  *n = 0;
  return var ? g_variant_get_fixed_array (var, n, sizeof (double)) : NULL;
}

/* the range and the value beside the message, for callers that word it */
static void
attach_range (GParamSpec *pspec, double minimum, double maximum, double value, GError **error)
{
  AiryErrorRange r = { minimum, maximum, value, (airy_param_spec_get_flags (pspec) & AIRY_PARAM_EXCLUSIVE_MIN) != 0,
                       NULL, G_IS_PARAM_SPEC_INT (pspec) ? NULL : airy_param_spec_get_unit (pspec) };

  if (error)
    airy_error_set_range (*error, &r);
}

static gboolean
check_items (GParamSpec *pspec, const GValue *value, const char *path, GError **error)
{
  AiryParamFlags flags = airy_param_spec_get_flags (pspec);
  gboolean open = flags & AIRY_PARAM_EXCLUSIVE_MIN;
  gboolean integer = flags & AIRY_PARAM_INTEGER;
  double lo, hi;
  gsize n, i;
  const double *v = _airy_value_get_doubles (value, &n);
  guint max_items = airy_param_spec_get_max_items (pspec);

  if (max_items > 0 && n > max_items)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: must have at most %u entries, got %lu"), path, max_items, (unsigned long) n);
      return FALSE;
    }
  if (!airy_param_spec_get_item_range (pspec, &lo, &hi))
    return TRUE;
  for (i = 0; i < n; i++)
    if (!isfinite (v[i]) || v[i] < lo || v[i] > hi || (open && v[i] <= lo)
        || (integer && v[i] != floor (v[i])))
      {
        g_autofree char *range = airy_param_spec_range_string (pspec);

        if (integer)
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s[%u]: must be an integer in %s, got %g"), path, (guint) i, range, v[i]);
        else
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s[%u]: must be in %s, got %g"), path, (guint) i, range, v[i]);
        attach_range (pspec, lo, hi, v[i], error);
        return FALSE;
      }
  return TRUE;
}

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
          attach_range (pspec, d->minimum, d->maximum, v, error);
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
          attach_range (pspec, i->minimum, i->maximum, v, error);
          return FALSE;
        }
    }
  else if (G_IS_PARAM_SPEC_VARIANT (pspec))
    return check_items (pspec, value, path, error);
  return TRUE;
}

gboolean
_airy_param_array_acceptable (GParamSpec   *pspec,
                              const GValue *value,
                              const char   *owner)
{
  g_autoptr(GError) error = NULL;
  gsize n, i;
  const double *d = _airy_value_get_doubles (value, &n);

  for (i = 0; i < n; i++)
    if (!isfinite (d[i]))
      {
        g_warning ("%s.%s: refusing an array with a non-finite number", owner, pspec->name);
        return FALSE;
      }
  if (!check_items (pspec, value, pspec->name, &error))
    {
      g_warning ("%s.%s: refusing an array: %s", owner, pspec->name, error->message);
      return FALSE;
    }
  return TRUE;
}

/* an integer beyond int, from a file or typed: the message of any other */
static gboolean
int_out_of_range (GParamSpec *pspec, long long v, const char *path, GError **error)
{
  g_autofree char *range = airy_param_spec_range_string (pspec);

  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("%s: must be in %s, got %lld"), path, range, v);
  return FALSE;
}

gboolean
airy_param_check_number (GParamSpec *pspec,
                         double      number,
                         const char *path,
                         GError    **error)
{
  g_auto(GValue) value = G_VALUE_INIT;

  g_return_val_if_fail (G_IS_PARAM_SPEC_INT (pspec) || G_IS_PARAM_SPEC_DOUBLE (pspec), FALSE);
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      double r = round (number);

      if (!(r >= G_MININT && r <= G_MAXINT))
        return int_out_of_range (pspec, (long long) CLAMP (r, -9e18, 9e18), path, error);
      g_value_init (&value, G_TYPE_INT);
      g_value_set_int (&value, (int) r);
    }
  else
    {
      g_value_init (&value, G_TYPE_DOUBLE);
      g_value_set_double (&value, number);
    }
  return airy_param_check_value (pspec, &value, path, error);
}

/* ---- JSON values ---- */

const char *
_airy_json_kind (JsonNode *node)
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

gboolean
_airy_json_is_number (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node)
         && (json_node_get_value_type (node) == G_TYPE_INT64
             || json_node_get_value_type (node) == G_TYPE_DOUBLE);
}

static gboolean
doubles_from_json (JsonNode *node, GValue *value, const char *path, GError **error)
{
  JsonArray *array = json_node_get_array (node);
  guint i, n = json_array_get_length (array);
  g_autofree double *v = g_new0 (double, MAX (n, 1));

  for (i = 0; i < n; i++)
    {
      JsonNode *e = json_array_get_element (array, i);

      if (!_airy_json_is_number (e))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRONG_TYPE,
                       _("%s[%u]: expected a number, got %s"), path, i, _airy_json_kind (e));
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
  g_value_set_variant (value, g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, v, n, sizeof (double)));
  return TRUE;
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
      if (!_airy_json_is_number (node))
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
        return int_out_of_range (pspec, (long long) json_node_get_int (node), path, error);
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
      /* a file name no system can open, before any message echoes it */
      if ((airy_param_spec_get_flags (pspec) & AIRY_PARAM_FILE) && strlen (json_node_get_string (node)) >= PATH_MAX)
        {
          g_autofree char *clipped = _airy_json_clip (json_node_get_string (node), -1);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: a file name must be shorter than %d bytes, got \"%s\""), path, PATH_MAX, clipped);
          return FALSE;
        }
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
          g_autofree char *clipped = _airy_json_clip (json_node_get_string (node), -1);
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("%s: must be %s, got \"%s\""), path, range, clipped);
          return FALSE;
        }
      g_value_set_enum (value, ev->value);
    }
  else if (t == G_TYPE_VARIANT)
    {
      if (!JSON_NODE_HOLDS_ARRAY (node))
        goto wrong;
      if (!doubles_from_json (node, value, path, error))
        return FALSE;
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
                 _("%s: expected %s, got %s"), path, want, _airy_json_kind (node));
    return FALSE;
  }
}

JsonNode *
_airy_value_to_json (const GValue *value)
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
      JsonArray *array = json_array_new ();
      gsize n, i;
      const double *d = _airy_value_get_doubles (value, &n);

      for (i = 0; i < n; i++)
        json_array_add_double_element (array, d[i]);
      json_node_init_array (node, array);
      json_array_unref (array);
    }
  return node;
}

/* A parameter's value: an array of whole numbers (AIRY_PARAM_INTEGER, the
 * Zernike indices) as integers, not 3.0 (doubles inside it, which
 * validation refuses, stay doubles so that the file round-trips). */
JsonNode *
_airy_param_value_to_json (GParamSpec   *pspec,
                           const GValue *value)
{
  if (G_VALUE_TYPE (value) == G_TYPE_VARIANT && (airy_param_spec_get_flags (pspec) & AIRY_PARAM_INTEGER))
    {
      JsonNode *node = json_node_new (JSON_NODE_ARRAY);
      JsonArray *array = json_array_new ();
      gsize n, i;
      const double *d = _airy_value_get_doubles (value, &n);

      for (i = 0; i < n; i++)
        {
          if (d[i] == floor (d[i]) && fabs (d[i]) <= 9007199254740992.0)
            json_array_add_int_element (array, (gint64) d[i]);
          else
            json_array_add_double_element (array, d[i]);
        }
      json_node_init_array (node, array);
      json_array_unref (array);
      return node;
    }
  return _airy_value_to_json (value);
}

/* ---- JSON Schema ---- */

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

/* minimum (or exclusiveMinimum) and maximum, none for "no upper bound" */
static void
schema_bounds (JsonObject *o, double minimum, double maximum, gboolean open)
{
  json_object_set_double_member (o, open ? "exclusiveMinimum" : "minimum", minimum);
  if (maximum < G_MAXDOUBLE)
    json_object_set_double_member (o, "maximum", maximum);
}

JsonObject *
_airy_param_spec_schema (GParamSpec *pspec)
{
  JsonObject *o = json_object_new ();
  AiryParamFlags flags = airy_param_spec_get_flags (pspec);
  gboolean open = flags & AIRY_PARAM_EXCLUSIVE_MIN;
  g_autofree char *description = schema_description (pspec);

  json_object_set_string_member (o, "title", g_param_spec_get_nick (pspec));
  json_object_set_string_member (o, "description", description);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (pspec);

      json_object_set_string_member (o, "type", "number");
      schema_bounds (o, d->minimum, d->maximum, open);
      json_object_set_double_member (o, "default", d->default_value);
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
      double lo, hi;

      json_object_set_string_member (items, "type", flags & AIRY_PARAM_INTEGER ? "integer" : "number");
      if (airy_param_spec_get_item_range (pspec, &lo, &hi))
        schema_bounds (items, lo, hi, open);
      json_object_set_string_member (o, "type", "array");
      json_object_set_object_member (o, "items", items);
      if (airy_param_spec_get_max_items (pspec) > 0)
        json_object_set_int_member (o, "maxItems", airy_param_spec_get_max_items (pspec));
    }
  return o;
}

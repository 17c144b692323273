/* OME-Zarr metadata, read and checked (airy-zarr-private.h): a Zarr v2
 * array's .zarray and an OME-NGFF 0.4 image group's .zattrs. Every value
 * is checked before the reader trusts it; messages name the file, the key
 * and the value. */
#define G_LOG_DOMAIN "airy-zarr"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>
#include <blosc.h>
#include <json-glib/json-glib.h>

#include "airy-zarr-private.h"
#include "airy-error.h"
#include "airy-json-private.h"

/* the largest size of one axis Airy takes (a plane of 2^20 pixels a side
 * is far beyond any budget; the budget check comes later) */
#define AXIS_LIMIT (G_GUINT64_CONSTANT (1) << 31)

static gboolean
bad (GError **error, const char *name, const char *key, const char *what, JsonNode *value)
{
  g_autofree char *text = value ? json_to_string (value, FALSE) : g_strdup ("nothing");
  g_autofree char *clip = _airy_json_clip (text, -1);

  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s: %s, got %s"), name, key, what, clip);
  return FALSE;
}

static JsonNode *
member (JsonObject *o, const char *key)
{
  return json_object_has_member (o, key) ? json_object_get_member (o, key) : NULL;
}

static gboolean
is_number (JsonNode *n)
{
  GType t;

  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n))
    return FALSE;
  t = json_node_get_value_type (n);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

static gboolean
is_integer (JsonNode *n)
{
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_INT64;
}

static const char *
string_of (JsonNode *n)
{
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
         ? json_node_get_string (n) : NULL;
}

/* a list of ndim whole numbers in [1, AXIS_LIMIT] */
static gboolean
parse_sizes (JsonObject *o, const char *key, const char *name, guint *ndim, guint64 *out, GError **error)
{
  JsonNode *n = member (o, key);
  JsonArray *a;
  guint i, len;

  if (n == NULL || !JSON_NODE_HOLDS_ARRAY (n))
    return bad (error, name, key, _("must be a list of sizes"), n);
  a = json_node_get_array (n);
  len = json_array_get_length (a);
  if (len < 1 || len > AIRY_ZARR_MAX_DIMS || (*ndim && len != *ndim))
    {
      g_autofree char *what = *ndim ? g_strdup_printf (_("must have %u sizes (the shape's)"), *ndim)
                                    : g_strdup_printf (_("must have 1 to %u sizes"), AIRY_ZARR_MAX_DIMS);
      return bad (error, name, key, what, n);
    }
  for (i = 0; i < len; i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      g_autofree char *at = g_strdup_printf ("%s[%u]", key, i);

      if (!is_integer (e) || json_node_get_int (e) < 1 || (guint64) json_node_get_int (e) > AXIS_LIMIT)
        return bad (error, name, at, _("must be a whole number from 1 to 2147483648"), e);
      out[i] = (guint64) json_node_get_int (e);
    }
  *ndim = len;
  return TRUE;
}

static gboolean
parse_dtype (JsonObject *o, const char *name, AiryZarrArray *array, GError **error)
{
  JsonNode *n = member (o, "dtype");
  const char *s = string_of (n);
  const char *what = _("must be one of \"<f4\", \"<f8\", \"|u1\", \"<u2\", \"<u4\", \"|i1\", \"<i2\", \"<i4\" "
                       "(or \">\" for big-endian)");

  if (s == NULL || strlen (s) != 3 || strchr ("<>|", s[0]) == NULL || strchr ("fui", s[1]) == NULL
      || strchr ("1248", s[2]) == NULL)
    return bad (error, name, "dtype", what, n);
  array->kind = s[1];
  array->itemsize = s[2] - '0';
  array->big_endian = s[0] == '>';
  if ((array->kind == 'f' && array->itemsize < 4) || (array->kind != 'f' && array->itemsize == 8)
      || (s[0] == '|') != (array->itemsize == 1))
    return bad (error, name, "dtype", what, n);
  return TRUE;
}

static gboolean
parse_compressor (JsonObject *o, const char *name, AiryZarrArray *array, GError **error)
{
  JsonNode *n = member (o, "compressor");
  JsonObject *c;
  const char *id;

  if (n == NULL)
    return bad (error, name, "compressor", _("must be given (null: none)"), n);
  if (JSON_NODE_HOLDS_NULL (n))
    {
      array->codec = AIRY_ZARR_CODEC_NONE;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (n))
    return bad (error, name, "compressor", _("must be an object or null"), n);
  c = json_node_get_object (n);
  id = string_of (member (c, "id"));
  if (g_strcmp0 (id, "blosc") == 0)
    {
      const char *cname = string_of (member (c, "cname"));

      /* what this libblosc was built with (blosclz, lz4, lz4hc, zlib, zstd) */
      if (cname == NULL || blosc_compname_to_compcode (cname) < 0)
        return bad (error, name, "compressor.cname", _("must be a Blosc compressor this Airy decodes"),
                    member (c, "cname"));
      array->codec = AIRY_ZARR_CODEC_BLOSC;
      return TRUE;
    }
  if (g_strcmp0 (id, "zstd") == 0)
    {
      array->codec = AIRY_ZARR_CODEC_ZSTD;
      return TRUE;
    }
  return bad (error, name, "compressor.id", _("Airy decodes \"blosc\", \"zstd\" or no compressor (null)"),
              member (c, "id"));
}

static gboolean
parse_fill (JsonObject *o, const char *name, AiryZarrArray *array, GError **error)
{
  JsonNode *n = member (o, "fill_value");
  const char *s = string_of (n);

  array->has_fill = TRUE;
  if (n != NULL && JSON_NODE_HOLDS_NULL (n))
    array->has_fill = FALSE;
  else if (is_number (n))
    array->fill = json_node_get_double (n);
  else if (g_strcmp0 (s, "NaN") == 0 && array->kind == 'f')
    array->fill = NAN;
  else if (g_strcmp0 (s, "Infinity") == 0 && array->kind == 'f')
    array->fill = INFINITY;
  else if (g_strcmp0 (s, "-Infinity") == 0 && array->kind == 'f')
    array->fill = -INFINITY;
  else
    return bad (error, name, "fill_value", _("must be a number, \"NaN\", \"Infinity\", \"-Infinity\" or null"), n);
  return TRUE;
}

gboolean
_airy_zarr_parse_array (const char    *data,
                        gsize          length,
                        const char    *name,
                        AiryZarrArray *array,
                        GError       **error)
{
  g_autoptr(JsonParser) parser = _airy_json_parse (data, length, name, error);
  JsonNode *root, *n;
  JsonObject *o;
  const char *s;
  guint ndim = 0;
  guint64 chunk_items = 1;
  guint i;

  memset (array, 0, sizeof *array);
  if (parser == NULL)
    return FALSE;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return bad (error, name, "the array's metadata", _("must be a JSON object"), root);
  o = json_node_get_object (root);
  n = member (o, "zarr_format");
  if (!is_integer (n) || json_node_get_int (n) != 2)
    return bad (error, name, "zarr_format", _("must be 2 (Zarr v2, what OME-NGFF 0.4 uses)"), n);
  if (!parse_sizes (o, "shape", name, &ndim, array->shape, error)
      || !parse_sizes (o, "chunks", name, &ndim, array->chunks, error)
      || !parse_dtype (o, name, array, error)
      || !parse_compressor (o, name, array, error)
      || !parse_fill (o, name, array, error))
    return FALSE;
  array->ndim = ndim;
  for (i = 0; i < ndim; i++)
    chunk_items *= array->chunks[i];   /* ≤ 2^155 cannot overflow … */
  if (chunk_items > (G_GUINT64_CONSTANT (1) << 30) / array->itemsize)
    return bad (error, name, "chunks", _("must describe chunks of at most 1 GiB"), member (o, "chunks"));
  n = member (o, "order");
  if (g_strcmp0 (string_of (n), "C") != 0)
    return bad (error, name, "order", _("Airy reads \"C\" order"), n);
  n = member (o, "filters");
  if (n != NULL && !JSON_NODE_HOLDS_NULL (n)
      && !(JSON_NODE_HOLDS_ARRAY (n) && json_array_get_length (json_node_get_array (n)) == 0))
    return bad (error, name, "filters", _("Airy reads arrays without filters (null)"), n);
  n = member (o, "dimension_separator");
  s = n ? string_of (n) : ".";
  if (g_strcmp0 (s, ".") != 0 && g_strcmp0 (s, "/") != 0)
    return bad (error, name, "dimension_separator", _("must be \".\" or \"/\""), n);
  array->separator = s[0];
  return TRUE;
}

/* ---- the group ---- */

void
_airy_zarr_group_clear (AiryZarrGroup *group)
{
  g_strfreev (group->paths);
  g_free (group->scales);
  g_free (group->translations);
  g_free (group->z);
  g_free (group->wavelengths);
  g_free (group->weights);
  g_free (group->system_json);
  memset (group, 0, sizeof *group);
}

/* µm per unit of the NGFF space units (UDUNITS-2 names) */
static gboolean
unit_to_um (const char *unit, double *um)
{
  static const struct { const char *name; double um; } units[] = {
    { "angstrom", 1e-4 }, { "nanometer", 1e-3 }, { "micrometer", 1 }, { "micron", 1 },
    { "millimeter", 1e3 }, { "centimeter", 1e4 }, { "meter", 1e6 }, { "picometer", 1e-6 },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_strcmp0 (unit, units[i].name) == 0)
      {
        *um = units[i].um;
        return TRUE;
      }
  return FALSE;
}

/* axes: 0.4's objects {name, type, unit} or 0.3's names; z, y, x with at
 * most a time and a channel axis before them, y and x last */
static gboolean
parse_axes (JsonObject *ms, const char *name, AiryZarrGroup *group, double *um, GError **error)
{
  JsonNode *n = member (ms, "axes");
  JsonArray *a;
  guint i, len;

  if (n == NULL || !JSON_NODE_HOLDS_ARRAY (n))
    return bad (error, name, "multiscales[0].axes", _("must be a list of axes"), n);
  a = json_node_get_array (n);
  len = json_array_get_length (a);
  if (len < 2 || len > AIRY_ZARR_MAX_DIMS)
    return bad (error, name, "multiscales[0].axes", _("must have 2 to 5 axes"), n);
  for (i = 0; i < len; i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      g_autofree char *at = g_strdup_printf ("multiscales[0].axes[%u]", i);
      const char *axis = string_of (e), *unit = NULL;

      if (e != NULL && JSON_NODE_HOLDS_OBJECT (e))
        {
          JsonObject *ao = json_node_get_object (e);

          axis = string_of (member (ao, "name"));
          unit = string_of (member (ao, "unit"));
          if (member (ao, "unit") != NULL && unit == NULL)
            return bad (error, name, at, _("unit must be a string"), e);
        }
      if (axis == NULL || strlen (axis) != 1 || strchr ("tczyx", axis[0]) == NULL
          || memchr (group->axes, axis[0], i) != NULL)
        return bad (error, name, at, _("must name one of the axes t, c, z, y, x, each once"), e);
      group->axes[i] = axis[0];
      um[i] = 1;
      if (strchr ("zyx", axis[0]) && unit != NULL && !unit_to_um (unit, &um[i]))
        {
          g_autofree char *key = g_strdup_printf ("%s.unit", at);
          return bad (error, name, key, _("must be a length unit (nanometer, micrometer, millimeter, …)"),
                      member (json_node_get_object (e), "unit"));
        }
    }
  group->ndim = len;
  if (group->axes[len - 1] != 'x' || group->axes[len - 2] != 'y'
      || (len > 2 && strchr ("tcz", group->axes[0]) == NULL))
    return bad (error, name, "multiscales[0].axes", _("must end in y, x (after t, c, z where given)"), n);
  for (i = 0; i + 1 < len; i++)
    if (strchr ("tczyx", group->axes[i]) > strchr ("tczyx", group->axes[i + 1]))
      return bad (error, name, "multiscales[0].axes", _("must be in the order t, c, z, y, x"), n);
  return TRUE;
}

/* a list of scale and translation transforms, composed into s and t */
static gboolean
parse_transforms (JsonNode *n, const char *key, const char *name, guint ndim, double *s, double *t,
                  GError **error)
{
  JsonArray *a;
  guint i, j;

  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return bad (error, name, key, _("must be a list of transformations"), n);
  a = json_node_get_array (n);
  for (i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      g_autofree char *at = g_strdup_printf ("%s[%u]", key, i);
      JsonObject *to = e && JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
      const char *type = to ? string_of (member (to, "type")) : NULL;
      gboolean scale = g_strcmp0 (type, "scale") == 0;
      JsonNode *v;
      JsonArray *va;

      if (g_strcmp0 (type, "identity") == 0)
        continue;
      if (!scale && g_strcmp0 (type, "translation") != 0)
        return bad (error, name, at, _("must be a \"scale\" or \"translation\" (given in place)"), e);
      v = member (to, type);
      if (v == NULL || !JSON_NODE_HOLDS_ARRAY (v) || json_array_get_length (va = json_node_get_array (v)) != ndim)
        {
          g_autofree char *what = g_strdup_printf (_("must be a list of %u numbers (one per axis)"), ndim);
          g_autofree char *vkey = g_strdup_printf ("%s.%s", at, type);
          return bad (error, name, vkey, what, v);
        }
      for (j = 0; j < ndim; j++)
        {
          JsonNode *x = json_array_get_element (va, j);
          g_autofree char *xkey = g_strdup_printf ("%s.%s[%u]", at, type, j);
          double d = is_number (x) ? json_node_get_double (x) : NAN;

          if (!isfinite (d) || (scale && !(d > 0)))
            return bad (error, name, xkey, scale ? _("must be a number above 0") : _("must be a number"), x);
          if (scale)
            {
              s[j] *= d;
              t[j] *= d;
            }
          else
            t[j] += d;
        }
    }
  return TRUE;
}

/* a level's path: a relative name inside the store, never out of it */
static gboolean
path_ok (const char *p)
{
  char **parts;
  gboolean ok = p != NULL && *p && *p != '/' && strlen (p) < 256;
  guint i;

  for (i = 0; ok && p[i]; i++)
    ok = g_ascii_isalnum (p[i]) || strchr ("._-/", p[i]) != NULL;
  if (!ok)
    return FALSE;
  parts = g_strsplit (p, "/", -1);
  for (i = 0; ok && parts[i]; i++)
    ok = *parts[i] && strcmp (parts[i], ".") != 0 && strcmp (parts[i], "..") != 0;
  g_strfreev (parts);
  return ok;
}

static gboolean
parse_datasets (JsonObject *ms, const char *name, AiryZarrGroup *group, const double *um, GError **error)
{
  JsonNode *n = member (ms, "datasets");
  guint ndim = group->ndim, i, j;
  double top_s[AIRY_ZARR_MAX_DIMS], top_t[AIRY_ZARR_MAX_DIMS];
  JsonArray *a;

  if (n == NULL || !JSON_NODE_HOLDS_ARRAY (n) || json_array_get_length (json_node_get_array (n)) == 0
      || json_array_get_length (json_node_get_array (n)) > 64)
    return bad (error, name, "multiscales[0].datasets", _("must be a list of 1 to 64 levels"), n);
  a = json_node_get_array (n);
  group->n_levels = json_array_get_length (a);
  group->paths = g_new0 (char *, group->n_levels + 1);
  group->scales = g_new (double, group->n_levels * ndim);
  group->translations = g_new0 (double, group->n_levels * ndim);
  for (j = 0; j < ndim; j++)
    {
      top_s[j] = 1;
      top_t[j] = 0;
    }
  /* the multiscale's own transformations apply after each level's */
  if (!parse_transforms (member (ms, "coordinateTransformations"), "multiscales[0].coordinateTransformations",
                         name, ndim, top_s, top_t, error))
    return FALSE;
  for (i = 0; i < group->n_levels; i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      JsonObject *d = e && JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
      g_autofree char *at = g_strdup_printf ("multiscales[0].datasets[%u]", i);
      g_autofree char *tkey = g_strdup_printf ("%s.coordinateTransformations", at);
      g_autofree char *pkey = g_strdup_printf ("%s.path", at);
      double *s = group->scales + i * ndim, *t = group->translations + i * ndim;
      const char *path;

      if (d == NULL)
        return bad (error, name, at, _("must be an object"), e);
      path = string_of (member (d, "path"));
      if (!path_ok (path))
        return bad (error, name, pkey, _("must be a relative path inside the store"), member (d, "path"));
      group->paths[i] = g_strdup (path);
      for (j = 0; j < ndim; j++)
        s[j] = 1;
      if (!parse_transforms (member (d, "coordinateTransformations"), tkey, name, ndim, s, t, error))
        return FALSE;
      for (j = 0; j < ndim; j++)
        {
          s[j] = s[j] * top_s[j] * um[j];
          t[j] = (t[j] * top_s[j] + top_t[j]) * um[j];
        }
    }
  return TRUE;
}

static gboolean
parse_numbers (JsonObject *o, const char *key, const char *name, guint *n_out, double **out, GError **error)
{
  JsonNode *n = member (o, key);
  g_autofree char *at = g_strdup_printf ("airy.%s", key);
  JsonArray *a;
  guint i;

  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n) || json_array_get_length (json_node_get_array (n)) > (1u << 24))
    return bad (error, name, at, _("must be a list of numbers"), n);
  a = json_node_get_array (n);
  *n_out = json_array_get_length (a);
  *out = g_new (double, *n_out + 1);
  for (i = 0; i < *n_out; i++)
    {
      JsonNode *e = json_array_get_element (a, i);

      if (!is_number (e) || !isfinite (json_node_get_double (e)))
        {
          g_autofree char *ekey = g_strdup_printf ("%s[%u]", at, i);
          return bad (error, name, ekey, _("must be a number"), e);
        }
      (*out)[i] = json_node_get_double (e);
    }
  return TRUE;
}

/* Airy's own attributes: exact z, the spectrum, the system */
static gboolean
parse_airy (JsonObject *root, const char *name, AiryZarrGroup *group, GError **error)
{
  JsonNode *n = member (root, "airy"), *system;
  JsonObject *o;
  guint n_weights = 0;

  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (n))
    return bad (error, name, "airy", _("must be an object"), n);
  o = json_node_get_object (n);
  group->airy = TRUE;
  if (!parse_numbers (o, "z", name, &group->n_z, &group->z, error)
      || !parse_numbers (o, "wavelengths", name, &group->n_wavelengths, &group->wavelengths, error)
      || !parse_numbers (o, "weights", name, &n_weights, &group->weights, error))
    return FALSE;
  if (n_weights != group->n_wavelengths)
    return bad (error, name, "airy.weights", _("must have one weight per wavelength"), member (o, "weights"));
  system = member (o, "system");
  if (system != NULL && !JSON_NODE_HOLDS_OBJECT (system))
    return bad (error, name, "airy.system", _("must be a system (an object)"), system);
  if (system != NULL)
    group->system_json = json_to_string (system, TRUE);
  return TRUE;
}

gboolean
_airy_zarr_parse_group (const char    *data,
                        gsize          length,
                        const char    *name,
                        AiryZarrGroup *group,
                        GError       **error)
{
  g_autoptr(JsonParser) parser = _airy_json_parse (data, length, name, error);
  double um[AIRY_ZARR_MAX_DIMS];
  JsonNode *root, *n, *v;
  JsonObject *o, *ms;
  const char *version;

  memset (group, 0, sizeof *group);
  if (parser == NULL)
    return FALSE;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return bad (error, name, "the group's attributes", _("must be a JSON object"), root);
  o = json_node_get_object (root);
  n = member (o, "multiscales");
  if (n == NULL || !JSON_NODE_HOLDS_ARRAY (n) || json_array_get_length (json_node_get_array (n)) == 0
      || !JSON_NODE_HOLDS_OBJECT (json_array_get_element (json_node_get_array (n), 0)))
    return bad (error, name, "multiscales", _("must be a list of images (an OME-Zarr image group)"), n);
  ms = json_node_get_object (json_array_get_element (json_node_get_array (n), 0));
  v = member (ms, "version");
  version = string_of (v);
  if (v != NULL && (version == NULL || !(g_str_equal (version, "0.4") || g_str_equal (version, "0.3")
                                         || g_str_equal (version, "0.2") || g_str_equal (version, "0.1"))))
    return bad (error, name, "multiscales[0].version", _("Airy reads OME-NGFF 0.1 to 0.4 (Zarr v2)"), v);
  if (!parse_axes (ms, name, group, um, error)
      || !parse_datasets (ms, name, group, um, error)
      || !parse_airy (o, name, group, error))
    {
      _airy_zarr_group_clear (group);
      return FALSE;
    }
  return TRUE;
}

/* OME-XML for OME-TIFF files: written for Airy's stacks (physical sizes in
 * µm, every plane's z, the spectrum, the Airy version and the system as a
 * map annotation) and read from any single-file OME-TIFF (sizes, units,
 * dimension order, TiffData mapping, Plane positions). Schema 2016-06. */
#define G_LOG_DOMAIN "airy-ome"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-error.h"
#include "airy-json-private.h"
#include "airy-tiff-private.h"

#define OME_NS "http://www.openmicroscopy.org/Schemas/OME/2016-06"

gboolean
_airy_length_unit_to_um (const char *unit,
                         double     *scale)
{
  static const struct { const char *name; double um; } units[] = {
    { "micron", 1.0 }, { "microns", 1.0 }, { "um", 1.0 }, { "\xc2\xb5m", 1.0 } /* µ, U+00B5 */,
    { "\xce\xbcm", 1.0 } /* μ, U+03BC */, { "\xb5m", 1.0 } /* µ in Latin-1 */,
    { "micrometer", 1.0 }, { "micrometre", 1.0 },
    { "nm", 1e-3 }, { "nanometer", 1e-3 }, { "nanometre", 1e-3 },
    { "pm", 1e-6 }, { "\xc3\x85", 1e-4 } /* Å */, { "angstrom", 1e-4 },
    { "mm", 1e3 }, { "millimeter", 1e3 }, { "millimetre", 1e3 },
    { "cm", 1e4 }, { "m", 1e6 }, { "meter", 1e6 }, { "metre", 1e6 },
    { "inch", 25400.0 }, { "in", 25400.0 },
  };
  g_autofree char *u = NULL;
  guint i;

  if (unit == NULL)
    return FALSE;
  u = g_strstrip (g_strdup (unit));
  for (i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_ascii_strcasecmp (u, units[i].name) == 0)
      {
        *scale = units[i].um;
        return TRUE;
      }
  return FALSE;
}

/* ---- writing ---- */

static void
append_number_attr (GString *s, const char *name, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append_printf (s, " %s=\"%s\"", name, _airy_shortest_double (buf, v));
}

static void
append_map_entry (GString *s, const char *key, const char *value)
{
  g_autofree char *k = g_markup_escape_text (key, -1);
  g_autofree char *v = g_markup_escape_text (value, -1);

  g_string_append_printf (s, "        <M K=\"%s\">%s</M>\n", k, v);
}

static char *
numbers_text (const double *v, guint n)
{
  GString *s = g_string_new (NULL);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  guint i;

  for (i = 0; i < n; i++)
    {
      if (i)
        g_string_append (s, ", ");
      g_string_append (s, _airy_shortest_double (buf, v[i]));
    }
  return g_string_free (s, FALSE);
}

char *
_airy_ome_xml_new (const AiryStack *stack,
                   const char      *name)
{
  GString *s = g_string_sized_new (4096 + 96 * (gsize) stack->depth);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *ename = g_markup_escape_text (name ? name : "Airy stack", -1);
  double dz = stack->dz;
  guint k;

  g_string_append (s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  g_string_append_printf (s, "<OME xmlns=\"" OME_NS "\" "
                          "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                          "xsi:schemaLocation=\"" OME_NS " " OME_NS "/ome.xsd\" "
                          "UUID=\"urn:uuid:%s\" Creator=\"Airy %s\">\n", uuid, PACKAGE_VERSION);
  g_string_append_printf (s, "  <Image ID=\"Image:0\" Name=\"%s\">\n", ename);
  g_string_append_printf (s, "    <Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"float\" "
                          "SignificantBits=\"32\" BigEndian=\"%s\" Interleaved=\"false\" "
                          "SizeX=\"%u\" SizeY=\"%u\" SizeZ=\"%u\" SizeC=\"1\" SizeT=\"1\"",
                          G_BYTE_ORDER == G_BIG_ENDIAN ? "true" : "false",
                          stack->width, stack->height, stack->depth);
  if (stack->dx > 0)
    {
      append_number_attr (s, "PhysicalSizeX", stack->dx);
      g_string_append (s, " PhysicalSizeXUnit=\"\xc2\xb5m\"");
    }
  if (stack->dy > 0)
    {
      append_number_attr (s, "PhysicalSizeY", stack->dy);
      g_string_append (s, " PhysicalSizeYUnit=\"\xc2\xb5m\"");
    }
  /* PositionZ of each plane is exact; PhysicalSizeZ is the mean step */
  if (stack->depth > 1 && fabs (dz) > 0)
    {
      append_number_attr (s, "PhysicalSizeZ", fabs (dz));
      g_string_append (s, " PhysicalSizeZUnit=\"\xc2\xb5m\"");
    }
  g_string_append (s, ">\n");
  g_string_append (s, "      <Channel ID=\"Channel:0:0\" SamplesPerPixel=\"1\"");
  if (stack->n_wavelengths == 1)
    {
      append_number_attr (s, "EmissionWavelength", stack->wavelengths[0] * 1e3);
      g_string_append (s, " EmissionWavelengthUnit=\"nm\"");
    }
  else if (stack->n_wavelengths > 1)
    g_string_append_printf (s, " Name=\"intensity summed over %u wavelengths\"", stack->n_wavelengths);
  g_string_append (s, "/>\n");
  g_string_append_printf (s, "      <TiffData IFD=\"0\" PlaneCount=\"%u\"/>\n", stack->depth);
  for (k = 0; k < stack->depth; k++)
    {
      g_string_append_printf (s, "      <Plane TheZ=\"%u\" TheC=\"0\" TheT=\"0\"", k);
      append_number_attr (s, "PositionZ", airy_stack_get_z (stack, k));
      g_string_append (s, " PositionZUnit=\"\xc2\xb5m\"/>\n");
    }
  g_string_append (s, "    </Pixels>\n");
  g_string_append (s, "    <AnnotationRef ID=\"Annotation:0\"/>\n");
  g_string_append (s, "  </Image>\n");
  g_string_append (s, "  <StructuredAnnotations>\n");
  g_string_append (s, "    <MapAnnotation ID=\"Annotation:0\" Namespace=\"io.github.airyoptics.Airy\">\n");
  g_string_append (s, "      <Value>\n");
  append_map_entry (s, "airy.version", PACKAGE_VERSION);
  if (stack->n_wavelengths > 0)
    {
      g_autofree char *w = numbers_text (stack->wavelengths, stack->n_wavelengths);
      append_map_entry (s, "airy.wavelengths-um", w);
      if (stack->weights)
        {
          g_autofree char *wt = numbers_text (stack->weights, stack->n_wavelengths);
          append_map_entry (s, "airy.weights", wt);
        }
    }
  if (stack->system_json)
    append_map_entry (s, "airy.system", stack->system_json);
  g_string_append (s, "      </Value>\n");
  g_string_append (s, "    </MapAnnotation>\n");
  g_string_append (s, "  </StructuredAnnotations>\n");
  g_string_append (s, "</OME>\n");
  return g_string_free (s, FALSE);
}

/* ---- reading ---- */

static const char *
local_name (const char *element)
{
  const char *colon = strrchr (element, ':');
  return colon ? colon + 1 : element;
}

static const char *
attr (const char **names, const char **values, const char *name)
{
  guint i;

  for (i = 0; names[i]; i++)
    if (g_str_equal (local_name (names[i]), name))
      return values[i];
  return NULL;
}

/* An integer attribute of at least `min` (OME's sizes are PositiveInt,
 * its indices NonNegativeInt). */
static gboolean
attr_uint (const char **names, const char **values, const char *name, guint min, guint *out,
           gboolean *present, GError **error)
{
  const char *v = attr (names, values, name);
  guint64 n;

  if (present)
    *present = v != NULL;
  if (v == NULL)
    return TRUE;
  if (!g_ascii_string_to_unsigned (v, 10, min, G_MAXINT32, &n, NULL))
    {
      g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                   _("%s=\"%s\": must be an integer in [%u, %d]"), name, v, min, G_MAXINT32);
      return FALSE;
    }
  *out = (guint) n;
  return TRUE;
}

/* A length attribute with its unit attribute (default: default_um µm per
 * unit), in µm; `positive`: a size, which must be > 0. */
static gboolean
attr_length (const char **names, const char **values, const char *name, double default_um, gboolean positive,
             double *out, gboolean *present, GError **error)
{
  const char *v = attr (names, values, name);
  g_autofree char *unit_name = g_strconcat (name, "Unit", NULL);
  const char *unit = attr (names, values, unit_name);
  double scale = default_um, x;
  char *end = NULL;

  if (present)
    *present = FALSE;
  if (v == NULL)
    return TRUE;
  x = g_ascii_strtod (v, &end);
  if (positive && end != v && *end == '\0' && !(x > 0 && isfinite (x)))
    {
      g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                   _("invalid %s %s (must be > 0)"), name, v);
      return FALSE;
    }
  if (end == v || *end != '\0' || !isfinite (x))
    {
      g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                   _("%s=\"%s\": not a finite number"), name, v);
      return FALSE;
    }
  if (unit != NULL && !_airy_length_unit_to_um (unit, &scale))
    {
      g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                   _("%s=\"%s\": unsupported length unit (Airy reads pm, Å, nm, µm, mm, cm, m)"),
                   unit_name, unit);
      return FALSE;
    }
  *out = x * scale;
  if (present)
    *present = TRUE;
  return TRUE;
}

static void
ome_start (GMarkupParseContext *context,
           const char          *element,
           const char         **names,
           const char         **values,
           gpointer             user_data,
           GError             **error)
{
  AiryOmeInfo *info = user_data;
  const char *e = local_name (element);

  if (g_str_equal (e, "Image"))
    {
      info->n_images++;
      info->depth_image = 1;
      return;
    }
  /* the first image only */
  if (!info->depth_image || info->n_images != 1)
    return;
  if (g_str_equal (e, "Pixels"))
    {
      const char *order = attr (names, values, "DimensionOrder");
      const char *type = attr (names, values, "Type");
      gboolean present;

      info->in_pixels = 1;
      if (!attr_uint (names, values, "SizeX", 1, &info->size_x, NULL, error)
          || !attr_uint (names, values, "SizeY", 1, &info->size_y, NULL, error)
          || !attr_uint (names, values, "SizeZ", 1, &info->size_z, NULL, error)
          || !attr_uint (names, values, "SizeC", 1, &info->size_c, NULL, error)
          || !attr_uint (names, values, "SizeT", 1, &info->size_t, NULL, error)
          || !attr_length (names, values, "PhysicalSizeX", 1.0, TRUE, &info->physical_x, &present, error)
          || !attr_length (names, values, "PhysicalSizeY", 1.0, TRUE, &info->physical_y, &present, error)
          || !attr_length (names, values, "PhysicalSizeZ", 1.0, TRUE, &info->physical_z, &present, error))
        return;
      if (order != NULL)
        g_strlcpy (info->order, order, sizeof info->order);
      g_free (info->type);
      info->type = g_strdup (type);
    }
  else if (info->in_pixels && g_str_equal (e, "TiffData"))
    {
      AiryOmeTiffData td = { 0 };

      info->in_tiff_data = 1;
      if (!attr_uint (names, values, "IFD", 0, &td.ifd, &td.has_ifd, error)
          || !attr_uint (names, values, "FirstZ", 0, &td.first_z, NULL, error)
          || !attr_uint (names, values, "FirstC", 0, &td.first_c, NULL, error)
          || !attr_uint (names, values, "FirstT", 0, &td.first_t, NULL, error)
          || !attr_uint (names, values, "PlaneCount", 0, &td.plane_count, &td.has_count, error))
        return;
      g_array_append_val (info->tiff_data, td);
    }
  else if (info->in_pixels && g_str_equal (e, "Channel"))
    {
      /* a channel's wavelength names it, nothing depends on it: a bad
       * value is left out, not an error (OME's default unit here is nm) */
      double wl = NAN;
      gboolean present = FALSE;

      if (!attr_length (names, values, "EmissionWavelength", 1e-3, FALSE, &wl, &present, NULL) || !present)
        wl = NAN;
      g_array_append_val (info->channel_wavelengths, wl);
    }
  else if (info->in_tiff_data && g_str_equal (e, "UUID"))
    {
      /* a TiffData naming a file is part of a multi-file set */
      if (attr (names, values, "FileName") != NULL)
        info->other_files = TRUE;
    }
  else if (info->in_pixels && g_str_equal (e, "Plane"))
    {
      AiryOmePlane p = { 0 };

      if (!attr_uint (names, values, "TheZ", 0, &p.the_z, NULL, error)
          || !attr_uint (names, values, "TheC", 0, &p.the_c, NULL, error)
          || !attr_uint (names, values, "TheT", 0, &p.the_t, NULL, error)
          || !attr_length (names, values, "PositionZ", 1.0, FALSE, &p.position_z, &p.has_z, error))
        return;
      g_array_append_val (info->planes, p);
    }
}

static void
ome_end (GMarkupParseContext *context,
         const char          *element,
         gpointer             user_data,
         GError             **error)
{
  AiryOmeInfo *info = user_data;
  const char *e = local_name (element);

  if (g_str_equal (e, "Image"))
    info->depth_image = 0;
  else if (g_str_equal (e, "Pixels"))
    info->in_pixels = 0;
  else if (g_str_equal (e, "TiffData"))
    info->in_tiff_data = 0;
}

void
_airy_ome_info_clear (AiryOmeInfo *info)
{
  g_clear_pointer (&info->tiff_data, g_array_unref);
  g_clear_pointer (&info->planes, g_array_unref);
  g_clear_pointer (&info->channel_wavelengths, g_array_unref);
  g_clear_pointer (&info->type, g_free);
}

gboolean
_airy_ome_parse (const char  *xml,
                 const char  *file,
                 AiryOmeInfo *info,
                 GError     **error)
{
  static const GMarkupParser parser = { ome_start, ome_end, NULL, NULL, NULL };
  g_autoptr(GMarkupParseContext) ctx = NULL;
  g_autoptr(GError) local = NULL;
  guint i;

  memset (info, 0, sizeof *info);
  info->tiff_data = g_array_new (FALSE, FALSE, sizeof (AiryOmeTiffData));
  info->planes = g_array_new (FALSE, FALSE, sizeof (AiryOmePlane));
  info->channel_wavelengths = g_array_new (FALSE, FALSE, sizeof (double));
  g_strlcpy (info->order, "XYZCT", sizeof info->order);
  ctx = g_markup_parse_context_new (&parser, G_MARKUP_PREFIX_ERROR_POSITION, info, NULL);
  if (!g_markup_parse_context_parse (ctx, xml, -1, &local)
      || !g_markup_parse_context_end_parse (ctx, &local))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: OME-XML: %s"), file, local->message);
      return FALSE;
    }
  if (info->n_images == 0 || info->size_x == 0 || info->size_y == 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: OME-XML without an Image with Pixels SizeX and SizeY"), file);
      return FALSE;
    }
  info->size_z = MAX (info->size_z, 1);
  info->size_c = MAX (info->size_c, 1);
  info->size_t = MAX (info->size_t, 1);
  if (strlen (info->order) != 5 || strncmp (info->order, "XY", 2) != 0
      || !strchr (info->order + 2, 'Z') || !strchr (info->order + 2, 'C') || !strchr (info->order + 2, 'T'))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: OME-XML DimensionOrder \"%s\" is not one of XYZCT, XYZTC, XYCZT, XYCTZ, XYTZC, XYTCZ"),
                   file, info->order);
      return FALSE;
    }
  if ((guint64) info->size_z * info->size_c * info->size_t > G_MAXINT32)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                   _("%s: OME-XML claims %u × %u × %u planes"), file, info->size_z, info->size_c,
                   info->size_t);
      return FALSE;
    }
  for (i = 0; i < info->planes->len; i++)
    {
      AiryOmePlane *p = &g_array_index (info->planes, AiryOmePlane, i);
      if (p->the_z >= info->size_z || p->the_c >= info->size_c || p->the_t >= info->size_t)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: OME-XML Plane TheZ=%u TheC=%u TheT=%u is outside SizeZ=%u SizeC=%u SizeT=%u"),
                       file, p->the_z, p->the_c, p->the_t, info->size_z, info->size_c, info->size_t);
          return FALSE;
        }
    }
  return TRUE;
}

/* Index of (z, c, t) in the file's plane order (DimensionOrder, fastest
 * first after XY). */
static guint64
plane_index (const AiryOmeInfo *info, guint z, guint c, guint t)
{
  guint64 index = 0, stride = 1;
  int i;

  for (i = 2; i < 5; i++)
    {
      char d = info->order[i];
      guint v = d == 'Z' ? z : d == 'C' ? c : t;
      guint n = d == 'Z' ? info->size_z : d == 'C' ? info->size_c : info->size_t;

      index += v * stride;
      stride *= n;
    }
  return index;
}

gint64
_airy_ome_ifd_of (const AiryOmeInfo *info,
                  guint              z,
                  guint              c,
                  guint              t)
{
  guint64 want = plane_index (info, z, c, t), total = (guint64) info->size_z * info->size_c * info->size_t;
  guint i;

  /* no TiffData: IFD i holds plane i */
  if (info->tiff_data->len == 0)
    return (gint64) want;
  for (i = 0; i < info->tiff_data->len; i++)
    {
      const AiryOmeTiffData *td = &g_array_index (info->tiff_data, AiryOmeTiffData, i);
      guint64 first = plane_index (info, td->first_z, td->first_c, td->first_t);
      /* PlaneCount defaults to 1 when IFD is given, else to all planes */
      guint64 count = td->has_count ? td->plane_count : td->has_ifd ? 1 : total;

      if (want >= first && want < first + count)
        return (gint64) td->ifd + (gint64) (want - first);
    }
  return -1;
}

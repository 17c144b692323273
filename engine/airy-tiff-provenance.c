/* TIFF stacks, the system they were computed from: what airy-tiff-write.c
 * stores (ImageJ's "info" metadata, OME-XML's airy.system map entry),
 * read back so that a sweep can tell its own outputs from another's. */
#define G_LOG_DOMAIN "airy-tiff"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <string.h>
#include <tiffio.h>

#include "airy-error.h"
#include "airy-image-file-private.h"
#include "airy-tiff-private.h"

static int
quiet_cb (TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap)
{
  return 1;
}

/* ImageJ's metadata (tag 50839, sizes in 50838): a header "IJIJ" with
 * (type, count) pairs, then the entries; "info" is UTF-16 in the file's
 * byte order, Airy's "Written by Airy V\nSystem:\nJSON\n". */
static char *
imagej_system (TIFF *tif)
{
  const guint32 info_type = 0x696e666f;
  guint32 n_bytes = 0, n_counts = 0, type;
  const guint8 *bytes = NULL;
  const guint32 *counts = NULL;
  gboolean swap = TIFFIsByteSwapped (tif);
  g_autofree gunichar2 *u16 = NULL;
  g_autofree char *info = NULL;
  const char *p, *mark = "\nSystem:\n";
  gsize i, n16;

  if (!TIFFGetField (tif, TAG_IJ_META, &n_bytes, &bytes)
      || !TIFFGetField (tif, TAG_IJ_META_COUNTS, &n_counts, &counts)
      || bytes == NULL || counts == NULL || n_counts < 2 || counts[0] < 12 || n_bytes < 12)
    return NULL;
  memcpy (&type, bytes + 4, 4);
  if ((swap ? GUINT32_SWAP_LE_BE (type) : type) != info_type
      || counts[1] % 2 != 0 || (guint64) counts[0] + counts[1] > n_bytes)
    return NULL;
  n16 = counts[1] / 2;
  u16 = g_new (gunichar2, n16 + 1);
  memcpy (u16, bytes + counts[0], counts[1]);
  for (i = 0; swap && i < n16; i++)
    u16[i] = GUINT16_SWAP_LE_BE (u16[i]);
  info = g_utf16_to_utf8 (u16, (glong) n16, NULL, NULL, NULL);
  if (info == NULL || (p = strstr (info, mark)) == NULL || !g_str_has_suffix (p, "\n"))
    return NULL;
  p += strlen (mark);
  return g_strndup (p, strlen (p) - 1);
}

/* The channel names in ImageJ's slice labels that airy-tiff-write.c
 * writes ("excitation, λ = 0.488 µm, z = 0 µm": the text before ", λ ="
 * or ", z ="; "" for none), of the first labels, at most n_channels
 * (channel fastest); NULL if there are none. The current directory must
 * be the first. */
char **
_airy_tiff_imagej_channel_names (TIFF *tif, guint n_channels)
{
  const guint32 magic = 0x494a494a, label_type = 0x6c61626c;
  guint32 n_bytes = 0, n_counts = 0, v, type, count, n_types, t, entry = 1, first_label = 0, n_labels = 0;
  const guint8 *bytes = NULL;
  const guint32 *counts = NULL;
  gboolean swap = TIFFIsByteSwapped (tif);
  g_auto(GStrv) names = NULL;
  guint64 at;
  guint c;

  if (n_channels < 2 || !TIFFGetField (tif, TAG_IJ_META, &n_bytes, &bytes)
      || !TIFFGetField (tif, TAG_IJ_META_COUNTS, &n_counts, &counts)
      || bytes == NULL || counts == NULL || n_counts < 2 || counts[0] < 4 || counts[0] > n_bytes || n_bytes < 4)
    return NULL;
  memcpy (&v, bytes, 4);
  if ((swap ? GUINT32_SWAP_LE_BE (v) : v) != magic || (counts[0] - 4) % 8 != 0)
    return NULL;
  n_types = (counts[0] - 4) / 8;
  for (t = 0; t < n_types && n_labels == 0; t++)
    {
      memcpy (&type, bytes + 4 + 8 * t, 4);
      memcpy (&count, bytes + 8 + 8 * t, 4);
      type = swap ? GUINT32_SWAP_LE_BE (type) : type;
      count = swap ? GUINT32_SWAP_LE_BE (count) : count;
      if (type == label_type)
        {
          first_label = entry;
          n_labels = count;
        }
      else if (count > n_counts || entry > n_counts - count)
        return NULL;
      else
        entry += count;
    }
  n_channels = MIN (n_channels, n_labels);
  if (n_channels == 0 || first_label + n_channels > n_counts)
    return NULL;
  at = counts[0];
  for (t = 1; t < first_label; t++)
    at += counts[t];
  names = g_new0 (char *, n_channels + 1);
  for (c = 0; c < n_channels; c++)
    {
      guint32 len = counts[first_label + c];
      gsize i, n16 = len / 2;
      g_autofree gunichar2 *u16 = NULL;
      g_autofree char *label = NULL;
      char *end;

      if (len % 2 != 0 || at + len > n_bytes)
        return NULL;
      u16 = g_new (gunichar2, n16 + 1);
      memcpy (u16, bytes + at, len);
      for (i = 0; swap && i < n16; i++)
        u16[i] = GUINT16_SWAP_LE_BE (u16[i]);
      at += len;
      label = g_utf16_to_utf8 (u16, (glong) n16, NULL, NULL, NULL);
      if (label == NULL)
        return NULL;
      /* an unnamed channel's label starts with its λ or z */
      if (g_str_has_prefix (label, "\xce\xbb = ") || g_str_has_prefix (label, "z = "))
        end = label;
      else if ((end = strstr (label, ", \xce\xbb = ")) == NULL)
        end = strstr (label, ", z = ");
      names[c] = end ? g_strndup (label, end - label) : g_strdup ("");
    }
  return g_steal_pointer (&names);
}

static void
entry_text (GMarkupParseContext *context, const char *text, gsize len, gpointer user_data, GError **error)
{
  GString *s = user_data;

  g_string_append_len (s, text, (gssize) len);
}

/* OME-XML: <M K="airy.system">JSON, escaped</M> in the description */
static char *
ome_system (TIFF *tif)
{
  const char *desc = NULL, *start, *end, *key = "<M K=\"airy.system\">";
  const GMarkupParser parser = { NULL, NULL, entry_text, NULL, NULL };
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GMarkupParseContext) context = NULL;

  if (!TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc) || desc == NULL
      || (start = strstr (desc, key)) == NULL || (end = strstr (start, "</M>")) == NULL)
    return NULL;
  context = g_markup_parse_context_new (&parser, 0, text, NULL);
  if (!g_markup_parse_context_parse (context, start, end + 4 - start, NULL)
      || !g_markup_parse_context_end_parse (context, NULL))
    return NULL;
  return g_strdup (text->str);
}

/* The system's JSON (airy_system_to_json_full) that a TIFF Airy wrote
 * carries, or NULL: not a TIFF (error set), or one without it (no error);
 * and the file's format (ImageJ, OME, or ImageJ in BigTIFF). */
char *
_airy_tiff_read_provenance (const char      *path,
                            AiryTiffFormat  *format,
                            GError         **error)
{
  TIFFOpenOptions *topts = TIFFOpenOptionsAlloc ();
  TIFF *tif;
  char *json;

  TIFFOpenOptionsSetErrorHandlerExtR (topts, quiet_cb, NULL);
  TIFFOpenOptionsSetWarningHandlerExtR (topts, quiet_cb, NULL);
  TIFFOpenOptionsSetMaxSingleMemAlloc (topts, 256 << 20);
  tif = TIFFOpenExt (path, "rm", topts);
  TIFFOpenOptionsFree (topts);
  if (tif == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a TIFF file Airy can read"), path);
      return NULL;
    }
  json = imagej_system (tif);
  *format = TIFFIsBigTIFF (tif) ? AIRY_TIFF_BIGTIFF : AIRY_TIFF_IMAGEJ;
  if (json == NULL && (json = ome_system (tif)) != NULL)
    *format = AIRY_TIFF_OME;
  TIFFClose (tif);
  return json;
}

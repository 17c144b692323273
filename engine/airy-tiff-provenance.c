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

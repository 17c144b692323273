/* Stack files by format: one table of the formats Airy reads and writes,
 * each defined beside its reader and writer (airy-tiff-write.c,
 * airy-png.c); sniffing by content, naming by suffix. */
#define G_LOG_DOMAIN "airy-image-file"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "airy-image-file.h"
#include "airy-image-file-private.h"
#include "airy-error.h"
#include "airy-atomic-private.h"

const AiryImageFormat *const *
airy_image_formats (void)
{
  static const AiryImageFormat *const formats[] = { &_airy_tiff_format, &_airy_png_format, NULL };

  return formats;
}

const AiryImageFormat *
airy_image_format_sniff (const char *path,
                         GError    **error)
{
  const AiryImageFormat *const *f;
  g_autoptr(GError) local = NULL;
  guint8 head[16] = { 0 };
  FILE *file;
  size_t got;
  int fd;

  fd = _airy_input_open (path, FALSE, &local);
  file = fd >= 0 ? fdopen (fd, "rb") : NULL;
  if (file == NULL)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      if (local != NULL)
        g_propagate_error (error, g_steal_pointer (&local));
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s"), path, g_strerror (e));
      return NULL;
    }
  got = fread (head, 1, sizeof head, file);
  fclose (file);
  for (f = airy_image_formats (); *f; f++)
    if ((*f)->sniff (head, got))
      return *f;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a TIFF or PNG image"), path);
  return NULL;
}

const AiryImageFormat *
airy_image_format_for_suffix (const char *path)
{
  g_autofree char *lower = g_ascii_strdown (path, -1);
  const AiryImageFormat *const *f;
  guint i;

  for (f = airy_image_formats (); *f; f++)
    for (i = 0; (*f)->suffixes[i]; i++)
      if (g_str_has_suffix (lower, (*f)->suffixes[i]))
        return *f;
  return NULL;
}

AiryStack *
airy_image_read (const char *path,
                 GError    **error)
{
  return airy_image_read_full (path, NULL, error);
}

AiryStack *
airy_image_read_full (const char            *path,
                      const AiryReadOptions *options,
                      GError               **error)
{
  const AiryImageFormat *format = airy_image_format_sniff (path, error);

  return format ? format->read (path, options, error) : NULL;
}

gboolean
_airy_image_read_rows (const char        *path,
                       const AiryRowSink *sink,
                       GError           **error)
{
  const AiryImageFormat *format = airy_image_format_sniff (path, error);

  if (format == NULL)
    return FALSE;
  if (format == &_airy_png_format)
    return _airy_png_read_rows (path, sink, error);
  return _airy_tiff_read_rows (path, sink, error);
}

gboolean
airy_image_write (const char      *path,
                  const AiryStack *stack,
                  GPtrArray       *warnings,
                  GError         **error)
{
  const AiryImageFormat *format = airy_image_format_for_suffix (path);

  if (format == NULL || format->write == NULL)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: the name must end in .tif, .tiff, .ome.tif or .png"), path);
      return FALSE;
    }
  return format->write (path, stack, warnings, error);
}

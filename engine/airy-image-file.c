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
#include "airy-zarr-private.h"

const AiryImageFormat *const *
airy_image_formats (void)
{
  static const AiryImageFormat *const formats[] = { &_airy_tiff_format, &_airy_png_format, &_airy_zarr_format,
                                                    NULL };

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

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      /* a folder: a chunked format's location */
      _airy_file_io_note (path);
      for (f = airy_image_formats (); *f; f++)
        if ((*f)->folder && (*f)->sniff_location && (*f)->sniff_location (path))
          return *f;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: a folder, not a stack in a format Airy reads"), path);
      return NULL;
    }
  /* a file: never a FIFO or a device (an open that would block) */
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

AiryStack *
airy_image_read_level (const char            *path,
                       const AiryReadOptions *options,
                       guint                 *level,
                       GError               **error)
{
  static const AiryReadOptions defaults = AIRY_READ_OPTIONS_INIT;
  const AiryImageFormat *format = airy_image_format_sniff (path, error);
  AiryReadOptions ro = options ? *options : defaults;
  GError *local = NULL;
  AiryStack *stack;

  *level = ro.level;
  if (format == NULL)
    return NULL;
  /* coarser levels until one fits, or the store has no more */
  while ((stack = format->read (path, &ro, &local)) == NULL && format->folder
         && g_error_matches (local, AIRY_ERROR, AIRY_ERROR_BUDGET) && ro.level < 64)
    {
      g_autoptr(GError) budget = local;
      AiryReadOptions next = ro;
      g_autoptr(AiryStack) head = NULL;

      local = NULL;
      next.level++;
      head = format->probe ? format->probe (path, &next, NULL) : NULL;
      if (head == NULL)
        {
          local = g_steal_pointer (&budget);
          break;
        }
      ro = next;
    }
  if (stack == NULL)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  *level = ro.level;
  return stack;
}

AiryStack *
airy_image_probe (const char            *path,
                  const AiryReadOptions *options,
                  GError               **error)
{
  const AiryImageFormat *format = airy_image_format_sniff (path, error);
  g_autoptr(AiryStack) whole = NULL;
  AiryStack *head;

  if (format == NULL)
    return NULL;
  if (format->probe)
    return format->probe (path, options, error);
  /* a format without a header of its own (PNG, one plane): read whole */
  whole = format->read (path, options, error);
  if (whole == NULL)
    return NULL;
  head = g_new0 (AiryStack, 1);
  head->depth = whole->depth;
  head->height = whole->height;
  head->width = whole->width;
  head->bits = whole->bits;
  airy_stack_copy_metadata (head, whole);
  return head;
}

gboolean
_airy_image_read_rows (const char        *path,
                       const AiryRowSink *sink,
                       GError           **error)
{
  const AiryImageFormat *format = airy_image_format_sniff (path, error);

  g_autoptr(AiryStack) whole = NULL;
  guint y;

  if (format == NULL)
    return FALSE;
  if (format == &_airy_png_format)
    return _airy_png_read_rows (path, sink, error);
  if (format == &_airy_tiff_format)
    return _airy_tiff_read_rows (path, sink, error);
  /* any other format: read whole, handed over row by row */
  whole = format->read (path, NULL, error);
  if (whole == NULL || !sink->begin (whole, sink->user_data, error))
    return FALSE;
  for (y = 0; y < whole->height; y++)
    sink->row (y, whole->data + (gsize) y * whole->width, sink->user_data);
  return TRUE;
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
                   _("%s: the name must end in .tif, .tiff, .ome.tif, .png or .ome.zarr"), path);
      return FALSE;
    }
  return format->write (path, stack, warnings, error);
}

gboolean
airy_image_write_full (const char                 *path,
                       const AiryStack            *stack,
                       const AiryTiffWriteOptions *options,
                       GError                    **error)
{
  const AiryImageFormat *format = airy_image_format_for_suffix (path);

  if (format != NULL && format->write_full != NULL)
    return format->write_full (path, stack, options, error);
  return airy_image_write (path, stack, options ? options->warnings : NULL, error);
}

const AiryImageFormat *
airy_image_format_lookup (const char *name)
{
  const AiryImageFormat *const *f;

  for (f = airy_image_formats (); *f; f++)
    if (g_ascii_strcasecmp ((*f)->name, name) == 0)
      return *f;
  return NULL;
}

gboolean
airy_image_write_pieces (const char      *location,
                         const AiryStack *stack,
                         guint            n_threads,
                         GPtrArray       *warnings,
                         GError         **error)
{
  const AiryImageFormat *format = airy_image_format_for_suffix (location);

  if (format == NULL || format->n_pieces == NULL)
    return airy_image_write (location, stack, warnings, error);
  return _airy_image_write_pieces_with (format, location, stack, n_threads, error);
}

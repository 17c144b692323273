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

/**
 * airy_image_probe:
 * @path: a file or a chunked format's folder
 * @options: (nullable): the channel, frame and planes to read
 * @error: the reason
 *
 * Returns: (transfer full) (nullable): the stack's header, data NULL (or
 *   its pixels, for a format without a probe)
 */
AiryStack *
airy_image_probe (const char            *path,
                  const AiryReadOptions *options,
                  GError               **error)
{
  const AiryImageFormat *format = airy_image_format_sniff (path, error);

  if (format == NULL)
    return NULL;
  /* a format without a probe is read whole: its pixels come along */
  return format->probe ? format->probe (path, options, error) : format->read (path, options, error);
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
                   _("%s: the name must end in .tif, .tiff, .ome.tif or .png"), path);
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

typedef struct
{
  const AiryImageFormat *format;
  const char            *location;
  const AiryStack       *stack;
  GPtrArray             *warnings;
  GMutex                 lock;
  GError                *error;    /* the first piece that failed */
} Pieces;

static void
write_one_piece (gpointer data, gpointer user_data)
{
  Pieces *p = user_data;
  guint piece = GPOINTER_TO_UINT (data) - 1;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  GError *local = NULL;
  guint i;

  if (!p->format->write_piece (p->location, p->stack, piece, warnings, &local))
    {
      g_mutex_lock (&p->lock);
      if (p->error == NULL)
        p->error = local;
      else
        g_error_free (local);
      g_mutex_unlock (&p->lock);
      return;
    }
  g_mutex_lock (&p->lock);
  for (i = 0; p->warnings && i < warnings->len; i++)
    g_ptr_array_add (p->warnings, g_strdup (g_ptr_array_index (warnings, i)));
  g_mutex_unlock (&p->lock);
}

gboolean
airy_image_write_pieces (const char      *location,
                         const AiryStack *stack,
                         guint            n_threads,
                         GPtrArray       *warnings,
                         GError         **error)
{
  const AiryImageFormat *format = airy_image_format_for_suffix (location);
  Pieces p = { format, location, stack, warnings };
  GThreadPool *pool;
  guint n, k;

  if (format == NULL || format->n_pieces == NULL || format->write_piece == NULL)
    return airy_image_write (location, stack, warnings, error);
  n = format->n_pieces (stack);
  /* piece 0 makes the location (the folder and its metadata) */
  write_one_piece (GUINT_TO_POINTER (1), &p);
  if (p.error == NULL && n > 1)
    {
      pool = g_thread_pool_new (write_one_piece, &p, n_threads ? (int) n_threads : (int) g_get_num_processors (),
                                FALSE, NULL);
      for (k = 1; k < n; k++)
        g_thread_pool_push (pool, GUINT_TO_POINTER (k + 1), NULL);
      g_thread_pool_free (pool, FALSE, TRUE);
    }
  if (p.error)
    {
      g_propagate_error (error, p.error);
      return FALSE;
    }
  return TRUE;
}

/* Shared by the fuzz harnesses: quiet logging that still stops on a
 * critical, a small memory budget, and inputs handed to path-based readers
 * through an in-memory file. */
#pragma once

#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* memfd_create */
#endif

#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "airy.h"
#include "airy-image-file-private.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Criticals and errors are bugs (a failed g_return_if_fail included):
 * abort so the fuzzer reports them. Everything else is dropped. */
static GLogWriterOutput
fuzz_log_writer (GLogLevelFlags log_level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
  if (log_level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR))
    {
      g_log_writer_standard_streams (log_level, fields, n_fields, user_data);
      abort ();
    }
  return G_LOG_WRITER_HANDLED;
}

static inline void
fuzz_init (void)
{
  g_log_set_writer_func (fuzz_log_writer, NULL, NULL);
  /* a reader must refuse what does not fit before allocating it; 64 MiB
   * keeps every accepted input fast under the sanitizers */
  if (g_getenv ("AIRY_MEMORY_BUDGET") == NULL)
    g_setenv ("AIRY_MEMORY_BUDGET", "64M", TRUE);
  airy_init ();
}

/* The input as a file: an anonymous in-memory file, named by its
 * /proc/self/fd path, reused from one input to the next. */
static inline const char *
fuzz_input_path (const uint8_t *data, size_t size)
{
  static int fd = -1;
  static char path[64];

  if (fd < 0)
    {
      fd = memfd_create ("airy-fuzz-input", 0);
      if (fd < 0)
        abort ();
      g_snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
    }
  if (ftruncate (fd, 0) != 0 || (size > 0 && pwrite (fd, data, size, 0) != (ssize_t) size))
    abort ();
  return path;
}

/* The row-by-row reading (mask images) against the whole plane: an image
 * read whole is read row by row too, each row the same as the plane's. */
typedef struct
{
  const AiryStack *whole;
  guint            rows;
  gboolean         same;
} FuzzRows;

static inline gboolean
fuzz_rows_begin (const AiryStack *head, gpointer user_data, GError **error)
{
  FuzzRows *c = user_data;

  c->same &= head->height == c->whole->height && head->width == c->whole->width && head->bits == c->whole->bits;
  return TRUE;
}

static inline void
fuzz_rows_row (guint y, const float *values, gpointer user_data)
{
  FuzzRows *c = user_data;
  gsize w = c->whole->width;

  c->same &= y == c->rows && y < c->whole->height
             && memcmp (values, c->whole->data + (gsize) y * w, w * sizeof (float)) == 0;
  c->rows++;
}

static inline void
fuzz_check_rows (const char *path, const AiryStack *whole,
                 gboolean (*read_rows) (const char *, const AiryRowSink *, GError **))
{
  FuzzRows c = { whole, 0, TRUE };
  AiryRowSink sink = { fuzz_rows_begin, fuzz_rows_row, &c };
  GError *error = NULL;

  if (whole == NULL)
    return;
  if (!read_rows (path, &sink, &error) || !c.same || c.rows != whole->height)
    {
      g_printerr ("%s: the rows read one by one differ from the plane read whole (%s)\n", path,
                  error ? error->message : "");
      abort ();
    }
}

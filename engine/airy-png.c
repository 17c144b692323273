#define G_LOG_DOMAIN "airy-png"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <png.h>
#include <glib/gstdio.h>

#include "airy-stack.h"
#include "airy-image-file-private.h"
#include "airy-error.h"
#include "airy-atomic-private.h"
#include "airy-atomic.h"
#include "airy-run.h"

/* What libpng reports: the error, the first warning of the chunk it was in
 * (libpng often says why in a warning and then only "invalid" in the
 * error), and the file it reads. */
typedef struct
{
  char         message[384];
  char         warning[128];
  png_uint_32  warning_chunk;
  FILE        *file;
} PngIo;

static void
png_error_fn (png_structp png, png_const_charp msg)
{
  PngIo *io = png_get_error_ptr (png);

  if (io->warning[0] && io->warning_chunk == png_get_io_chunk_type (png))
    g_snprintf (io->message, sizeof io->message, "%s; %s", msg, io->warning);
  else
    g_strlcpy (io->message, msg, sizeof io->message);
  png_longjmp (png, 1);
}

static void
png_warning_fn (png_structp png, png_const_charp msg)
{
  PngIo *io = png_get_error_ptr (png);
  png_uint_32 chunk = png_get_io_chunk_type (png);

  if (io->warning[0] == '\0' || io->warning_chunk != chunk)
    {
      g_strlcpy (io->warning, msg, sizeof io->warning);
      io->warning_chunk = chunk;
    }
}

/* Writes rows (8-bit RGB or 16-bit gray, big-endian as PNG wants) atomically. */
static gboolean
write_png_rows (const char    *path,
                const guint8  *pixels,
                guint          height,
                guint          width,
                int            bit_depth,
                int            color_type,
                double         dx,
                const char    *scale_text,
                GError       **error)
{
  AiryAtomicFile *file;
  PngIo err = { "" };
  png_structp png = NULL;
  png_infop info = NULL;
  gsize stride = (gsize) width * (color_type == PNG_COLOR_TYPE_RGB ? 3 : 1) * (bit_depth / 8);
  FILE *volatile f = NULL;
  guint y;
  int fd;

  file = airy_atomic_file_new (path, AIRY_ATOMIC_DEFAULT, error);
  if (file == NULL)
    return FALSE;
  /* a stream of its own: the temporary's descriptor stays open for the commit */
  fd = dup (airy_atomic_file_get_fd (file));
  f = fd >= 0 ? fdopen (fd, "wb") : NULL;
  png = png_create_write_struct (PNG_LIBPNG_VER_STRING, &err, png_error_fn, png_warning_fn);
  info = png ? png_create_info_struct (png) : NULL;
  if (f == NULL || png == NULL || info == NULL)
    {
      g_strlcpy (err.message, "out of memory", sizeof err.message);
      goto fail;
    }
  if (setjmp (png_jmpbuf (png)))
    goto fail;

  png_init_io (png, f);
  png_set_IHDR (png, info, width, height, bit_depth, color_type, PNG_INTERLACE_NONE,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (dx > 0)
    {
      png_uint_32 ppm = (png_uint_32) floor (1e6 / dx + 0.5);   /* pixels per metre */
      png_set_pHYs (png, info, ppm, ppm, PNG_RESOLUTION_METER);
    }
  if (scale_text != NULL)
    {
      png_text text[2];

      memset (text, 0, sizeof text);
      text[0].compression = PNG_TEXT_COMPRESSION_NONE;
      text[0].key = (png_charp) "airy:scale";
      text[0].text = (png_charp) scale_text;
      text[1].compression = PNG_TEXT_COMPRESSION_NONE;
      text[1].key = (png_charp) "Software";
      text[1].text = (png_charp) "Airy " PACKAGE_VERSION;
      png_set_text (png, info, text, 2);
    }
  png_write_info (png, info);
  for (y = 0; y < height; y++)
    png_write_row (png, pixels + y * stride);
  png_write_end (png, info);
  png_destroy_write_struct (&png, &info);
  if (fclose (f) != 0)
    {
      int e = errno;
      airy_atomic_file_abort (file);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: %s"), path, g_strerror (e));
      return FALSE;
    }
  return airy_atomic_file_commit (file, error);

fail:
  if (png != NULL)
    png_destroy_write_struct (&png, info ? &info : NULL);
  if (f != NULL)
    fclose (f);
  else if (fd >= 0)
    close (fd);
  airy_atomic_file_abort (file);
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: %s"), path, err.message);
  return FALSE;
}

gboolean
airy_png_write_rgb (const char   *path,
                    const guint8 *rgb,
                    guint         height,
                    guint         width,
                    double        dx,
                    GError      **error)
{
  return write_png_rows (path, rgb, height, width, 8, PNG_COLOR_TYPE_RGB, dx, NULL, error);
}

gboolean
airy_png_write_colormapped (const char  *path,
                            const float *plane,
                            guint        height,
                            guint        width,
                            double       dx,
                            AiryColormap colormap,
                            float        lo,
                            float        hi,
                            GError     **error)
{
  g_autofree guint8 *rgb = g_malloc ((gsize) height * width * 3);
  guint8 lut[256 * 3];
  gsize i, n = (gsize) height * width;

  airy_colormap_lut (colormap, FALSE, lut);
  for (i = 0; i < n; i++)
    {
      double t = hi > lo ? (plane[i] - lo) / (hi - lo) : 0.0;
      guint k = (guint) floor (CLAMP (t, 0.0, 1.0) * 255.0 + 0.5);

      memcpy (rgb + 3 * i, lut + 3 * k, 3);
    }
  return airy_png_write_rgb (path, rgb, height, width, dx, error);
}

gboolean
airy_png_write_gray16 (const char  *path,
                       const float *plane,
                       guint        height,
                       guint        width,
                       double       dx,
                       GError     **error)
{
  g_autofree guint8 *px = g_malloc ((gsize) height * width * 2);
  char scale_text[G_ASCII_DTOSTR_BUF_SIZE];
  gsize i, n = (gsize) height * width;
  float max = 0.0f;

  for (i = 0; i < n; i++)
    max = MAX (max, plane[i]);
  for (i = 0; i < n; i++)
    {
      guint v = max > 0 ? (guint) floor (CLAMP (plane[i] / max, 0.0f, 1.0f) * 65535.0 + 0.5) : 0;
      px[2 * i] = v >> 8;
      px[2 * i + 1] = v & 0xff;
    }
  /* value = pixel / 65535 · scale */
  g_ascii_dtostr (scale_text, sizeof scale_text, max);
  return write_png_rows (path, px, height, width, 16, PNG_COLOR_TYPE_GRAY, dx, scale_text, error);
}

/* Reading.
 *
 * Every PNG becomes one plane of gray values in the file's own integer
 * scale (bits = 8 or 16):
 * - 1-, 2- and 4-bit gray is scaled to 8 bits (a 1-bit 1 reads 255);
 *   palette images read their palette entries;
 * - colour becomes luminance with the Rec. 709 weights, unless a channel
 *   is asked for (AiryReadOptions.channel ≥ 0, as the viewer does): then a
 *   colour file has three channels, R, G and B, and gives the one asked
 *   for (n_channels = 3); a gray file has one;
 * - (luminance:) the Rec. 709 weights
 *   Y = (6966 R + 23435 G + 2367 B) / 32768 (libpng's 15-bit fixed point
 *   of 0.2126, 0.7152, 0.0722), truncated at 8 bits, rounded at 16; gray
 *   pixels (R = G = B) keep their value exactly;
 * - alpha (an alpha channel or tRNS) is composited over black:
 *   v = round (Y · A / max), so a transparent pixel reads 0 whatever colour
 *   it stores;
 * - colour-space chunks (gAMA, cHRM, sRGB, iCCP) are ignored: the stored
 *   values are used as they are, like every other ancillary chunk except
 *   tEXt (for "airy:scale") and pHYs;
 * - a 16-bit gray file written by Airy (tEXt "airy:scale") comes back in
 *   its original units (bits = 32).
 * Adam7-interlaced files read the same as their non-interlaced twins.
 *
 * Limits: width and height in [1, 65536]; the decoded plane must fit the
 * memory budget, checked after IHDR and before any pixel is decoded; a
 * chunk longer than 1 MiB is skipped unread (a 199-byte file can claim a
 * 1.9 GB tEXt chunk, which libpng 1.6.39 would otherwise allocate). */

#define PNG_MAX_SIDE   65536
#define PNG_MAX_CHUNK  (1u << 20)
#define PNG_MAX_CHUNKS 32

static void
chunk_name (png_uint_32 chunk, char name[5])
{
  int i;

  for (i = 0; i < 4; i++)
    {
      char c = (char) ((chunk >> (24 - 8 * i)) & 0xff);
      name[i] = g_ascii_isalpha (c) ? c : '?';
    }
  name[4] = '\0';
}

static void
png_read_fn (png_structp png, png_bytep data, size_t length)
{
  PngIo *io = png_get_io_ptr (png);
  png_uint_32 where = png_get_io_state (png) & PNG_IO_MASK_LOC;
  png_uint_32 chunk = png_get_io_chunk_type (png);
  char msg[128], name[5];

  if (fread (data, 1, length, io->file) == length)
    return;
  chunk_name (chunk, name);
  if (ferror (io->file))
    g_strlcpy (msg, g_strerror (errno), sizeof msg);
  else if (where == PNG_IO_SIGNATURE)
    g_strlcpy (msg, _("file ends inside the PNG signature"), sizeof msg);
  else if (where == PNG_IO_CHUNK_HDR && chunk == 0)
    g_strlcpy (msg, _("file ends after the PNG signature"), sizeof msg);
  else if (where == PNG_IO_CHUNK_HDR)
    g_snprintf (msg, sizeof msg, _("file ends after the %s chunk"), name);
  else
    g_snprintf (msg, sizeof msg, _("file ends inside the %s chunk"), name);
  png_error (png, msg);
}

typedef struct
{
  PngIo        io;
  png_structp  png;
  png_infop    info;
  const char  *path;
  AiryStack   *stack;
  guint8      *row;
  gboolean     has_scale;
  char         scale[64];   /* tEXt "airy:scale" */
  GError      *error;       /* set for Airy's own refusals (budget, scale) */
  int          channel;     /* colour: −1 luminance, else R, G or B (0…2) */
  const AiryRowSink *sink;  /* rows to it, not into a plane (not interlaced) */
  float       *values;      /* the sink's row */
} PngReader;

/* Every ancillary chunk but pHYs and tRNS comes here (libpng keeps at most
 * PNG_MAX_CHUNK bytes of it, only for this call): tEXt "airy:scale" is
 * kept, the rest dropped. Critical chunks libpng does not know are an
 * error, as the PNG specification wants. */
static int
png_chunk_fn (png_structp png, png_unknown_chunkp chunk)
{
  PngReader *r = png_get_user_chunk_ptr (png);
  static const char key[] = "airy:scale";
  gsize n;

  if (!(chunk->name[0] & 0x20))
    png_chunk_error (png, "unknown critical chunk");
  if (memcmp (chunk->name, "tEXt", 4) == 0 && chunk->size >= sizeof key
      && memcmp (chunk->data, key, sizeof key) == 0)
    {
      r->has_scale = TRUE;
      n = MIN (chunk->size - sizeof key, sizeof r->scale - 1);
      memcpy (r->scale, chunk->data + sizeof key, n);
      r->scale[n] = '\0';
    }
  return 1;
}

static void
restore_scale (float *v, gsize n, double scale)
{
  gsize k;

  if (scale > 0.0)
    for (k = 0; k < n; k++)
      v[k] = (float) (v[k] / 65535.0 * scale);
}

/* Everything libpng does, behind one setjmp: the caller owns what it
 * allocates (in the reader), so a longjmp out of libpng leaks nothing. */
static gboolean
png_read_into (PngReader *r)
{
  png_structp png = r->png;
  png_infop info = r->info;
  static const png_byte keep[] = "pHYs";
  png_uint_32 width, height, ppm_x = 0, ppm_y = 0, y, x;
  int bit_depth, color_type, interlace, passes, pass, channels, unit = 0;
  gboolean alpha;
  volatile double scale = 0.0;   /* volatile: set after setjmp */
  guint64 need, budget;
  gsize rowbytes;
  gboolean streamed;

  if (setjmp (png_jmpbuf (png)))
    return FALSE;

  png_set_read_fn (png, &r->io, png_read_fn);
  png_set_user_limits (png, PNG_MAX_SIDE, PNG_MAX_SIDE);
  png_set_chunk_malloc_max (png, PNG_MAX_CHUNK);
  png_set_chunk_cache_max (png, PNG_MAX_CHUNKS);
  /* all chunks but IHDR, PLTE, tRNS, IDAT, IEND and pHYs to png_chunk_fn */
  png_set_keep_unknown_chunks (png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
  png_set_keep_unknown_chunks (png, PNG_HANDLE_CHUNK_AS_DEFAULT, keep, 1);
  png_set_read_user_chunk_fn (png, r, png_chunk_fn);

  png_read_info (png, info);
  png_get_IHDR (png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);

  /* the plane (or, row by row, a float row) and one row, before anything
   * is decoded; interlaced files are whole only after their last pass */
  streamed = r->sink != NULL && interlace == PNG_INTERLACE_NONE;
  need = (streamed ? (guint64) width : (guint64) width * height) * sizeof (float) + (guint64) width * 8;
  budget = airy_memory_budget ();
  if (need > budget)
    {
      g_autofree char *need_s = airy_format_bytes (need);
      g_autofree char *budget_s = airy_memory_budget_describe (budget, TRUE);

      g_set_error (&r->error, AIRY_ERROR, AIRY_ERROR_BUDGET,
                   _("%s: a %u × %u image needs %s of memory to read, more than the budget of %s"),
                   r->path, width, height, need_s, budget_s);
      return FALSE;
    }

  if (color_type == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
    png_set_expand_gray_1_2_4_to_8 (png);
  if (png_get_valid (png, info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha (png);
  if ((color_type & PNG_COLOR_MASK_COLOR) && r->channel < 0)
    png_set_rgb_to_gray_fixed (png, PNG_ERROR_ACTION_NONE, 21260, 71520);
  if (!(color_type & PNG_COLOR_MASK_COLOR) && r->channel > 0)
    {
      g_set_error (&r->error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: channel must be in [0, 0] (a gray PNG has one), got %d"), r->path, r->channel);
      return FALSE;
    }
  if ((color_type & PNG_COLOR_MASK_COLOR) && r->channel > 2)
    {
      g_set_error (&r->error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: channel must be in [0, 2] (R, G, B), got %d"), r->path, r->channel);
      return FALSE;
    }
  passes = png_set_interlace_handling (png);
  png_read_update_info (png, info);
  bit_depth = png_get_bit_depth (png, info);
  channels = png_get_channels (png, info);
  rowbytes = png_get_rowbytes (png, info);
  /* gray (+ alpha), or with a channel asked for, RGB (+ alpha) */
  alpha = channels == 2 || channels == 4;
  g_assert ((bit_depth == 8 || bit_depth == 16) && channels >= 1 && channels <= 4);
  g_assert (rowbytes == (gsize) width * channels * (bit_depth / 8));

  if (png_get_pHYs (png, info, &ppm_x, &ppm_y, &unit) == 0 || unit != PNG_RESOLUTION_METER)
    ppm_x = ppm_y = 0;
  if (r->has_scale && color_type == PNG_COLOR_TYPE_GRAY && bit_depth == 16)
    {
      char *end = NULL;

      scale = g_ascii_strtod (r->scale, &end);
      if (end == r->scale || *end != '\0' || !(scale > 0.0 && scale <= G_MAXFLOAT))
        {
          g_set_error (&r->error, AIRY_ERROR, AIRY_ERROR_FILE,
                       _("%s: airy:scale must be a positive finite number, got “%s”"),
                       r->path, r->scale);
          return FALSE;
        }
    }

  if (streamed)
    {
      r->stack = g_new0 (AiryStack, 1);
      r->stack->depth = 1;
      r->stack->height = height;
      r->stack->width = width;
      r->values = malloc ((gsize) width * sizeof (float));
    }
  else
    r->stack = _airy_stack_new_uninitialised (1, height, width);
  r->row = malloc (rowbytes);
  if (r->stack == NULL || r->row == NULL || (streamed && r->values == NULL))
    png_error (png, "out of memory");
  r->stack->bits = scale > 0.0 ? 32 : bit_depth;
  if (channels >= 3)
    {
      r->stack->n_channels = 3;
      r->stack->channel = (guint) r->channel;
    }
  if (ppm_x > 0)
    {
      r->stack->dx = 1e6 / ppm_x;
      r->stack->dy = 1e6 / (ppm_y ? ppm_y : ppm_x);
    }
  if (r->sink != NULL && !r->sink->begin (r->stack, r->sink->user_data, &r->error))
    return FALSE;

  /* Interlaced files come in 7 passes over all rows; each pass fills its
   * own pixels of the row it returns, so only those are copied. */
  for (pass = 0; pass < passes; pass++)
    {
      int x0 = passes > 1 ? PNG_PASS_START_COL (pass) : 0;
      int dx = passes > 1 ? PNG_PASS_COL_OFFSET (pass) : 1;

      for (y = 0; y < height; y++)
        {
          float *dst = streamed ? r->values : r->stack->data + (gsize) y * width;
          const guint8 *p = r->row;

          png_read_row (png, r->row, NULL);
          if (passes > 1 && !PNG_ROW_IN_INTERLACE_PASS (y, pass))
            continue;
          for (x = x0; x < width; x += dx)
            {
              /* the sample of the channel asked for, alpha last */
              gsize c = channels >= 3 ? (gsize) r->channel : 0;
              gsize k = (gsize) channels * x;
              guint32 v, a;

              if (bit_depth == 16)
                {
                  v = (guint32) p[2 * (k + c)] << 8 | p[2 * (k + c) + 1];
                  a = alpha ? (guint32) p[2 * (k + channels - 1)] << 8 | p[2 * (k + channels - 1) + 1] : 65535;
                  dst[x] = (float) (((guint64) v * a + 32767) / 65535);
                }
              else
                {
                  v = p[k + c];
                  a = alpha ? p[k + channels - 1] : 255;
                  dst[x] = (float) ((v * a + 127) / 255);
                }
            }
          if (streamed)
            {
              restore_scale (dst, width, scale);
              r->sink->row (y, dst, r->sink->user_data);
            }
        }
    }
  png_read_end (png, NULL);
  if (streamed)
    return TRUE;

  /* 16-bit files written by Airy carry their scale: restore raw units */
  restore_scale (r->stack->data, (gsize) height * width, scale);
  /* an interlaced file to a sink: whole, then row by row */
  if (r->sink != NULL)
    for (y = 0; y < height; y++)
      r->sink->row (y, r->stack->data + (gsize) y * width, r->sink->user_data);
  return TRUE;
}

static AiryStack *
png_read_channel (const char        *path,
                  int                channel,
                  const AiryRowSink *sink,
                  GError           **error)
{
  PngReader r = { .path = path, .channel = channel, .sink = sink };
  g_autoptr(GError) local = NULL;
  png_uint_32 width = 0, height = 0;
  gboolean ok;
  int fd;

  fd = _airy_input_open (path, FALSE, &local);
  r.io.file = fd >= 0 ? fdopen (fd, "rb") : NULL;
  if (r.io.file == NULL)
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

  r.png = png_create_read_struct (PNG_LIBPNG_VER_STRING, &r.io, png_error_fn, png_warning_fn);
  r.info = r.png ? png_create_info_struct (r.png) : NULL;
  if (r.png == NULL || r.info == NULL)
    {
      g_strlcpy (r.io.message, "out of memory", sizeof r.io.message);
      ok = FALSE;
    }
  else
    ok = png_read_into (&r);

  /* png_set_IHDR stores the size before it checks it against the user
   * limits; libpng then says only "Invalid IHDR data" */
  if (!ok && r.info != NULL)
    {
      width = png_get_image_width (r.png, r.info);
      height = png_get_image_height (r.png, r.info);
    }
  if (r.png != NULL)
    png_destroy_read_struct (&r.png, r.info ? &r.info : NULL, NULL);
  fclose (r.io.file);
  free (r.row);
  free (r.values);
  if (ok)
    return r.stack;
  airy_stack_free (r.stack);
  if (r.error != NULL)
    g_propagate_error (error, r.error);
  else if (width > PNG_MAX_SIDE || height > PNG_MAX_SIDE)
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE,
                 _("%s: width and height must be in [1, %u], got %u × %u"),
                 path, PNG_MAX_SIDE, width, height);
  else
    g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a readable PNG (%s)"), path,
                 r.io.message[0] ? r.io.message : "unknown error");
  return NULL;
}

AiryStack *
airy_png_read (const char *path,
               GError    **error)
{
  return png_read_channel (path, -1, NULL, error);
}

gboolean
_airy_png_read_rows (const char        *path,
                     const AiryRowSink *sink,
                     GError           **error)
{
  g_autoptr(AiryStack) head = png_read_channel (path, -1, sink, error);

  return head != NULL;
}

/* ---- the format table's entry ---- */

static gboolean
png_sniff (const guint8 *head, gsize n)
{
  return n >= 8 && memcmp (head, "\x89PNG\r\n\x1a\n", 8) == 0;
}

static AiryStack *
png_read (const char *path, const AiryReadOptions *options, GError **error)
{
  if (options && options->frame > 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: a PNG holds one plane: no time points to choose from"), path);
      return NULL;
    }
  return png_read_channel (path, options ? options->channel : -1, NULL, error);
}

/* raw values of a single plane, 16-bit with their scale */
static gboolean
png_write (const char *path, const AiryStack *stack, GPtrArray *warnings, GError **error)
{
  if (stack->depth != 1)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s: a PNG holds one plane, the stack has %u: save it as .tif"), path, stack->depth);
      return FALSE;
    }
  return airy_png_write_gray16 (path, stack->data, stack->height, stack->width, stack->dx, error);
}

static const char *const png_suffixes[] = { ".png", NULL };

const AiryImageFormat _airy_png_format = {
  .name = "PNG",
  .suffixes = png_suffixes,
  .sniff = png_sniff,
  .read = png_read,
  .write = png_write,
  .mime_type = "image/png",
};

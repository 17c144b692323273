#define G_LOG_DOMAIN "airy-png"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <png.h>
#include <glib/gstdio.h>

#include "airy-stack.h"
#include "airy-error.h"

typedef struct
{
  char message[256];
} PngErrorBuffer;

static void
png_error_fn (png_structp png, png_const_charp msg)
{
  PngErrorBuffer *buf = png_get_error_ptr (png);

  g_strlcpy (buf->message, msg, sizeof buf->message);
  png_longjmp (png, 1);
}

static void
png_warning_fn (png_structp png, png_const_charp msg)
{
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
  g_autofree char *tmp = NULL;
  PngErrorBuffer err = { "" };
  png_structp png = NULL;
  png_infop info = NULL;
  gsize stride = (gsize) width * (color_type == PNG_COLOR_TYPE_RGB ? 3 : 1) * (bit_depth / 8);
  FILE *volatile f = NULL;
  guint y;
  int fd;

  fd = airy_atomic_begin (path, &tmp, error);
  if (fd < 0)
    return FALSE;
  f = fdopen (fd, "wb");
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
      airy_atomic_abort (tmp);
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_WRITE, _("%s: %s"), path, g_strerror (e));
      return FALSE;
    }
  return airy_atomic_commit (tmp, path, error);

fail:
  if (png != NULL)
    png_destroy_write_struct (&png, info ? &info : NULL);
  if (f != NULL)
    fclose (f);
  else
    close (fd);
  airy_atomic_abort (tmp);
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

AiryStack *
airy_png_read (const char *path,
               GError    **error)
{
  PngErrorBuffer err = { "" };
  png_structp png = NULL;
  png_infop info = NULL;
  AiryStack *volatile stack = NULL;
  guint8 *volatile row = NULL;
  FILE *f;
  png_uint_32 width, height, y, x, ppm_x = 0, ppm_y = 0;
  int bit_depth, color_type, unit = 0, n_text = 0, i;
  png_textp text = NULL;
  volatile double scale = 0.0;

  f = g_fopen (path, "rb");
  if (f == NULL)
    {
      int e = errno;
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: %s"), path, g_strerror (e));
      return NULL;
    }
  png = png_create_read_struct (PNG_LIBPNG_VER_STRING, &err, png_error_fn, png_warning_fn);
  info = png ? png_create_info_struct (png) : NULL;
  if (png == NULL || info == NULL)
    {
      g_strlcpy (err.message, "out of memory", sizeof err.message);
      goto fail;
    }
  if (setjmp (png_jmpbuf (png)))
    goto fail;

  png_init_io (png, f);
  png_read_info (png, info);
  png_get_IHDR (png, info, &width, &height, &bit_depth, &color_type, NULL, NULL, NULL);
  if (width > 65536 || height > 65536)
    {
      g_snprintf (err.message, sizeof err.message, "unsupported image size %u × %u", width, height);
      goto fail;
    }
  /* everything to 8- or 16-bit gray */
  if (color_type == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
    png_set_expand_gray_1_2_4_to_8 (png);
  if (color_type & PNG_COLOR_MASK_ALPHA)
    png_set_strip_alpha (png);
  if (color_type & PNG_COLOR_MASK_COLOR || color_type == PNG_COLOR_TYPE_PALETTE)
    png_set_rgb_to_gray_fixed (png, 1, -1, -1);
  png_read_update_info (png, info);
  bit_depth = png_get_bit_depth (png, info);

  if (png_get_pHYs (png, info, &ppm_x, &ppm_y, &unit) && unit == PNG_RESOLUTION_METER && ppm_x > 0)
    ;
  else
    ppm_x = ppm_y = 0;
  if (png_get_text (png, info, &text, &n_text) > 0)
    for (i = 0; i < n_text; i++)
      if (g_strcmp0 (text[i].key, "airy:scale") == 0)
        scale = g_ascii_strtod (text[i].text, NULL);

  stack = airy_stack_new (1, height, width);
  if (stack == NULL)
    {
      g_strlcpy (err.message, "out of memory", sizeof err.message);
      goto fail;
    }
  stack->bits = bit_depth;
  if (ppm_x > 0)
    {
      stack->dx = 1e6 / ppm_x;
      stack->dy = 1e6 / (ppm_y ? ppm_y : ppm_x);
    }
  row = g_malloc (png_get_rowbytes (png, info));
  for (y = 0; y < height; y++)
    {
      float *dst = stack->data + (gsize) y * width;

      png_read_row (png, row, NULL);
      for (x = 0; x < width; x++)
        dst[x] = bit_depth == 16 ? (float) ((row[2 * x] << 8) | row[2 * x + 1]) : (float) row[x];
    }
  png_read_end (png, NULL);
  png_destroy_read_struct (&png, &info, NULL);
  fclose (f);
  g_free (row);
  /* 16-bit files written by Airy carry their scale: restore raw units */
  if (bit_depth == 16 && scale > 0)
    {
      gsize k, n = (gsize) height * width;
      for (k = 0; k < n; k++)
        stack->data[k] = (float) (stack->data[k] / 65535.0 * scale);
      stack->bits = 32;
    }
  return stack;

fail:
  if (png != NULL)
    png_destroy_read_struct (&png, info ? &info : NULL, NULL);
  fclose (f);
  g_free (row);
  airy_stack_free (stack);
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s: not a readable PNG (%s)"), path,
               err.message[0] ? err.message : "unknown error");
  return NULL;
}

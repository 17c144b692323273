/* PNG files: the round trip, and reading every colour type, bit depth
 * and interlace, bad scales, limits and corrupt files (the system's JSON
 * and TIFF: test-files.c). */
#include "config.h"

#include <png.h>
#include <sys/stat.h>
#include <tiffio.h>

#include "airy-test-util.h"
#include "airy-json-private.h"

static char *tmpdir;

#define expect_error test_expect_error

#define HEAD "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]}, "
#define SRC  "{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8}"

static void
test_png_round_trip (void)
{
  g_autofree float *plane = g_new (float, 16 * 12);
  g_autofree char *path = g_build_filename (tmpdir, "raw.png", NULL);
  g_autofree char *rgb_path = g_build_filename (tmpdir, "rgb.png", NULL);
  g_autoptr(AiryStack) r = NULL;
  g_autoptr(AiryStack) rgb = NULL;
  g_autoptr(GError) error = NULL;
  guint8 lut[256 * 3];
  gsize i;

  for (i = 0; i < 16 * 12; i++)
    plane[i] = (float) (i * i) * 0.01f;
  g_assert_true (airy_png_write_gray16 (path, plane, 12, 16, 0.25, &error));
  r = airy_png_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->width, ==, 16);
  g_assert_cmpuint (r->height, ==, 12);
  /* raw values come back through the tEXt scale, to 16-bit precision */
  for (i = 0; i < 16 * 12; i++)
    g_assert_cmpfloat_with_epsilon (r->data[i], plane[i], plane[191] / 65535.0);
  /* pHYs keeps the pixel size (to 1 pixel per metre) */
  g_assert_cmpfloat_with_epsilon (r->dx, 0.25, 1e-6);

  /* colormapped: the ends of the contrast range map to the LUT ends */
  g_assert_true (airy_png_write_colormapped (rgb_path, plane, 12, 16, 0.25, AIRY_COLORMAP_GRAY,
                                             0.0f, plane[191], &error));
  rgb = airy_png_read (rgb_path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (rgb->bits, ==, 8);
  g_assert_cmpfloat (rgb->data[0], ==, 0.0f);
  g_assert_cmpfloat (rgb->data[191], ==, 255.0f);
  airy_colormap_lut (AIRY_COLORMAP_VIRIDIS, FALSE, lut);
  g_assert_cmpuint (lut[0], ==, 0x44);
  g_assert_cmpuint (lut[255 * 3 + 1], ==, 0xe7);
  airy_colormap_lut (AIRY_COLORMAP_VIRIDIS, TRUE, lut);
  g_assert_cmpuint (lut[0], ==, 0xfd);
  g_unlink (path);
  g_unlink (rgb_path);
}

/* ---- PNG reading: every colour type, bit depth and interlace ---- */

typedef struct
{
  int                 bit_depth;
  int                 color_type;
  int                 interlace;
  const png_color    *palette;
  int                 n_palette;
  const png_byte     *trans;        /* palette alpha */
  int                 n_trans;
  const png_color_16 *trans_color;  /* gray/RGB tRNS */
  gboolean            colour_chunks;  /* gAMA 0.45455 and cHRM */
  const char         *text_key;
  const char         *text;
} TestPng;

/* Writes rows packed as PNG stores them (16-bit big-endian, low depths MSB first). */
static void
write_test_png (const char *path, guint width, guint height, const guint8 *data, const TestPng *o)
{
  FILE *f = g_fopen (path, "wb");
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct (png);
  int channels = o->color_type == PNG_COLOR_TYPE_RGB ? 3 : o->color_type == PNG_COLOR_TYPE_RGBA ? 4
                 : o->color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2 : 1;
  gsize stride = ((gsize) o->bit_depth * channels * width + 7) / 8;
  g_autofree png_bytep *rows = g_new (png_bytep, height);
  guint y;

  g_assert_nonnull (f);
  g_assert_cmpint (setjmp (png_jmpbuf (png)), ==, 0);
  png_init_io (png, f);
  png_set_IHDR (png, info, width, height, o->bit_depth, o->color_type, o->interlace,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (o->palette)
    png_set_PLTE (png, info, o->palette, o->n_palette);
  if (o->trans || o->trans_color)
    png_set_tRNS (png, info, o->trans, o->n_trans, o->trans_color);
  if (o->colour_chunks)
    {
      png_set_gAMA_fixed (png, info, 45455);
      png_set_cHRM_fixed (png, info, 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000);
    }
  if (o->text_key)
    {
      png_text text = { .compression = PNG_TEXT_COMPRESSION_NONE,
                        .key = (png_charp) o->text_key, .text = (png_charp) o->text };
      png_set_text (png, info, &text, 1);
    }
  for (y = 0; y < height; y++)
    rows[y] = (png_bytep) data + y * stride;
  png_set_rows (png, info, rows);
  png_write_png (png, info, PNG_TRANSFORM_IDENTITY, NULL);
  png_destroy_write_struct (&png, &info);
  g_assert_cmpint (fclose (f), ==, 0);
}

static AiryStack *
read_png_ok (const char *path, guint width, guint height, int bits)
{
  g_autoptr(GError) error = NULL;
  AiryStack *s = airy_png_read (path, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (s->width, ==, width);
  g_assert_cmpuint (s->height, ==, height);
  g_assert_cmpuint (s->depth, ==, 1);
  g_assert_cmpint (s->bits, ==, bits);
  return s;
}

/* The documented conversions, written out independently of the reader. */
static guint
luma8 (guint r, guint g, guint b)
{
  return (6966 * r + 23435 * g + 2367 * b) >> 15;
}

static void
test_png_gray_low_bits (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "low.png", NULL);
  const guint w = 13, h = 5;
  int bits;

  for (bits = 1; bits <= 4; bits *= 2)
    {
      TestPng o = { .bit_depth = bits, .color_type = PNG_COLOR_TYPE_GRAY };
      guint max = (1u << bits) - 1, x, y;
      gsize stride = ((gsize) bits * w + 7) / 8;
      g_autofree guint8 *data = g_malloc0 (stride * h);
      g_autoptr(AiryStack) s = NULL;

      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          {
            guint v = (x + 3 * y) % (max + 1);
            guint bit = x * bits;

            data[y * stride + bit / 8] |= v << (8 - bits - bit % 8);
          }
      write_test_png (path, w, h, data, &o);
      s = read_png_ok (path, w, h, 8);
      /* scaled to 8 bits: a 1-bit 1 reads 255, a 4-bit 7 reads 7 · 17 */
      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          g_assert_cmpfloat (s->data[y * w + x], ==, (float) ((x + 3 * y) % (max + 1) * (255 / max)));
    }
  g_unlink (path);
}

static void
test_png_palette_trns (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "palette.png", NULL);
  static const png_color palette[] = { { 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 }, { 200, 100, 50 } };
  static const png_byte alpha[] = { 255, 128, 0 };   /* entry 3 opaque */
  /* the luminance of each entry composited over black, by hand */
  static const float expect[] = { 54, (182 * 128 + 127) / 255, 0, 117 };
  const guint w = 7, h = 3;
  int bits;

  g_assert_cmpuint (luma8 (255, 0, 0), ==, 54);
  g_assert_cmpuint (luma8 (0, 255, 0), ==, 182);
  g_assert_cmpuint (luma8 (200, 100, 50), ==, 117);
  for (bits = 2; bits <= 8; bits += 6)
    {
      TestPng o = { .bit_depth = bits, .color_type = PNG_COLOR_TYPE_PALETTE, .palette = palette,
                    .n_palette = 4, .trans = alpha, .n_trans = 3 };
      gsize stride = ((gsize) bits * w + 7) / 8;
      g_autofree guint8 *data = g_malloc0 (stride * h);
      g_autoptr(AiryStack) s = NULL;
      guint x, y;

      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          {
            guint i = (x + y) % 4, bit = x * bits;
            data[y * stride + bit / 8] |= i << (8 - bits - bit % 8);
          }
      write_test_png (path, w, h, data, &o);
      s = read_png_ok (path, w, h, 8);
      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          g_assert_cmpfloat (s->data[y * w + x], ==, expect[(x + y) % 4]);
    }
  g_assert_cmpfloat (expect[1], ==, 91.0f);
  g_unlink (path);
}

static void
test_png_alpha (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "alpha.png", NULL);
  static const guint8 ga8[] = { 200, 255, 200, 128, 200, 1, 200, 0 };
  static const guint8 ga16[] = { 0xc0, 0x00, 0xff, 0xff, 0xc0, 0x00, 0x80, 0x00, 0xff, 0xff, 0x00, 0x01,
                                 0x12, 0x34, 0x00, 0x00 };
  static const guint8 rgba[] = { 255, 0, 0, 255, 200, 100, 50, 128, 10, 20, 30, 255, 255, 255, 255, 0 };
  static const guint8 gray16[] = { 0x12, 0x34, 0xab, 0xcd, 0x00, 0x07 };
  static const png_color_16 transparent = { .gray = 0xabcd };
  g_autoptr(AiryStack) a = NULL, b = NULL, c = NULL, d = NULL;

  write_test_png (path, 4, 1, ga8, &(TestPng) { .bit_depth = 8, .color_type = PNG_COLOR_TYPE_GRAY_ALPHA });
  a = read_png_ok (path, 4, 1, 8);
  g_assert_cmpfloat (a->data[0], ==, 200.0f);
  g_assert_cmpfloat (a->data[1], ==, 100.0f);   /* 200 · 128 / 255 = 100.4 */
  g_assert_cmpfloat (a->data[2], ==, 1.0f);     /* 0.78 rounds up */
  g_assert_cmpfloat (a->data[3], ==, 0.0f);

  write_test_png (path, 4, 1, ga16, &(TestPng) { .bit_depth = 16, .color_type = PNG_COLOR_TYPE_GRAY_ALPHA });
  b = read_png_ok (path, 4, 1, 16);
  g_assert_cmpfloat (b->data[0], ==, 49152.0f);
  g_assert_cmpfloat (b->data[1], ==, 24576.0f);  /* 49152 · 32768 / 65535 = 24576.4 */
  g_assert_cmpfloat (b->data[2], ==, 1.0f);
  g_assert_cmpfloat (b->data[3], ==, 0.0f);

  write_test_png (path, 4, 1, rgba, &(TestPng) { .bit_depth = 8, .color_type = PNG_COLOR_TYPE_RGBA });
  c = read_png_ok (path, 4, 1, 8);
  g_assert_cmpfloat (c->data[0], ==, (float) luma8 (255, 0, 0));
  g_assert_cmpfloat (c->data[1], ==, (float) ((luma8 (200, 100, 50) * 128 + 127) / 255));
  g_assert_cmpfloat (c->data[2], ==, (float) luma8 (10, 20, 30));
  g_assert_cmpfloat (c->data[3], ==, 0.0f);      /* white, but transparent */

  /* a tRNS colour of a 16-bit gray image is transparent, the rest opaque */
  write_test_png (path, 3, 1, gray16, &(TestPng) { .bit_depth = 16, .color_type = PNG_COLOR_TYPE_GRAY,
                                                   .trans_color = &transparent });
  d = read_png_ok (path, 3, 1, 16);
  g_assert_cmpfloat (d->data[0], ==, 0x1234);
  g_assert_cmpfloat (d->data[1], ==, 0.0f);
  g_assert_cmpfloat (d->data[2], ==, 7.0f);
  g_unlink (path);
}

/* gAMA and cHRM change nothing: luminance of the stored values. */
static void
test_png_colour_chunks_ignored (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "rgb.png", NULL);
  static const guint8 rgb[] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 200, 100, 50, 77, 77, 77 };
  gboolean chunks;

  for (chunks = FALSE; chunks <= TRUE; chunks++)
    {
      g_autoptr(AiryStack) s = NULL;

      write_test_png (path, 5, 1, rgb, &(TestPng) { .bit_depth = 8, .color_type = PNG_COLOR_TYPE_RGB,
                                                    .colour_chunks = chunks });
      s = read_png_ok (path, 5, 1, 8);
      g_assert_cmpfloat (s->data[0], ==, 54.0f);
      g_assert_cmpfloat (s->data[1], ==, 182.0f);
      g_assert_cmpfloat (s->data[2], ==, 18.0f);
      g_assert_cmpfloat (s->data[3], ==, 117.0f);
      g_assert_cmpfloat (s->data[4], ==, 77.0f);
    }

  /* 16 bits round: (6966 · 1000 + 23435 · 2000 + 2367 · 3000) / 32768 = 1859.65 */
  {
    static const guint8 rgb16[] = { 0x03, 0xe8, 0x07, 0xd0, 0x0b, 0xb8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    g_autoptr(AiryStack) s = NULL;

    write_test_png (path, 2, 1, rgb16, &(TestPng) { .bit_depth = 16, .color_type = PNG_COLOR_TYPE_RGB });
    s = read_png_ok (path, 2, 1, 16);
    g_assert_cmpfloat (s->data[0], ==, 1860.0f);
    g_assert_cmpfloat (s->data[1], ==, 65535.0f);
  }
  g_unlink (path);
}

/* Adam7 files read pixel for pixel like their non-interlaced twins, at
 * sizes where passes are empty or partial. */
static void
test_png_interlaced (void)
{
  static const guint sizes[][2] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 3, 3 }, { 7, 13 }, { 17, 33 } };
  g_autofree char *plain = g_build_filename (tmpdir, "plain.png", NULL);
  g_autofree char *adam7 = g_build_filename (tmpdir, "adam7.png", NULL);
  guint k;
  int bits;

  for (k = 0; k < G_N_ELEMENTS (sizes); k++)
    for (bits = 8; bits <= 16; bits += 8)
      {
        guint h = sizes[k][0], w = sizes[k][1], x, y;
        gsize stride = (gsize) w * bits / 8;
        g_autofree guint8 *data = g_malloc (stride * h);
        g_autoptr(AiryStack) a = NULL, b = NULL;

        for (y = 0; y < h; y++)
          for (x = 0; x < w; x++)
            {
              guint v = (y * 977 + x * 331 + 5) & (bits == 16 ? 0xffff : 0xff);

              if (bits == 16)
                {
                  data[y * stride + 2 * x] = v >> 8;
                  data[y * stride + 2 * x + 1] = v & 0xff;
                }
              else
                data[y * stride + x] = v;
            }
        write_test_png (plain, w, h, data, &(TestPng) { .bit_depth = bits, .color_type = PNG_COLOR_TYPE_GRAY });
        write_test_png (adam7, w, h, data, &(TestPng) { .bit_depth = bits, .color_type = PNG_COLOR_TYPE_GRAY,
                                                        .interlace = PNG_INTERLACE_ADAM7 });
        a = read_png_ok (plain, w, h, bits);
        b = read_png_ok (adam7, w, h, bits);
        for (y = 0; y < h; y++)
          for (x = 0; x < w; x++)
            {
              float v = (float) ((y * 977 + x * 331 + 5) & (bits == 16 ? 0xffff : 0xff));

              g_assert_cmpfloat (a->data[y * w + x], ==, v);
              g_assert_cmpfloat (b->data[y * w + x], ==, v);
            }
      }

  /* and an interlaced palette image with transparency */
  {
    static const png_color palette[] = { { 0, 0, 0 }, { 255, 255, 255 } };
    static const png_byte alpha[] = { 255, 51 };
    static const guint8 rows[] = { 0x5a, 0xa5, 0xff };   /* 8 × 3, 1 bit per pixel */
    g_autoptr(AiryStack) s = NULL;
    guint x, y;

    write_test_png (adam7, 8, 3, rows, &(TestPng) { .bit_depth = 1, .color_type = PNG_COLOR_TYPE_PALETTE,
                                                    .interlace = PNG_INTERLACE_ADAM7, .palette = palette,
                                                    .n_palette = 2, .trans = alpha, .n_trans = 2 });
    s = read_png_ok (adam7, 8, 3, 8);
    for (y = 0; y < 3; y++)
      for (x = 0; x < 8; x++)
        g_assert_cmpfloat (s->data[y * 8 + x], ==, (rows[y] >> (7 - x)) & 1 ? 51.0f : 0.0f);
  }
  g_unlink (plain);
  g_unlink (adam7);
}

static void
test_png_bad_scale (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "scale.png", NULL);
  static const guint8 px[] = { 0xff, 0xff, 0x80, 0x00 };
  static const char *const bad[] = { "nan", "inf", "-2", "0", "1e39", "2 µm", "" };
  g_autoptr(AiryStack) good = NULL;
  guint i;

  write_test_png (path, 2, 1, px, &(TestPng) { .bit_depth = 16, .color_type = PNG_COLOR_TYPE_GRAY,
                                               .text_key = "airy:scale", .text = "0.5" });
  good = read_png_ok (path, 2, 1, 32);
  g_assert_cmpfloat (good->data[0], ==, 0.5f);
  g_assert_cmpfloat_with_epsilon (good->data[1], 0.25, 1e-5);
  for (i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *expect = NULL;

      write_test_png (path, 2, 1, px, &(TestPng) { .bit_depth = 16, .color_type = PNG_COLOR_TYPE_GRAY,
                                                   .text_key = "airy:scale", .text = bad[i] });
      g_assert_null (airy_png_read (path, &error));
      expect = g_strdup_printf ("%s: airy:scale must be a positive finite number, got “%s”", path, bad[i]);
      g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
      g_assert_cmpstr (error->message, ==, expect);
    }
  g_unlink (path);
}

/* Peak virtual memory of this process, KiB. */
static guint64
vm_peak_kib (void)
{
  g_autofree char *status = NULL;
  const char *p;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  p = strstr (status, "VmPeak:");
  g_assert_nonnull (p);
  return g_ascii_strtoull (p + strlen ("VmPeak:"), NULL, 10);
}

/* A PNG chunk by chunk, with correct CRCs; a chunk whose `claim` is
 * larger than its data is cut off there (the file ends inside it). */
typedef struct
{
  const char   *name;
  const guint8 *data;
  gsize         length;
  png_uint_32   claim;
} TestChunk;

static void
write_png_chunks (const char *path, const TestChunk *chunks, guint n)
{
  FILE *f = g_fopen (path, "wb");
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  guint i;

  g_assert_cmpint (setjmp (png_jmpbuf (png)), ==, 0);
  png_init_io (png, f);
  png_write_sig (png);
  for (i = 0; i < n; i++)
    if (chunks[i].claim > chunks[i].length)
      {
        png_write_chunk_start (png, (png_const_bytep) chunks[i].name, chunks[i].claim);
        png_write_chunk_data (png, chunks[i].data, chunks[i].length);
        break;
      }
    else
      png_write_chunk (png, (png_const_bytep) chunks[i].name, chunks[i].data, chunks[i].length);
  png_destroy_write_struct (&png, NULL);
  g_assert_cmpint (fclose (f), ==, 0);
}

static void
make_ihdr (guint8 ihdr[13], png_uint_32 width, png_uint_32 height, int bits, int color_type)
{
  png_save_uint_32 (ihdr, width);
  png_save_uint_32 (ihdr + 4, height);
  ihdr[8] = bits;
  ihdr[9] = color_type;
  ihdr[10] = ihdr[11] = ihdr[12] = 0;
}

/* An IHDR of any size, then an empty zlib stream for the image, IEND. */
static void
write_png_header_only (const char *path, png_uint_32 width, png_uint_32 height, int bits, int color_type)
{
  static const guint8 empty_zlib[] = { 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 };
  guint8 ihdr[13];

  make_ihdr (ihdr, width, height, bits, color_type);
  write_png_chunks (path, (TestChunk[]) { { "IHDR", ihdr, 13 }, { "IDAT", empty_zlib, sizeof empty_zlib },
                                          { "IEND", NULL, 0 } }, 3);
}

/* IHDR, then a text chunk that claims `claim` bytes, in 199 bytes of file. */
static void
write_png_claiming (const char *path, const char *chunk, png_uint_32 claim)
{
  guint8 ihdr[13], data[199 - 33 - 8];

  make_ihdr (ihdr, 1, 1, 8, PNG_COLOR_TYPE_GRAY);
  memset (data, 'x', sizeof data);
  memcpy (data, "Comment\0\0", 9);
  write_png_chunks (path, (TestChunk[]) { { "IHDR", ihdr, 13 }, { chunk, data, sizeof data, claim } }, 2);
}

static void
expect_png_error (const char *path, int code, const char *reason)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *expect = g_strdup_printf ("%s: %s", path, reason);
  guint64 before = vm_peak_kib ();

  g_assert_null (airy_png_read (path, &error));
  g_assert_error (error, AIRY_ERROR, code);
  g_assert_cmpstr (error->message, ==, expect);
  /* nothing big was even reserved (the offenders ask for 1 GiB and more) */
  g_assert_cmpuint (vm_peak_kib () - before, <, 64 * 1024);
}

static void
test_png_limits (void)
{
  g_autofree char *text = NULL, *ztxt = NULL, *huge = NULL, *wide = NULL, *json = NULL, *mask_error = NULL;
  struct stat st;

  if (!g_test_subprocess ())
    {
      /* a fresh process: VmPeak starts low, and the budget is set there */
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      g_test_trap_assert_stderr ("");
      return;
    }
  g_setenv ("AIRY_MEMORY_BUDGET", "256M", TRUE);
  text = g_build_filename (tmpdir, "text-bomb.png", NULL);
  ztxt = g_build_filename (tmpdir, "ztxt-bomb.png", NULL);
  huge = g_build_filename (tmpdir, "huge.png", NULL);
  wide = g_build_filename (tmpdir, "wide.png", NULL);

  /* 199 bytes claiming a 1.9 GB text chunk: libpng 1.6.39 would allocate it */
  write_png_claiming (text, "tEXt", 0x71000000);
  g_assert_cmpint (g_stat (text, &st), ==, 0);
  g_assert_cmpint (st.st_size, ==, 199);
  expect_png_error (text, AIRY_ERROR_FILE,
                    "not a readable PNG (file ends inside the tEXt chunk; tEXt: chunk data is too large)");
  write_png_claiming (ztxt, "zTXt", 0x71000000);
  expect_png_error (ztxt, AIRY_ERROR_FILE,
                    "not a readable PNG (file ends inside the zTXt chunk; zTXt: chunk data is too large)");

  /* 16384² RGBA 16-bit: a 1 GiB plane from a file of a few bytes, refused
   * from IHDR alone */
  write_png_header_only (huge, 16384, 16384, 16, PNG_COLOR_TYPE_RGBA);
  g_assert_cmpint (g_stat (huge, &st), ==, 0);
  g_assert_cmpint (st.st_size, <, 100);
  expect_png_error (huge, AIRY_ERROR_BUDGET,
                    "a 16384 × 16384 image needs 1.00 GiB of memory to read, more than the budget of "
                    "256.0 MiB (AIRY_MEMORY_BUDGET=256M)");
  write_png_header_only (wide, 70000, 16, 8, PNG_COLOR_TYPE_GRAY);
  expect_png_error (wide, AIRY_ERROR_FILE, "width and height must be in [1, 65536], got 70000 × 16");

  /* a mask is read row by row, never held whole: the 1 GiB plane is no
   * refusal there (its missing data are), 40000 × 30000 pixels are, from
   * IHDR alone */
  json = g_strdup_printf (HEAD "\"elements\": [" SRC ", {\"type\": \"amplitude-mask\", \"file\": \"%s\"}]}", huge);
  mask_error = g_strdup_printf ("elements[1].file: %s: not a readable PNG (Not enough image data)", huge);
  expect_error (json, AIRY_ERROR_FILE, mask_error);
  g_clear_pointer (&json, g_free);
  g_clear_pointer (&mask_error, g_free);
  write_png_header_only (huge, 40000, 30000, 8, PNG_COLOR_TYPE_GRAY);
  json = g_strdup_printf (HEAD "\"elements\": [" SRC ", {\"type\": \"amplitude-mask\", \"file\": \"%s\"}]}", huge);
  mask_error = g_strdup_printf ("elements[1].file: %s: 40000 × 30000 pixels, more than the 1073741824 (32768²) a "
                                "mask image may have", huge);
  expect_error (json, AIRY_ERROR_FILE, mask_error);

  g_unlink (text);
  g_unlink (ztxt);
  g_unlink (huge);
  g_unlink (wide);
}

static void
test_png_corrupt (void)
{
  g_autofree char *good = NULL, *bad = NULL, *contents = NULL;
  g_autofree float *plane = g_new0 (float, 16 * 12);
  g_autoptr(GError) error = NULL;
  gsize len, cut, idat, idat_crc;

  if (!g_test_subprocess ())
    {
      /* libpng says nothing on stderr, and nothing aborts */
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      g_test_trap_assert_stderr ("");
      return;
    }
  good = g_build_filename (tmpdir, "good.png", NULL);
  bad = g_build_filename (tmpdir, "bad.png", NULL);
  plane[7] = 3.0f;
  g_assert_true (airy_png_write_gray16 (good, plane, 12, 16, 0.5, &error));
  g_assert_true (g_file_get_contents (good, &contents, &len, NULL));

  /* every truncation is an error that says where the file ends */
  for (cut = 0; cut < len; cut++)
    {
      g_assert_true (g_file_set_contents (bad, contents, cut, NULL));
      g_assert_null (airy_png_read (bad, &error));
      g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
      g_assert_true (g_str_has_prefix (error->message, bad));
      g_assert_nonnull (strstr (error->message, ": not a readable PNG (file ends "));
      g_clear_error (&error);
    }
#define EXPECT_CUT(n, reason) G_STMT_START {                                   \
    g_assert_true (g_file_set_contents (bad, contents, (n), NULL));            \
    expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (" reason ")"); \
  } G_STMT_END
  EXPECT_CUT (5, "file ends inside the PNG signature");
  EXPECT_CUT (8, "file ends after the PNG signature");
  EXPECT_CUT (20, "file ends inside the IHDR chunk");
  EXPECT_CUT (33, "file ends after the IHDR chunk");
  EXPECT_CUT (len - 12, "file ends after the IDAT chunk");
#undef EXPECT_CUT

  /* a damaged critical chunk fails its CRC */
  contents[17] ^= 0x01;
  g_assert_true (g_file_set_contents (bad, contents, len, NULL));
  expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (IHDR: CRC error)");
  contents[17] ^= 0x01;
  for (idat = 8; idat + 4 < len && memcmp (contents + idat, "IDAT", 4) != 0; idat++)
    ;
  g_assert_cmpuint (idat + 4, <, len);
  idat_crc = idat + 4 + png_get_uint_32 ((png_const_bytep) contents + idat - 4);
  contents[idat_crc] ^= 0x40;
  g_assert_true (g_file_set_contents (bad, contents, len, NULL));
  expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (IDAT: CRC error)");
  contents[idat_crc] ^= 0x40;
  /* damaged image data is found before the CRC */
  contents[idat + 6] ^= 0x40;
  g_assert_true (g_file_set_contents (bad, contents, len, NULL));
  g_assert_null (airy_png_read (bad, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_true (g_str_has_prefix (error->message, bad));
  g_clear_error (&error);
  contents[idat + 6] ^= 0x40;

  /* not a PNG signature */
  contents[1] = 'J';
  g_assert_true (g_file_set_contents (bad, contents, len, NULL));
  expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (Not a PNG file)");
  contents[1] = 'P';
  contents[4] = '\n';
  g_assert_true (g_file_set_contents (bad, contents, len, NULL));
  expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (PNG file corrupted by ASCII conversion)");
  contents[4] = '\r';

  /* an invalid IHDR says why; an unknown critical chunk is refused */
  {
    static const guint8 empty_zlib[] = { 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 };
    guint8 ihdr[13];

    write_png_header_only (bad, 4, 4, 3, PNG_COLOR_TYPE_GRAY);
    expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (Invalid IHDR data; Invalid bit depth in IHDR)");
    write_png_header_only (bad, 4, 0, 8, PNG_COLOR_TYPE_GRAY);
    expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (Invalid IHDR data; Image height is zero in IHDR)");
    make_ihdr (ihdr, 4, 4, 8, PNG_COLOR_TYPE_GRAY);
    write_png_chunks (bad, (TestChunk[]) { { "IHDR", ihdr, 13 }, { "AbCD", ihdr, 4 },
                                           { "IDAT", empty_zlib, sizeof empty_zlib }, { "IEND", NULL, 0 } }, 4);
    expect_png_error (bad, AIRY_ERROR_FILE, "not a readable PNG (AbCD: unknown critical chunk)");
  }

  /* the intact file still reads */
  g_assert_true (g_file_set_contents (bad, contents, len, NULL));
  {
    g_autoptr(AiryStack) s = airy_png_read (bad, &error);

    g_assert_no_error (error);
    g_assert_cmpfloat (s->data[7], ==, 3.0f);
  }
  g_unlink (good);
  g_unlink (bad);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-files-XXXXXX", NULL);

  g_test_add_func ("/files/png/round-trip", test_png_round_trip);
  g_test_add_func ("/files/png/gray-1-2-4-bit", test_png_gray_low_bits);
  g_test_add_func ("/files/png/palette-trns", test_png_palette_trns);
  g_test_add_func ("/files/png/alpha", test_png_alpha);
  g_test_add_func ("/files/png/colour-chunks-ignored", test_png_colour_chunks_ignored);
  g_test_add_func ("/files/png/interlaced", test_png_interlaced);
  g_test_add_func ("/files/png/bad-scale", test_png_bad_scale);
  g_test_add_func ("/files/png/limits", test_png_limits);
  g_test_add_func ("/files/png/corrupt", test_png_corrupt);

  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}

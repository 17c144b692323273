/* System JSON, TIFF and PNG: round trips and bad input. */
#include "config.h"

#include <png.h>
#include <sys/stat.h>
#include <tiffio.h>

#include "airy-test-util.h"
#include "airy-json-private.h"

#define AIRY_BIG (16u << 20)

static char *tmpdir;

#define expect_error test_expect_error

#define HEAD "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]}, "
#define SRC  "{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8}"

static void
test_bad_input (void)
{
  expect_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"n\": 1.33, \"na\": 1.7}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[0].na: must be in [0.001, n=1.33], got 1.7");
  expect_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": 0}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[0].na: must be in [0.001, 4], got 0");
  expect_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": -0.2}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[0].na: must be in [0.001, 4], got -0.2");
  expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0}, \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [" SRC "]}",
                AIRY_ERROR_INVALID_VALUE, "grid.spacing: must be in [0.0001, 10000] µm, got 0");
  expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [0, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [" SRC "]}",
                AIRY_ERROR_INVALID_VALUE, "grid.shape[0]: must be in [1, 65536], got 0");
  expect_error (HEAD "\"z\": {\"start\": 0, \"stop\": 1, \"count\": 0}, \"elements\": [" SRC "]}",
                AIRY_ERROR_INVALID_VALUE, "z.count: must be in [1, 1000000], got 0");
  expect_error (HEAD "\"elements\": [" SRC ", {\"type\": \"warp-drive\"}]}",
                AIRY_ERROR_UNKNOWN_TYPE,
                "elements[1].type: unknown element type \"warp-drive\" (see `airy-sim info --elements`)");
  expect_error (HEAD "\"elements\": [" SRC ", {\"type\": \"ff-lens\", \"focal\": 3}]}",
                AIRY_ERROR_UNKNOWN_KEY,
                "elements[1].focal: unknown key for \"ff-lens\" (known: type, enabled, f, n, na, inverse)");
  expect_error (HEAD "\"elements\": [" SRC "], \"colour\": 1}",
                AIRY_ERROR_UNKNOWN_KEY,
                "colour: unknown key (known: $schema, airy, name, description, grid, spectrum, z, elements, microscope, sensor, sample)");
  expect_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": \"high\"}]}",
                AIRY_ERROR_WRONG_TYPE, "elements[0].na: expected a number, got a string");
  expect_error (HEAD "\"elements\": {\"type\": \"ff-lens\"}}",
                AIRY_ERROR_WRONG_TYPE, "elements: expected an array, got an object");
  expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [64.5, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [" SRC "]}",
                AIRY_ERROR_WRONG_TYPE, "grid.shape[0]: expected an integer, got a number");
  expect_error (HEAD "\"elements\": [{\"type\": \"phase-mask\"}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[0]: the first element must be a source, got \"phase-mask\"");
  expect_error (HEAD "\"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"clouds\"}]}",
                AIRY_ERROR_INVALID_VALUE,
                "elements[1].source: must be one of constant, image, zernike, named, got \"clouds\"");
  expect_error (HEAD "\"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4, 5], \"zernike-coefficients\": [0.1]}]}",
                AIRY_ERROR_INVALID_VALUE,
                "elements[1].zernike-coefficients: must have as many entries as zernike-indices (2), got 1");
  expect_error ("{\"grid\": {\"shape\": [8, 8], \"spacing\": 1}}",
                AIRY_ERROR_INVALID_VALUE, "airy: missing (an Airy system file starts with \"airy\": 1)");
  expect_error ("[1, 2]", AIRY_ERROR_WRONG_TYPE, "(top level): expected an object, got an array");
  expect_error (HEAD "\"elements\": [" SRC ", {\"type\": \"amplitude-mask\", \"file\": \"/nonexistent/mask.png\"}]}",
                AIRY_ERROR_FILE, "elements[1].file: /nonexistent/mask.png: No such file or directory");
}

static void
test_broken_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_data ("{\n  \"airy\": 1,\n  \"grid\": {\"shape\": [8, 8],, }\n}",
                                                            -1, NULL, "broken.json", &error);

  g_assert_null (system);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_PARSE);
  /* file:line:column */
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, "broken.json:3:"));
}

static void
test_budget (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [65536, 65536], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"start\": 0, \"stop\": 1, \"count\": 1000}, \"elements\": [" SRC "]}");

  g_setenv ("AIRY_MEMORY_BUDGET", "8G", TRUE);
  g_assert_false (airy_system_validate (system, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_BUDGET);
  g_assert_true (g_str_has_prefix (error->message, "grid.shape: a run of 1000 planes on a 65536 × 65536 grid needs "));
  g_assert_nonnull (strstr (error->message, "more than the budget of 8.00 GiB"));
  g_unsetenv ("AIRY_MEMORY_BUDGET");
}

static void
test_json_round_trip (void)
{
  g_auto(GStrv) presets = airy_presets_list ();
  guint i;

  g_assert_cmpuint (g_strv_length (presets), >=, 4);
  g_assert_true (g_strv_contains ((const char *const *) presets, "seed-widefield"));
  g_assert_true (g_strv_contains ((const char *const *) presets, "seed-imaging"));
  g_assert_true (g_strv_contains ((const char *const *) presets, "widefield"));
  g_assert_true (g_strv_contains ((const char *const *) presets, "imaging"));
  for (i = 0; presets[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirySystem) a = airy_system_new_from_preset (presets[i], &error);
      g_autoptr(AirySystem) b = NULL;
      g_autofree char *path = g_build_filename (tmpdir, "system.json", NULL);
      g_autofree char *ja = NULL, *jb = NULL;

      g_assert_no_error (error);
      g_assert_true (airy_system_save (a, path, &error));
      b = airy_system_new_from_file (path, &error);
      g_assert_no_error (error);
      ja = airy_system_to_json (a);
      jb = airy_system_to_json (b);
      g_assert_cmpstr (ja, ==, jb);
      g_assert_cmpuint (airy_system_hash (a), ==, airy_system_hash (b));
      g_unlink (path);
    }
}

static void
test_seed_presets (void)
{
  g_autoptr(AirySystem) wf = airy_system_new_from_preset ("seed-widefield", NULL);
  g_autoptr(AirySystem) im = airy_system_new_from_preset ("seed-imaging", NULL);
  guint h, w, nz;
  const double *z = airy_system_get_z (wf, &nz);
  AiryElement *src = g_ptr_array_index (airy_system_get_elements (wf), 0);

  airy_system_get_shape (wf, &h, &w);
  g_assert_cmpuint (h, ==, 1536);
  g_assert_cmpuint (w, ==, 1536);
  g_assert_cmpuint (nz, ==, 128);
  g_assert_cmpfloat (z[0], ==, -4.0);
  g_assert_cmpfloat (z[127], ==, 4.0);
  g_assert_cmpfloat (airy_system_get_spacing (wf), ==, 0.3);
  g_assert_cmpfloat (airy_system_get_spectrum (wf)->wavelengths[0], ==, 0.532);
  g_assert_cmpfloat (airy_element_get_double (src, "na"), ==, 0.8);
  g_assert_cmpfloat (airy_element_get_double (src, "n"), ==, 1.33);
  g_assert_cmpfloat (airy_element_get_double (src, "f"), ==, 100.0);
  g_assert_cmpfloat (airy_element_get_double (g_ptr_array_index (airy_system_get_elements (wf), 1), "value"), ==, 1.0);
  g_assert_true (airy_system_is_microscope (im));
  g_assert_cmpfloat (airy_system_get_f_tube (im), ==, 100.0);
  g_assert_cmpint (airy_system_get_sample (im)->kind, ==, AIRY_SAMPLE_CONSTANT);
  g_assert_cmpfloat (airy_system_get_sample (im)->value, ==, 1.0);
}

static void
test_tiff_round_trip (void)
{
  g_autoptr(AiryStack) s = airy_stack_new (3, 5, 7);
  g_autoptr(AiryStack) r = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "stack.tif", NULL);
  gsize i, n = 3 * 5 * 7;

  for (i = 0; i < n; i++)
    s->data[i] = (float) (i * 0.25 - 3.0);
  s->dx = 0.0868;
  s->dy = 0.0868;
  s->dz = 0.063;
  g_assert_true (airy_tiff_write (path, s, &error));
  g_assert_no_error (error);
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
  r = airy_tiff_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (r->depth, ==, 3);
  g_assert_cmpuint (r->height, ==, 5);
  g_assert_cmpuint (r->width, ==, 7);
  g_assert_cmpint (r->bits, ==, 32);
  g_assert_cmpmem (r->data, n * 4, s->data, n * 4);
  g_assert_cmpfloat_with_epsilon (r->dx, 0.0868, 1e-6);
  g_assert_cmpfloat_with_epsilon (r->dy, 0.0868, 1e-6);
  g_assert_cmpfloat_with_epsilon (r->dz, 0.063, 1e-9);
  g_unlink (path);
}

static void
write_int_tiff (const char *path, int bits, int spp, guint pages, const char *desc)
{
  TIFF *tif = TIFFOpen (path, "w");
  guint p, y, x, c;

  g_assert_nonnull (tif);
  for (p = 0; p < pages; p++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 6);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 4);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, bits);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, spp);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, spp == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 4);
      TIFFSetField (tif, TIFFTAG_XRESOLUTION, 1.0f / 0.25f);
      TIFFSetField (tif, TIFFTAG_YRESOLUTION, 1.0f / 0.25f);
      TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
      if (p == 0 && desc)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, desc);
      for (y = 0; y < 4; y++)
        {
          guint16 row16[6 * 3];
          guint8 row8[6 * 3];

          for (x = 0; x < 6; x++)
            for (c = 0; c < (guint) spp; c++)
              {
                guint v = 1000 * p + 10 * y + x;
                row16[x * spp + c] = (guint16) (bits == 16 ? v * 50 : 0);
                row8[x * spp + c] = (guint8) (v % 256);
              }
          g_assert_cmpint (TIFFWriteScanline (tif, bits == 16 ? (void *) row16 : (void *) row8, y, 0), ==, 1);
        }
      TIFFWriteDirectory (tif);
    }
  TIFFClose (tif);
}

static void
test_tiff_integer (void)
{
  g_autofree char *p16 = g_build_filename (tmpdir, "u16.tif", NULL);
  g_autofree char *p8 = g_build_filename (tmpdir, "u8.tif", NULL);
  g_autofree char *rgb = g_build_filename (tmpdir, "rgb.tif", NULL);
  g_autoptr(AiryStack) s16 = NULL;
  g_autoptr(AiryStack) s8 = NULL;
  g_autoptr(GError) error = NULL;

  /* 16-bit, two pages, ImageJ z spacing and pixel size */
  write_int_tiff (p16, 16, 1, 2, "ImageJ=1.53t\nimages=2\nslices=2\nunit=micron\nspacing=0.75\n");
  s16 = airy_tiff_read (p16, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (s16->depth, ==, 2);
  g_assert_cmpuint (s16->width, ==, 6);
  g_assert_cmpint (s16->bits, ==, 16);
  g_assert_cmpfloat (airy_stack_plane (s16, 1)[2 * 6 + 3], ==, (1000 + 23) * 50.0f);
  g_assert_cmpfloat_with_epsilon (s16->dx, 0.25, 1e-6);
  g_assert_cmpfloat_with_epsilon (s16->dz, 0.75, 1e-12);
  /* 8-bit, no metadata */
  write_int_tiff (p8, 8, 1, 1, NULL);
  s8 = airy_tiff_read (p8, &error);
  g_assert_no_error (error);
  g_assert_cmpint (s8->bits, ==, 8);
  g_assert_cmpfloat (s8->data[3 * 6 + 5], ==, 35.0f);
  g_assert_cmpfloat (s8->dz, ==, 0.0);
  /* RGB is not a stack Airy reads: the message says what it reads */
  write_int_tiff (rgb, 8, 3, 1, NULL);
  g_assert_null (airy_tiff_read (rgb, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_true (g_str_has_prefix (error->message, rgb));
  g_assert_nonnull (strstr (error->message, "unsupported TIFF (8-bit, sample format 1, 3 samples per pixel)"));
  g_unlink (p16);
  g_unlink (p8);
  g_unlink (rgb);
}

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

static void
test_bad_files (void)
{
  g_autofree char *junk = g_build_filename (tmpdir, "junk.tif", NULL);
  g_autofree char *trunc = g_build_filename (tmpdir, "trunc.tif", NULL);
  g_autofree char *good = g_build_filename (tmpdir, "good.tif", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(AiryStack) s = airy_stack_new (2, 64, 64);
  g_autoptr(GError) error = NULL;
  gsize len;

  g_assert_null (airy_tiff_read ("/nonexistent/stack.tif", &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_cmpstr (error->message, ==, "/nonexistent/stack.tif: no such file");
  g_clear_error (&error);

  g_assert_true (g_file_set_contents (junk, "II*\0garbage that is not a TIFF directory", 40, NULL));
  g_assert_null (airy_tiff_read (junk, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_true (g_str_has_prefix (error->message, junk));
  g_clear_error (&error);

  /* a TIFF cut in half */
  g_assert_true (airy_tiff_write (good, s, &error));
  g_assert_true (g_file_get_contents (good, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (trunc, contents, len / 2, NULL));
  g_assert_null (airy_tiff_read (trunc, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_clear_error (&error);

  g_assert_null (airy_image_read (junk, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_clear_error (&error);
  g_assert_null (airy_png_read (junk, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_true (g_str_has_suffix (error->message, ")"));
  g_clear_error (&error);

  g_unlink (junk);
  g_unlink (trunc);
  g_unlink (good);
}

static void
test_atomic_write (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "keep.tif", NULL);
  g_autofree char *bad = g_build_filename (tmpdir, "no-such-dir", "out.tif", NULL);
  g_autoptr(AiryStack) s = airy_stack_new (1, 4, 4);
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL, *after = NULL;

  /* a failing write leaves nothing behind and no temporary */
  g_assert_false (airy_tiff_write (bad, s, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_WRITE);
  g_assert_true (g_str_has_prefix (error->message, bad));
  g_clear_error (&error);
  g_assert_false (airy_png_write_gray16 (bad, s->data, 4, 4, 1.0, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_WRITE);
  g_clear_error (&error);

  /* an existing file is replaced whole or not at all */
  g_assert_true (g_file_set_contents (path, "previous contents", -1, NULL));
  g_assert_true (g_file_get_contents (path, &before, NULL, NULL));
  g_assert_true (airy_tiff_write (path, s, &error));
  g_assert_true (g_file_get_contents (path, &after, NULL, NULL));
  g_assert_cmpstr (before, !=, after);
  g_assert_false (dir_has_prefix (tmpdir, ".airy-"));
  g_unlink (path);
}

/* ---- limits, numbers, faithful saving, schema (issue 12) ---- */

static void
expect_load_error (const char *json, int code, const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_data (json, -1, NULL, "sys.json", &error);

  g_assert_null (system);
  g_assert_error (error, AIRY_ERROR, code);
  g_assert_cmpstr (error->message, ==, message);
}

static char *
nested (guint depth, const char *open, const char *close)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; i < depth; i++)
    g_string_append (s, open);
  for (i = 0; i < depth; i++)
    g_string_append (s, close);
  return g_string_free (s, FALSE);
}

static void
test_depth_limit (void)
{
  g_autofree char *deep = nested (100000, "[", "]");
  g_autofree char *objects = nested (65, "{\"a\": ", "}");
  g_autofree char *at_limit = nested (64, "[", "]");
  g_autofree char *in_string = NULL, *in_comment = NULL;
  g_autofree char *brackets = nested (1000, "[", "");
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;

  /* json-glib would overflow its stack on this one */
  expect_load_error (deep, AIRY_ERROR_PARSE,
                     "sys.json: arrays and objects nested 100000 levels deep, more than the limit of 64");
  expect_load_error (objects, AIRY_ERROR_PARSE,
                     "sys.json: arrays and objects nested 65 levels deep, more than the limit of 64");
  /* 64 levels pass the scan: what is wrong is then the content */
  expect_load_error (at_limit, AIRY_ERROR_WRONG_TYPE, "(top level): expected an object, got an array");
  /* brackets in strings (escaped quotes too) and in comments do not count */
  in_string = g_strdup_printf (HEAD "\"name\": \"\\\"%s\", \"elements\": [" SRC "]}", brackets);
  system = airy_system_new_from_data (in_string, -1, NULL, "sys.json", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (strlen (airy_system_get_name (system)), ==, 1001);
  g_clear_object (&system);
  in_comment = g_strdup_printf (HEAD "/* %s */ \"elements\": [" SRC "]}", brackets);
  system = airy_system_new_from_data (in_comment, -1, NULL, "sys.json", &error);
  g_assert_no_error (error);
}

static gpointer
feed_fifo (gpointer path)
{
  /* g_file_set_contents would rename a file over the FIFO */
  FILE *f = g_fopen (path, "w");

  g_assert_nonnull (f);
  fputs (HEAD "\"elements\": [" SRC "]}", f);
  fclose (f);
  return NULL;
}

static void
test_size_limit (void)
{
  g_autofree char *big = g_build_filename (tmpdir, "big.json", NULL);
  g_autofree char *fifo = g_build_filename (tmpdir, "fifo.json", NULL);
  g_autofree char *expected = NULL;
  g_autofree char *contents = g_malloc (AIRY_BIG + 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = NULL;
  GThread *writer;

  /* a valid system padded with spaces past 16 MiB */
  memset (contents, ' ', AIRY_BIG + 1);
  memcpy (contents, HEAD "\"elements\": [" SRC "]}", strlen (HEAD "\"elements\": [" SRC "]}"));
  g_assert_true (g_file_set_contents (big, contents, AIRY_BIG + 1, NULL));
  g_assert_null (airy_system_new_from_file (big, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  expected = g_strdup_printf ("%s: larger than 16 MiB, the limit for a system file", big);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  /* exactly 16 MiB is still read */
  g_assert_true (g_file_set_contents (big, contents, AIRY_BIG, NULL));
  system = airy_system_new_from_file (big, &error);
  g_assert_no_error (error);
  g_clear_object (&system);
  g_unlink (big);

  /* a device that never ends */
  g_assert_null (airy_system_new_from_file ("/dev/zero", &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  g_assert_cmpstr (error->message, ==, "/dev/zero: larger than 16 MiB, the limit for a system file");
  g_clear_error (&error);

  /* a FIFO has no size and is read to its end */
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  writer = g_thread_new ("fifo", feed_fifo, fifo);
  system = airy_system_new_from_file (fifo, &error);
  g_thread_join (writer);
  g_assert_no_error (error);
  g_assert_nonnull (system);
  g_unlink (fifo);
}

#define MICROSCOPE(sample) \
  "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]}," \
  " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100}, \"sensor\": {\"reduce\": \"sum\"}," \
  " \"sample\": " sample "}"

static void
test_non_finite (void)
{
  g_autoptr(JsonObject) o = json_object_new ();
  g_autoptr(AiryElement) lens = airy_element_new ("ff-lens", NULL);
  g_autoptr(GError) error = NULL;

  /* json-glib reads 1e999 as inf (and prints it as "inf.0"): the text scan
   * names the path and the number as written */
  expect_load_error (MICROSCOPE ("{\"beads\": {\"count\": 3, \"intensity\": 1e999}}"), AIRY_ERROR_INVALID_VALUE,
                     "sample.beads.intensity: must be a finite number, got 1e999");
  expect_load_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": -1E400}]}",
                     AIRY_ERROR_INVALID_VALUE, "elements[0].na: must be a finite number, got -1E400");
  expect_load_error ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 2e308}, \"spectrum\": {\"wavelengths\": [0.5]}}",
                     AIRY_ERROR_INVALID_VALUE, "grid.spacing: must be a finite number, got 2e308");
  expect_load_error ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5, 1e999]}}",
                     AIRY_ERROR_INVALID_VALUE, "spectrum.wavelengths[1]: must be a finite number, got 1e999");
  expect_load_error (HEAD "\"z\": {\"values\": [0, 1, 1e999]}, \"elements\": [" SRC "]}",
                     AIRY_ERROR_INVALID_VALUE, "z.values[2]: must be a finite number, got 1e999");
  expect_load_error (HEAD "\"z\": {\"start\": -1e999, \"count\": 1}, \"elements\": [" SRC "]}",
                     AIRY_ERROR_INVALID_VALUE, "z.start: must be a finite number, got -1e999");
  expect_load_error ("{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]},"
                     " \"microscope\": {\"f\": 100, \"na\": 0.8, \"f-tube\": 1e999}, \"sample\": {\"constant\": 1}}",
                     AIRY_ERROR_INVALID_VALUE, "microscope.f-tube: must be a finite number, got 1e999");
  expect_load_error ("{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.5]},"
                     " \"microscope\": {\"f\": 100, \"na\": 0.8, \"f-tube\": 100}, \"sensor\": {\"gain\": 1e999}, \"sample\": {\"constant\": 1}}",
                     AIRY_ERROR_INVALID_VALUE, "sensor.gain: must be a finite number, got 1e999");
  expect_load_error (MICROSCOPE ("{\"constant\": 1e999}"), AIRY_ERROR_INVALID_VALUE,
                     "sample.constant: must be a finite number, got 1e999");
  expect_load_error (HEAD "\"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"zernike\","
                     " \"zernike-indices\": [4], \"zernike-coefficients\": [1e999]}]}",
                     AIRY_ERROR_INVALID_VALUE, "elements[1].zernike-coefficients[0]: must be a finite number, got 1e999");
  /* json-glib wraps integers beyond 64 bits around (to -1 here) */
  expect_load_error (MICROSCOPE ("{\"beads\": {\"count\": 99999999999999999999}}"), AIRY_ERROR_INVALID_VALUE,
                     "sample.beads.count: must be an integer in [-9223372036854775808, 9223372036854775807], "
                     "got 99999999999999999999");
  /* broken JSON is still reported as such, before any number */
  expect_load_error ("{\"airy\": 1e999,, }", AIRY_ERROR_PARSE, "sys.json:1:15: Parse error: unexpected character `,', expected string constant");

  /* JSON built in memory: the value json-glib holds */
  json_object_set_double_member (o, "f", INFINITY);
  g_assert_false (airy_element_set_from_json (lens, o, "elements[2]", NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "elements[2].f: must be a finite number, got inf");
}

/* Every double parameter of every element type: a finite range, so that
 * GObject refuses ±inf and nan; arrays of doubles refuse them too. Run in a
 * subprocess: the refusals are warnings, fatal in a test. */
static void
setters_finite_subprocess (void)
{
  g_autofree GType *types = NULL;
  guint n, i, k, doubles = 0, arrays = 0;

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  types = airy_element_list_types (&n);
  for (i = 0; i < n; i++)
    {
      g_autoptr(AiryElement) e = g_object_new (types[i], NULL);
      g_autofree GParamSpec **pspecs = NULL;
      guint np;

      pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &np);
      for (k = 0; k < np; k++)
        {
          const double bad[] = { INFINITY, -INFINITY, NAN };
          guint b;

          if (G_IS_PARAM_SPEC_VARIANT (pspecs[k]))
            {
              const double v[] = { 1.0, INFINITY };

              g_object_set (e, pspecs[k]->name, g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, v, 2, sizeof (double)), NULL);
              g_assert_false (airy_element_is_set (e, pspecs[k]->name));
              arrays++;
            }
          if (!G_IS_PARAM_SPEC_DOUBLE (pspecs[k]))
            continue;
          g_assert_true (isfinite (G_PARAM_SPEC_DOUBLE (pspecs[k])->minimum));
          g_assert_true (isfinite (G_PARAM_SPEC_DOUBLE (pspecs[k])->maximum));
          for (b = 0; b < G_N_ELEMENTS (bad); b++)
            {
              g_object_set (e, pspecs[k]->name, bad[b], NULL);
              g_assert_false (airy_element_is_set (e, pspecs[k]->name));
              g_assert_true (isfinite (airy_element_get_double (e, pspecs[k]->name)));
            }
          doubles++;
        }
    }
  g_print ("%u doubles, %u arrays refused non-finite values\n", doubles, arrays);
}

static void
test_setters_finite (void)
{
  g_autoptr(AirySystem) system = airy_system_new ();

  if (g_test_subprocess ())
    {
      setters_finite_subprocess ();
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stdout ("* doubles, * arrays refused non-finite values*");
  g_test_trap_assert_stderr ("*phase-mask.zernike-coefficients: refusing an array with a non-finite number*");
  g_test_trap_assert_stderr ("*value \"inf\" of type 'gdouble' is invalid or out of range for property 'na'*");
  g_test_trap_assert_stderr ("*value \"nan\" of type 'gdouble' is invalid or out of range for property 'na'*");

  g_test_expect_message ("airy-system", G_LOG_LEVEL_CRITICAL, "*isfinite (spacing)*");
  airy_system_set_spacing (system, INFINITY);
  g_test_assert_expected_messages ();
  g_test_expect_message ("airy-system", G_LOG_LEVEL_CRITICAL, "*isfinite (start) && isfinite (stop)*");
  airy_system_set_z_range (system, 0.0, NAN, 3);
  g_test_assert_expected_messages ();
  g_test_expect_message ("airy-system", G_LOG_LEVEL_CRITICAL, "*isfinite (values[i])*");
  airy_system_set_z_values (system, (double[]) { 0.0, -INFINITY }, 2);
  g_test_assert_expected_messages ();
  g_test_expect_message ("airy-system", G_LOG_LEVEL_CRITICAL, "*isfinite (f_tube)*");
  airy_system_set_f_tube (system, INFINITY);
  g_test_assert_expected_messages ();
  g_test_expect_message ("airy-system", G_LOG_LEVEL_CRITICAL, "*isfinite (sample->value)*");
  airy_system_set_sample (system, &(AirySample) { AIRY_SAMPLE_BEADS, 0.0, NULL, 1, 0, INFINITY });
  g_test_assert_expected_messages ();
  g_assert_cmpfloat (airy_system_get_spacing (system), ==, 0.5);
  g_assert_cmpfloat (airy_system_get_f_tube (system), ==, 200.0);
  g_assert_cmpfloat (airy_system_get_sample (system)->intensity, ==, 0.0);
}

/* ---- the system's fields declared once (issue 15) ---- */

/* A field beyond its declared range: the loader's message is the
 * declaration's, and so is the schema's bound. */
static void
expect_declared (const char *json, const char *property, const char *got)
{
  g_autoptr(AirySystem) any = airy_system_new ();
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (any), property);
  g_autofree char *range = airy_param_spec_range_string (pspec);
  g_autofree char *message = g_strdup_printf ("%s: must be in %s, got %s", airy_param_spec_get_path (pspec), range, got);

  expect_load_error (json, AIRY_ERROR_INVALID_VALUE, message);
}

static JsonObject *
member (JsonObject *o, const char *path)
{
  g_auto(GStrv) keys = g_strsplit (path, "/", -1);
  guint i;

  for (i = 0; keys[i]; i++)
    {
      char *end = NULL;
      guint64 index = g_ascii_strtoull (keys[i], &end, 10);

      if (end != keys[i] && *end == '\0')
        continue;   /* an index applies to the array member before it */
      if (keys[i + 1] && g_ascii_isdigit (keys[i + 1][0]))
        {
          index = g_ascii_strtoull (keys[i + 1], NULL, 10);
          o = json_array_get_object_element (json_object_get_array_member (o, keys[i]), (guint) index);
        }
      else
        o = json_object_get_object_member (o, keys[i]);
      g_assert_nonnull (o);
    }
  return o;
}

static void
test_declared_limits (void)
{
  g_autoptr(AirySystem) any = airy_system_new ();
  GObjectClass *klass = G_OBJECT_GET_CLASS (any);
  g_autofree char *text = airy_system_schema (FALSE);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root, *props, *o;

  expect_declared ("{\"airy\": 1, \"grid\": {\"shape\": [64, 70000], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]}, "
                   "\"elements\": [" SRC "]}", "width", "70000");
  expect_declared (HEAD "\"z\": {\"start\": 0, \"stop\": 1, \"count\": 1000001}, \"elements\": [" SRC "]}",
                   "z-count", "1000001");
  expect_declared (HEAD "\"z\": {\"start\": -2e6, \"count\": 1}, \"elements\": [" SRC "]}", "z-start", "-2e+06");
  expect_declared (MICROSCOPE ("{\"constant\": -1}"), "sample-constant", "-1");
  expect_declared (MICROSCOPE ("{\"beads\": {\"count\": 3, \"intensity\": 0}}"), "beads-intensity", "0");
  expect_declared (MICROSCOPE ("{\"beads\": {\"count\": 20000000}}"), "beads-count", "20000000");
  expect_load_error ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5, 101]}}",
                     AIRY_ERROR_INVALID_VALUE, "spectrum.wavelengths[1]: must be in [0.01, 100] µm, got 101");
  expect_load_error (HEAD "\"z\": {\"values\": [0, 3e6]}, \"elements\": [" SRC "]}",
                     AIRY_ERROR_INVALID_VALUE, "z.values[1]: must be in [-1e+06, 1e+06] µm, got 3e+06");
  /* the Zernike limit is the parameter's, at load and in the check */
  expect_load_error (HEAD "\"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"zernike\","
                     " \"zernike-indices\": [4, 231], \"zernike-coefficients\": [0, 0]}]}",
                     AIRY_ERROR_INVALID_VALUE, "elements[1].zernike-indices[1]: must be an integer in [0, 230], got 231");
  expect_error (HEAD "\"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indexing\": \"noll\","
                " \"zernike-indices\": [0], \"zernike-coefficients\": [0]}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[1].zernike-indices[0]: must be an integer in [1, 230], got 0");

  /* the schema states the same bounds */
  g_assert_true (json_parser_load_from_data (parser, text, -1, NULL));
  root = json_node_get_object (json_parser_get_root (parser));
  props = json_object_get_object_member (root, "properties");
  o = member (props, "grid/properties/shape/prefixItems/0");
  g_assert_cmpint (json_object_get_int_member (o, "maximum"), ==,
                   G_PARAM_SPEC_INT (g_object_class_find_property (klass, "height"))->maximum);
  o = member (props, "z/oneOf/0/properties/count");
  g_assert_cmpint (json_object_get_int_member (o, "maximum"), ==,
                   G_PARAM_SPEC_INT (g_object_class_find_property (klass, "z-count"))->maximum);
  o = member (props, "microscope/properties/f-tube");
  g_assert_cmpfloat (json_object_get_double_member (o, "maximum"), ==,
                     G_PARAM_SPEC_DOUBLE (g_object_class_find_property (klass, "f-tube"))->maximum);
  g_assert_cmpfloat (json_object_get_double_member (o, "minimum"), ==,
                     G_PARAM_SPEC_DOUBLE (g_object_class_find_property (klass, "f-tube"))->minimum);
  g_assert_false (json_object_has_member (o, "exclusiveMinimum"));
  /* a sample file's options, which the loader reads, are in */
  o = member (props, "sample/oneOf/1/properties");
  g_assert_true (json_object_has_member (o, "channel"));
  g_assert_true (json_object_has_member (o, "frame"));
  g_assert_true (json_object_has_member (o, "resample"));
}

static void
test_z_conflict (void)
{
  expect_load_error (HEAD "\"z\": {\"values\": [0, 1], \"count\": 2}, \"elements\": [" SRC "]}",
                     AIRY_ERROR_INVALID_VALUE, "z: give either values or start, stop and count, got values and count");
  expect_load_error (HEAD "\"z\": {\"start\": -1, \"values\": [0, 1]}, \"elements\": [" SRC "]}",
                     AIRY_ERROR_INVALID_VALUE, "z: give either values or start, stop and count, got values and start");
  expect_load_error (HEAD "\"z\": {\"values\": [0], \"stop\": 1}, \"elements\": [" SRC "]}",
                     AIRY_ERROR_INVALID_VALUE, "z: give either values or start, stop and count, got values and stop");
}

/* Doubles that read back exactly, through the text Airy writes */
static void
test_number_text (void)
{
  static const double values[] = { 0.532, 0.1 + 0.2, 1.0 / 3.0, 100.0, -0.0, 1e21, 1e-300, 5e-324,
                                   1.7976931348623157e308, 123456789012345680.0, -2.5e-7, 0.7 };
  static const char *const texts[] = { "0.532", "0.30000000000000004", "0.3333333333333333", "100.0", "-0.0",
                                       "1e+21", "1e-300", "4.94065645841247e-324", "1.7976931348623157e+308",
                                       "1.2345678901234568e+17", "-2.5e-07", "0.7" };
  g_autoptr(AirySystem) system = test_system (HEAD "\"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"zernike\","
                                              " \"zernike-indices\": [4], \"zernike-coefficients\": [0]}]}");
  g_autoptr(AirySystem) back = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autoptr(JsonArray) array = json_array_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_ARRAY);
  g_autoptr(JsonParser) parser = NULL;
  g_autofree char *text = NULL;
  AiryElement *mask = g_ptr_array_index (airy_system_get_elements (system), 1);
  double in_range[G_N_ELEMENTS (values)];
  const double *got;
  gsize n, i, k = 0;

  for (i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autoptr(GString) s = g_string_new (NULL);

      _airy_json_append_double (s, values[i]);
      g_assert_cmpstr (s->str, ==, texts[i]);
      json_array_add_double_element (array, values[i]);
      /* a parameter's bounds hold the others */
      if (fabs (values[i]) <= 1000.0)
        in_range[k++] = values[i];
    }
  /* every one through the reader */
  json_node_set_array (node, array);
  text = _airy_json_to_string (node, &error);
  g_assert_no_error (error);
  parser = _airy_json_parse (text, strlen (text), "numbers", &error);
  g_assert_no_error (error);
  for (i = 0; i < G_N_ELEMENTS (values); i++)
    {
      double v = json_array_get_double_element (json_node_get_array (json_parser_get_root (parser)), (guint) i);

      g_assert_cmpmem (&v, sizeof v, &values[i], sizeof (double));
    }
  /* and in a system */
  g_object_set (mask, "zernike-coefficients",
                g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, in_range, k, sizeof (double)), NULL);
  g_object_set (g_ptr_array_index (airy_system_get_elements (system), 0), "na", 0.7, NULL);
  json = airy_system_to_json (system);
  /* json-glib alone writes 0.69999999999999996 */
  g_assert_nonnull (strstr (json, "\"wavelengths\" : [\n      0.5\n    ]"));
  g_assert_nonnull (strstr (json, "\"na\" : 0.7\n"));
  g_assert_null (strstr (json, "0.69999999999999996"));
  back = airy_system_new_from_data (json, -1, NULL, "saved", &error);
  g_assert_no_error (error);
  got = airy_element_get_doubles (g_ptr_array_index (airy_system_get_elements (back), 1), "zernike-coefficients", &n);
  g_assert_cmpuint (n, ==, 9);
  g_assert_cmpmem (got, n * sizeof (double), in_range, k * sizeof (double));
  g_assert_true (signbit (got[4]));
}

/* The writer's layout is json-glib's: the same bytes where no double is involved */
static void
test_writer_layout (void)
{
  static const char *const docs[] = {
    "{\"a\": 1, \"b\": [], \"d\": [1, [2, -3], {\"x\": null, \"y\": true}], \"f\": false}",
    "{\"s\": \"q\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u007f é ∑ \\u2028 /\", \"g\": {\"h\": {\"i\": [[]]}}}",
    "[{\"type\": \"x\", \"k\": [\"a\", \"b\"]}]",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (docs); i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      g_autoptr(GError) error = NULL;
      g_autofree char *ours = NULL, *theirs = NULL;

      g_assert_true (json_parser_load_from_data (parser, docs[i], -1, &error));
      json_generator_set_root (gen, json_parser_get_root (parser));
      json_generator_set_pretty (gen, TRUE);
      json_generator_set_indent (gen, 2);
      theirs = json_generator_to_data (gen, NULL);
      ours = _airy_json_to_string (json_parser_get_root (parser), &error);
      g_assert_no_error (error);
      g_assert_cmpstr (ours, ==, theirs);
    }
}

/* JSON has no inf: never written, and the save fails naming the path */
static void
test_no_non_finite_output (void)
{
  g_autoptr(JsonNode) node = json_from_string ("{\"grid\": {\"spacing\": 1.5}}", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  json_object_set_double_member (json_object_get_object_member (json_node_get_object (node), "grid"),
                                 "spacing", -INFINITY);
  text = _airy_json_to_string (node, &error);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "grid.spacing: not a finite number (-inf); it cannot be written as JSON");
  /* still valid JSON */
  g_assert_cmpstr (text, ==, "{\n  \"grid\" : {\n    \"spacing\" : null\n  }\n}");
}

static void
test_description_kept (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) a = test_system ("{\"$schema\": \"https://example.org/airy-system.schema.json\", \"airy\": 1,"
                                          " \"name\": \"n\", \"description\": \"A \\\"quoted\\\" test, 2 µm\","
                                          " \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5},"
                                          " \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [" SRC "]}");
  g_autoptr(AirySystem) b = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "described.json", NULL);
  g_autofree char *text = NULL;

  g_assert_cmpstr (airy_system_get_description (a), ==, "A \"quoted\" test, 2 µm");
  g_assert_true (airy_system_save (a, path, &error));
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "{\n  \"$schema\" : \"https://example.org/airy-system.schema.json\",\n"
                                         "  \"airy\" : 1,\n  \"name\" : \"n\",\n"
                                         "  \"description\" : \"A \\\"quoted\\\" test, 2 µm\",\n"));
  b = airy_system_new_from_file (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (airy_system_get_description (b), ==, "A \"quoted\" test, 2 µm");
  expect_load_error ("{\"airy\": 1, \"$schema\": 3}", AIRY_ERROR_WRONG_TYPE, "$schema: expected a string, got a number");
  g_unlink (path);
}

static void
write_mask (const char *path)
{
  float plane[16 * 16];
  guint i;

  for (i = 0; i < 16 * 16; i++)
    plane[i] = (float) (i % 16) / 15.0f;
  g_assert_true (airy_png_write_gray16 (path, plane, 16, 16, 1.0, NULL));
}

static void
test_save_as (void)
{
  g_autofree char *proj = g_build_filename (tmpdir, "proj", NULL);
  g_autofree char *sub = g_build_filename (proj, "variants", NULL);
  g_autofree char *elsewhere = g_build_filename (tmpdir, "elsewhere", NULL);
  g_autofree char *mask = g_build_filename (proj, "mask.png", NULL);
  g_autofree char *vol = g_build_filename (proj, "vol.tif", NULL);
  g_autofree char *psf_path = g_build_filename (proj, "psf.json", NULL);
  g_autofree char *im_path = g_build_filename (proj, "image.json", NULL);
  g_autofree char *psf_sub = g_build_filename (sub, "psf.json", NULL);
  g_autofree char *im_sub = g_build_filename (sub, "image.json", NULL);
  g_autofree char *im_root = g_build_filename ("/", "tmp", NULL);
  g_autoptr(AiryStack) volume = airy_stack_new (1, 32, 32);
  g_autoptr(GError) error = NULL;
  const char *const sources[] = {
    HEAD "\"elements\": [" SRC ", {\"type\": \"amplitude-mask\", \"file\": \"mask.png\"},"
    " {\"type\": \"phase-mask\", \"source\": \"image\", \"file\": \"./mask.png\"}, {\"type\": \"ff-lens\", \"f\": 100}]}",
    MICROSCOPE ("{\"file\": \"vol.tif\"}"),
  };
  const char *const paths[] = { psf_path, im_path };
  const char *const moved[] = { psf_sub, im_sub };
  guint k;

  g_assert_cmpint (g_mkdir_with_parents (sub, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (elsewhere, 0755), ==, 0);
  write_mask (mask);
  volume->dx = volume->dy = 0.1;
  g_assert_true (airy_tiff_write (vol, volume, &error));
  for (k = 0; k < G_N_ELEMENTS (sources); k++)
    {
      g_autoptr(AirySystem) original = NULL, reloaded = NULL, again = NULL;
      g_autofree char *text = NULL;
      guint64 hash;

      g_assert_true (g_file_set_contents (paths[k], sources[k], -1, NULL));
      original = airy_system_new_from_file (paths[k], &error);
      g_assert_no_error (error);
      g_assert_true (airy_system_validate (original, NULL, &error));
      hash = airy_system_hash (original);

      /* Save As into a subfolder: the names are rewritten, the files the same */
      g_assert_true (airy_system_save (original, moved[k], &error));
      g_assert_true (g_file_get_contents (moved[k], &text, NULL, NULL));
      g_assert_nonnull (strstr (text, k == 0 ? "\"file\" : \"../mask.png\"" : "\"file\" : \"../vol.tif\""));
      g_assert_cmpstr (airy_system_get_base_dir (original), ==, sub);
      g_assert_cmpuint (airy_system_hash (original), ==, hash);
      reloaded = airy_system_new_from_file (moved[k], &error);
      g_assert_no_error (error);
      g_assert_true (airy_system_validate (reloaded, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (airy_system_hash (reloaded), ==, hash);
      if (k == 0)
        {
          AiryElement *phase = g_ptr_array_index (airy_system_get_elements (original), 2);
          g_assert_cmpstr (airy_element_get_string (phase, "file"), ==, "../mask.png");
        }
      else
        g_assert_cmpstr (airy_system_get_sample (original)->file, ==, "../vol.tif");

      /* and back: the names are as they were, minus "./" */
      g_assert_true (airy_system_save (reloaded, paths[k], &error));
      g_clear_pointer (&text, g_free);
      g_assert_true (g_file_get_contents (paths[k], &text, NULL, NULL));
      g_assert_nonnull (strstr (text, k == 0 ? "\"file\" : \"mask.png\"" : "\"file\" : \"vol.tif\""));
      g_assert_null (strstr (text, "../"));
      again = airy_system_new_from_file (paths[k], &error);
      g_assert_no_error (error);
      g_assert_cmpuint (airy_system_hash (again), ==, hash);
      g_unlink (paths[k]);
      g_unlink (moved[k]);
    }

  /* an absolute name stays as it is */
  {
    g_autofree char *json = g_strdup_printf (HEAD "\"elements\": [" SRC ", {\"type\": \"amplitude-mask\", \"file\": \"%s\"}]}", mask);
    g_autoptr(AirySystem) s = test_system (json);
    g_autofree char *out = g_build_filename (elsewhere, "abs.json", NULL);
    g_autofree char *text = NULL;
    g_autofree char *expected = g_strdup_printf ("\"file\" : \"%s\"", mask);

    g_assert_true (airy_system_save (s, out, &error));
    g_assert_true (g_file_get_contents (out, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, expected));
    g_unlink (out);
  }
  g_unlink (mask);
  g_unlink (vol);
  g_rmdir (sub);
  g_rmdir (proj);
  g_rmdir (elsewhere);
}

/* The schema: valid draft 2020-12, accepts every preset and saved systems,
 * rejects what the loader rejects, and the installed copy is current. */
static void
test_schema (void)
{
  g_autofree char *dir = g_build_filename (tmpdir, "schema", NULL);
  g_autofree char *schema_path = g_build_filename (dir, "airy-system.schema.json", NULL);
  g_autofree char *installed = g_test_build_filename (G_TEST_DIST, "..", "resources", "airy-system.schema.json", NULL);
  g_autofree char *installed_text = NULL;
  g_autofree char *schema = airy_system_schema (TRUE);
  g_autofree char *builtin = airy_system_schema (FALSE);
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "check-schema.py", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_auto(GStrv) presets = airy_presets_list ();
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  const char *const invalid[][2] = {
    { "na-string", HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": \"high\"}]}" },
    { "unknown-type", HEAD "\"elements\": [" SRC ", {\"type\": \"warp-drive\"}]}" },
    { "unknown-key", HEAD "\"elements\": [" SRC ", {\"type\": \"ff-lens\", \"focal\": 3}]}" },
    { "na-range", HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": 0}]}" },
    { "z-both", HEAD "\"z\": {\"values\": [0], \"count\": 1}, \"elements\": [" SRC "]}" },
    { "enum", HEAD "\"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"clouds\"}]}" },
    { "sample-alone", HEAD "\"elements\": [" SRC "], \"sample\": {\"constant\": 1}}" },
    { "no-source", HEAD "\"elements\": []}" },
    { "version", "{\"airy\": 2, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [" SRC "]}" },
  };
  const char *const saved[] = {
    HEAD "\"description\": \"d\", \"z\": {\"values\": [-1, 0.5]}, \"elements\": [" SRC ", {\"type\": \"phase-mask\", \"source\": \"zernike\","
    " \"zernike-indices\": [4, 5], \"zernike-coefficients\": [0.1, -0.2]}, {\"type\": \"propagate\", \"z\": 3,"
    " \"method\": \"angular-spectrum\"}, {\"type\": \"ff-lens\", \"f\": 100}, {\"type\": \"sensor\", \"noise\": \"poisson\"}]}",
    MICROSCOPE ("{\"beads\": {\"count\": 5, \"seed\": 3, \"intensity\": 2.5}}"),
    HEAD "\"$schema\": \"airy-system.schema.json\", \"z\": {\"start\": 1, \"count\": 1}, \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"ring-mask\"}]}",
  };
  guint i;
  int status;

  g_assert_true (g_file_get_contents (installed, &installed_text, NULL, &error));
  g_assert_no_error (error);
  /* stale: regenerate with build/app/airy-sim schema --builtin > resources/airy-system.schema.json */
  {
    g_autofree char *current = g_strconcat (builtin, "\n", NULL);
    g_assert_cmpstr (installed_text, ==, current);
  }
  g_assert_nonnull (strstr (schema, "\"const\" : \"ring-mask\""));
  g_assert_null (strstr (builtin, "ring-mask"));

  if (!g_spawn_command_line_sync ("/usr/bin/python3 -c \"import jsonschema\"", NULL, NULL, &status, NULL)
      || !g_spawn_check_wait_status (status, NULL))
    {
      g_test_skip ("python3-jsonschema is not installed (apt install python3-jsonschema)");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (schema_path, schema, -1, NULL));
  g_ptr_array_add (argv, g_strdup ("/usr/bin/python3"));
  g_ptr_array_add (argv, g_strdup (script));
  g_ptr_array_add (argv, g_strdup (schema_path));
  for (i = 0; presets[i]; i++)
    {
      g_autofree char *json = airy_preset_get_json (presets[i], NULL);
      g_autofree char *name = g_strdup_printf ("preset-%s.json", presets[i]);
      g_autofree char *resaved = g_strdup_printf ("resaved-%s.json", presets[i]);
      g_autoptr(AirySystem) s = airy_system_new_from_preset (presets[i], NULL);

      g_ptr_array_add (argv, g_build_filename (dir, name, NULL));
      g_assert_true (g_file_set_contents (g_ptr_array_index (argv, argv->len - 1), json, -1, NULL));
      g_string_append_printf (expected, "%s: valid\n", name);
      g_ptr_array_add (argv, g_build_filename (dir, resaved, NULL));
      g_assert_true (airy_system_save (s, g_ptr_array_index (argv, argv->len - 1), NULL));
      g_string_append_printf (expected, "%s: valid\n", resaved);
    }
  for (i = 0; i < G_N_ELEMENTS (saved); i++)
    {
      g_autoptr(AirySystem) s = test_system (saved[i]);
      g_autofree char *name = g_strdup_printf ("saved-%u.json", i);

      g_ptr_array_add (argv, g_build_filename (dir, name, NULL));
      g_assert_true (airy_system_save (s, g_ptr_array_index (argv, argv->len - 1), &error));
      g_assert_no_error (error);
      g_string_append_printf (expected, "%s: valid\n", name);
    }
  for (i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autoptr(AirySystem) s = airy_system_new_from_data (invalid[i][1], -1, NULL, "x", NULL);
      g_autofree char *name = g_strdup_printf ("invalid-%s.json", invalid[i][0]);

      /* the loader refuses each of them too */
      g_assert_null (s);
      g_ptr_array_add (argv, g_build_filename (dir, name, NULL));
      g_assert_true (g_file_set_contents (g_ptr_array_index (argv, argv->len - 1), invalid[i][1], -1, NULL));
      g_string_append_printf (expected, "%s: invalid\n", name);
    }
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &status, &error));
  g_test_message ("%s", err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpstr (out, ==, expected->str);
  for (i = 3; i + 1 < argv->len; i++)
    g_unlink (g_ptr_array_index (argv, i));
  g_unlink (schema_path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-files-XXXXXX", NULL);

  g_test_add_func ("/files/json/bad-input", test_bad_input);
  g_test_add_func ("/files/json/broken", test_broken_json);
  g_test_add_func ("/files/json/memory-budget", test_budget);
  g_test_add_func ("/files/json/round-trip", test_json_round_trip);
  g_test_add_func ("/files/json/seed-presets", test_seed_presets);
  g_test_add_func ("/files/json/depth-limit", test_depth_limit);
  g_test_add_func ("/files/json/size-limit", test_size_limit);
  g_test_add_func ("/files/json/non-finite", test_non_finite);
  g_test_add_func ("/files/json/setters-finite", test_setters_finite);
  g_test_add_func ("/files/json/z-values-or-range", test_z_conflict);
  g_test_add_func ("/files/json/number-text", test_number_text);
  g_test_add_func ("/files/json/writer-layout", test_writer_layout);
  g_test_add_func ("/files/json/no-non-finite-output", test_no_non_finite_output);
  g_test_add_func ("/files/json/description-kept", test_description_kept);
  g_test_add_func ("/files/json/save-as", test_save_as);
  g_test_add_func ("/files/json/schema", test_schema);
  g_test_add_func ("/files/json/declared-limits", test_declared_limits);
  g_test_add_func ("/files/tiff/round-trip", test_tiff_round_trip);
  g_test_add_func ("/files/tiff/integer-and-unsupported", test_tiff_integer);
  g_test_add_func ("/files/png/round-trip", test_png_round_trip);
  g_test_add_func ("/files/png/gray-1-2-4-bit", test_png_gray_low_bits);
  g_test_add_func ("/files/png/palette-trns", test_png_palette_trns);
  g_test_add_func ("/files/png/alpha", test_png_alpha);
  g_test_add_func ("/files/png/colour-chunks-ignored", test_png_colour_chunks_ignored);
  g_test_add_func ("/files/png/interlaced", test_png_interlaced);
  g_test_add_func ("/files/png/bad-scale", test_png_bad_scale);
  g_test_add_func ("/files/png/limits", test_png_limits);
  g_test_add_func ("/files/png/corrupt", test_png_corrupt);
  g_test_add_func ("/files/bad-files", test_bad_files);
  g_test_add_func ("/files/atomic-write", test_atomic_write);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}

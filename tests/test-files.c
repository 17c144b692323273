/* System JSON, TIFF and PNG: round trips and bad input. */
#include "config.h"

#include <tiffio.h>

#include "airy-test-util.h"

static char *tmpdir;

static void
expect_error (const char *json, int code, const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_data (json, -1, NULL, "sys.json", &error);

  if (system != NULL)
    {
      /* some errors appear only when the system is checked as a whole */
      g_assert_false (airy_system_validate (system, NULL, &error));
    }
  g_assert_error (error, AIRY_ERROR, code);
  g_assert_cmpstr (error->message, ==, message);
}

#define HEAD "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]}, "
#define SRC  "{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8}"

static void
test_bad_input (void)
{
  expect_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"n\": 1.33, \"na\": 1.7}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[0].na: must be in (0, n=1.33], got 1.7");
  expect_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": 0}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[0].na: must be in (0, 4], got 0");
  expect_error (HEAD "\"elements\": [{\"type\": \"objective-point-source\", \"na\": -0.2}]}",
                AIRY_ERROR_INVALID_VALUE, "elements[0].na: must be in (0, 4], got -0.2");
  expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0}, \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [" SRC "]}",
                AIRY_ERROR_INVALID_VALUE, "grid.spacing: must be in (0, 10000] µm, got 0");
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
                "colour: unknown key (known: airy, name, description, grid, spectrum, z, elements, microscope, sensor, sample)");
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
  g_assert_false (dir_has_prefix (tmpdir, ".stack.tif."));
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
  g_assert_false (dir_has_prefix (tmpdir, ".keep.tif."));
  g_unlink (path);
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
  g_test_add_func ("/files/tiff/round-trip", test_tiff_round_trip);
  g_test_add_func ("/files/tiff/integer-and-unsupported", test_tiff_integer);
  g_test_add_func ("/files/png/round-trip", test_png_round_trip);
  g_test_add_func ("/files/bad-files", test_bad_files);
  g_test_add_func ("/files/atomic-write", test_atomic_write);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}

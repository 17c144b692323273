/* System JSON and TIFF: round trips and bad input (PNG: test-files-png.c). */
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
                "elements[1].focal: unknown key for \"ff-lens\" (known: type, enabled, f, n, na, inverse, output-shape, output-spacing, output-center-x, output-center-y)");
  expect_error (HEAD "\"elements\": [" SRC "], \"colour\": 1}",
                AIRY_ERROR_UNKNOWN_KEY,
                "colour: unknown key (known: $schema, airy, name, description, modality, grid, spectrum, z, elements, microscope, sensor, sample)");
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
                "elements[1].source: must be one of constant, image, zernike, named, seidel, got \"clouds\"");
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
  g_test_add_func ("/files/bad-files", test_bad_files);
  g_test_add_func ("/files/atomic-write", test_atomic_write);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}

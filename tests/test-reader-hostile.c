/* The readers against hostile files: TIFF strip tables that do not match
 * the image, headers with nothing behind them, OME sizes and pixel sizes
 * out of range, FIFOs where a file is expected, masks far larger than the
 * grid. Every file is made here, in C. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <png.h>
#include <zlib.h>
#include <tiffio.h>

#include "airy.h"
#include "elements/airy-elements-private.h"

static char *tmpdir;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static void
assert_read_refused (const char *path, const char *part)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryStack) s = airy_tiff_read (path, &error);

  g_assert_null (s);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
  if (strstr (error->message, part) == NULL)
    g_error ("expected “%s” in “%s”", part, error->message);
  g_assert_true (g_str_has_prefix (error->message, path));
}

/* ---- strip tables ---- */

typedef struct
{
  guint8 *b;
  gsize   n;
} Bytes;

static void
put16 (Bytes *o, gsize at, guint16 v)
{
  v = GUINT16_TO_LE (v);
  memcpy (o->b + at, &v, 2);
}

static void
put32 (Bytes *o, gsize at, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (o->b + at, &v, 4);
}

enum { SIDE = 16, N_STRIPS = SIDE };

/* A 16 × 16 float32 page, one row per strip (pixel (y, x) = 16·y + x + 1),
 * with the strip table as the caller says: `n_offsets` StripOffsets and
 * `n_counts` StripByteCounts entries (the first n of the true ones), and
 * then `offsets`/`counts` overriding single entries where not NULL. */
static void
write_strips (const char *path, guint n_offsets, guint n_counts, const guint32 *offsets, const guint32 *counts)
{
  enum { IFD = 8, N_ENTRIES = 10, ARRAYS = IFD + 2 + N_ENTRIES * 12 + 4, DATA = ARRAYS + 2 * 4 * N_STRIPS };
  Bytes o = { g_malloc0 (DATA + SIDE * SIDE * 4), DATA + SIDE * SIDE * 4 };
  gsize e = IFD + 2;
  guint k;

  memcpy (o.b, "II", 2);
  put16 (&o, 2, 42);
  put32 (&o, 4, IFD);
  put16 (&o, IFD, N_ENTRIES);
#define ENTRY(tag, type, count, value) do { put16 (&o, e, tag); put16 (&o, e + 2, type); put32 (&o, e + 4, count); \
    if ((type) == 3 && (count) == 1) put16 (&o, e + 8, value); else put32 (&o, e + 8, value); e += 12; } while (0)
  ENTRY (256, 3, 1, SIDE);
  ENTRY (257, 3, 1, SIDE);
  ENTRY (258, 3, 1, 32);
  ENTRY (259, 3, 1, 1);
  ENTRY (262, 3, 1, 1);
  /* a single entry lives in the IFD itself */
  ENTRY (273, 4, n_offsets, n_offsets == 1 ? (offsets ? offsets[0] : DATA) : ARRAYS);
  ENTRY (277, 3, 1, 1);
  ENTRY (278, 3, 1, 1);
  ENTRY (279, 4, n_counts, n_counts == 1 ? (counts ? counts[0] : SIDE * SIDE * 4) : ARRAYS + 4 * N_STRIPS);
  ENTRY (339, 3, 1, 3);
#undef ENTRY
  put32 (&o, e, 0);
  for (k = 0; k < N_STRIPS; k++)
    {
      put32 (&o, ARRAYS + 4 * k, offsets && offsets[k] != G_MAXUINT32 ? offsets[k] : DATA + k * SIDE * 4);
      put32 (&o, ARRAYS + 4 * (N_STRIPS + k), counts && counts[k] != G_MAXUINT32 ? counts[k] : SIDE * 4);
    }
  for (k = 0; k < SIDE * SIDE; k++)
    {
      float v = (float) (k + 1);
      memcpy (o.b + DATA + 4 * k, &v, 4);
    }
  g_assert_true (g_file_set_contents (path, (char *) o.b, (gssize) o.n, NULL));
  g_free (o.b);
}

/* What tifffile (napari's reader) says of a file: the sum of its pixels,
 * or the first line of what it logged; NULL without tifffile. */
static char *
tifffile_says (const char *path)
{
  const char *argv[] = { "/usr/bin/python3", "-c",
    "import sys, logging, io\n"
    "log = io.StringIO(); logging.basicConfig(stream=log, level=logging.WARNING)\n"
    "import tifffile\n"
    "try:\n"
    "    s = float(tifffile.imread(sys.argv[1]).astype('float64').sum())\n"
    "except Exception as e:\n"
    "    s = 'error ' + str(e)\n"
    "w = log.getvalue().strip().splitlines()\n"
    "print(w[0] if w else s)\n",
    path, NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  if (!g_file_test (argv[0], G_FILE_TEST_IS_EXECUTABLE))
    return NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                               &error));
  g_assert_no_error (error);
  if (strstr (err, "No module named 'tifffile'"))
    return NULL;
  return g_strdup (g_strstrip (out));
}

static void
test_strip_table (void)
{
  g_autofree char *path = tmp_path ("strips.tif");
  guint32 offsets[N_STRIPS], counts[N_STRIPS];
  g_autofree char *said = NULL;
  guint k;

  /* the true table: every pixel where it was written (what the refusals
   * below are told apart from) */
  write_strips (path, N_STRIPS, N_STRIPS, NULL, NULL);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(AiryStack) s = airy_tiff_read (path, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (s->depth, ==, 1);
    g_assert_cmpuint (s->height, ==, SIDE);
    for (k = 0; k < SIDE * SIDE; k++)
      g_assert_cmpfloat (s->data[k], ==, (float) (k + 1));
  }
  said = tifffile_says (path);
  if (said == NULL)
    g_test_message ("tifffile is not installed: its cross-check is left out");
  else
    g_assert_cmpstr (said, ==, "32896.0");   /* Σ 1…256, as Airy reads it */
  g_clear_pointer (&said, g_free);

  /* one StripOffsets and one StripByteCounts entry (the whole plane) for
   * 16 strips: libtiff pads the offsets with 0, so rows 1–15 would be read
   * from the header */
  write_strips (path, 1, 1, NULL, NULL);
  assert_read_refused (path, ": page 0: 1 StripOffsets and 1 StripByteCounts entries for 16 strips "
                             "(16 rows, 1 per strip): one of each per strip expected");
  said = tifffile_says (path);
  /* tifffile: "incorrect StripByteCounts count (1 != 16)" */
  if (said != NULL && strstr (said, "incorrect Strip") == NULL)
    g_error ("tifffile should report the strip table, said “%s”", said);
  g_clear_pointer (&said, g_free);
  /* all offsets but only one count, and the other way round */
  write_strips (path, N_STRIPS, 1, NULL, NULL);
  assert_read_refused (path, ": page 0: 16 StripOffsets and 1 StripByteCounts entries for 16 strips");
  write_strips (path, 15, N_STRIPS, NULL, NULL);
  assert_read_refused (path, ": page 0: 15 StripOffsets and 16 StripByteCounts entries for 16 strips");

  /* a full table with one strip at offset 0 */
  for (k = 0; k < N_STRIPS; k++)
    offsets[k] = counts[k] = G_MAXUINT32;
  offsets[5] = 0;
  write_strips (path, N_STRIPS, N_STRIPS, offsets, NULL);
  assert_read_refused (path, ": page 0: strip 5 starts at byte 0, inside the file's header");
  offsets[5] = G_MAXUINT32;

  /* counts that add up to the plane, one strip short of its row */
  counts[3] = 32;
  counts[4] = 96;
  write_strips (path, N_STRIPS, N_STRIPS, NULL, counts);
  assert_read_refused (path, ": page 0: strip 3 holds 32 bytes, its 1 rows need 64: truncated or corrupt");
}


/* ---- headers with nothing behind them ---- */

static void
test_empty_headers (void)
{
  g_autofree char *path = tmp_path ("header.tif");
  static const guint8 no_ifd[16] = { 'I', 'I', 42, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
  static const guint8 header_only[8] = { 'I', 'I', 42, 0, 8, 0, 0, 0 };
  static const guint8 big_no_ifd[16] = { 'I', 'I', 43, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

  /* a first IFD offset of 0: a header and no image */
  g_assert_true (g_file_set_contents (path, (const char *) no_ifd, sizeof no_ifd, NULL));
  assert_read_refused (path, ": a TIFF header with no image: its first IFD offset is 0");
  g_assert_true (g_file_set_contents (path, (const char *) big_no_ifd, sizeof big_no_ifd, NULL));
  assert_read_refused (path, ": a TIFF header with no image: its first IFD offset is 0");
  /* the header alone: its IFD at byte 8 of an 8-byte file */
  g_assert_true (g_file_set_contents (path, (const char *) header_only, sizeof header_only, NULL));
  assert_read_refused (path, ": truncated TIFF: the first IFD is at byte 8, the file has 8 bytes");
}

/* ---- OME sizes ---- */

static void
write_ome (const char *path, const char *pixels_attrs)
{
  g_autofree char *xml = g_strdup_printf (
    "<?xml version=\"1.0\"?><OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\">"
    "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"uint8\" %s>"
    "</Pixels></Image></OME>", pixels_attrs);
  guint8 row[4] = { 1, 2, 3, 4 };
  TIFF *tif = TIFFOpen (path, "w");
  guint y;

  g_assert_nonnull (tif);
  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 4);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 3);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
  TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, xml);
  for (y = 0; y < 3; y++)
    g_assert_cmpint (TIFFWriteScanline (tif, row, y, 0), ==, 1);
  TIFFClose (tif);
}

static void
test_ome_sizes (void)
{
  g_autofree char *path = tmp_path ("sizes.ome.tif");
  static const struct { const char *attrs, *message; } bad[] = {
    { "SizeX=\"4\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"0\" SizeT=\"1\"", "SizeC=\"0\": must be an integer in [1, 2147483647]" },
    { "SizeX=\"4\" SizeY=\"3\" SizeZ=\"0\" SizeC=\"1\" SizeT=\"1\"", "SizeZ=\"0\": must be an integer in [1, 2147483647]" },
    { "SizeX=\"4\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"-1\"", "SizeT=\"-1\": must be an integer in [1, 2147483647]" },
    { "SizeX=\"0\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\"", "SizeX=\"0\": must be an integer in [1, 2147483647]" },
    { "SizeX=\"4\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\" PhysicalSizeX=\"-0.1\"", "invalid PhysicalSizeX -0.1 (must be > 0)" },
    { "SizeX=\"4\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\" PhysicalSizeX=\"0\"", "invalid PhysicalSizeX 0 (must be > 0)" },
    { "SizeX=\"4\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\" PhysicalSizeY=\"NaN\"", "invalid PhysicalSizeY NaN (must be > 0)" },
    { "SizeX=\"4\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\" PhysicalSizeZ=\"-2\"", "invalid PhysicalSizeZ -2 (must be > 0)" },
  };
  guint i;

  /* the same file with sizes in range reads, with its pixel size */
  write_ome (path, "SizeX=\"4\" SizeY=\"3\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\" PhysicalSizeX=\"0.1\" PhysicalSizeY=\"0.1\"");
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(AiryStack) s = airy_tiff_read (path, &error);

    g_assert_no_error (error);
    g_assert_cmpfloat (s->dx, ==, 0.1);
    g_assert_cmpfloat (s->data[5], ==, 2.0f);
  }
  for (i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      write_ome (path, bad[i].attrs);
      assert_read_refused (path, bad[i].message);
    }
}

/* ---- FIFOs where a file is expected ---- */

/* The child is killed by SIGALRM after 10 s (alarms survive exec): a
 * command that blocks on a FIFO fails the test instead of hanging it. */
static void
watchdog (gpointer data)
{
  alarm (10);
}

typedef struct
{
  int   status;
  char *err;
} Ran;

static void
sim (Ran *r, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  const char *a;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) g_getenv ("AIRY_SIM"));
  va_start (ap, r);
  while ((a = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_assert_nonnull (argv->pdata[0]);
  g_clear_pointer (&r->err, g_free);
  g_assert_true (g_spawn_sync (tmpdir, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, watchdog, NULL, &out, &r->err,
                               &r->status, &error));
  g_assert_no_error (error);
  if (WIFSIGNALED (r->status))
    g_error ("%s %s: killed by signal %d (hung on a FIFO?)", (char *) argv->pdata[0], (char *) argv->pdata[1],
             WTERMSIG (r->status));
}

static void
expect_fifo_refused (Ran *r, const char *fifo)
{
  g_autofree char *expected = g_strdup_printf ("%s: is a FIFO (named pipe), not a regular file", fifo);

  g_assert_true (WIFEXITED (r->status));
  g_assert_cmpint (WEXITSTATUS (r->status), ==, 2);
  if (strstr (r->err, expected) == NULL)
    g_error ("expected “%s” in “%s”", expected, r->err);
}

static char *
write_text (const char *name, const char *text)
{
  char *path = tmp_path (name);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
test_fifo_inputs (void)
{
  g_autofree char *fifo = tmp_path ("fifo.tif");
  g_autofree char *mask_fifo = tmp_path ("fifo.png");
  g_autofree char *out = tmp_path ("out.tif");
  g_autofree char *fit_out = tmp_path ("fit.json");
  g_autofree char *sample_json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.1}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
    " \"microscope\": {\"f\": 100, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100},"
    " \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"file\": \"%s\"}}", fifo);
  g_autofree char *mask_json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"amplitude-mask\", \"file\": \"%s\"}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", mask_fifo);
  g_autofree char *psf_json = g_strdup (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 3},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autofree char *sample_sys = write_text ("sample.json", sample_json);
  g_autofree char *mask_sys = write_text ("mask.json", mask_json);
  g_autofree char *psf_sys = write_text ("psf.json", psf_json);
  Ran r = { 0 };

  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  g_assert_cmpint (mkfifo (mask_fifo, 0644), ==, 0);

  /* a sample volume, a mask image and a bead stack, in each command that reads them */
  sim (&r, "run", sample_sys, "-o", out, "-q", NULL);
  expect_fifo_refused (&r, fifo);
  sim (&r, "validate", sample_sys, NULL);
  expect_fifo_refused (&r, fifo);
  sim (&r, "run", mask_sys, "-o", out, "-q", NULL);
  expect_fifo_refused (&r, mask_fifo);
  sim (&r, "validate", mask_sys, NULL);
  expect_fifo_refused (&r, mask_fifo);
  sim (&r, "fit", fifo, "--system", psf_sys, "-o", fit_out, "-q", NULL);
  expect_fifo_refused (&r, fifo);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (fit_out, G_FILE_TEST_EXISTS));

  /* the engine's readers themselves, under the same 10 s alarm */
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *expected = g_strdup_printf ("%s: is a FIFO (named pipe), not a regular file", fifo);

    alarm (10);
    g_assert_null (airy_tiff_read (fifo, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
    g_assert_cmpstr (error->message, ==, expected);
    g_clear_error (&error);
    g_assert_null (airy_image_read (fifo, &error));
    g_assert_cmpstr (error->message, ==, expected);
    g_clear_error (&error);
    g_assert_null (airy_png_read (fifo, &error));
    g_assert_cmpstr (error->message, ==, expected);
    g_clear_error (&error);
    g_assert_null (airy_tiff_probe (fifo, NULL, &error));
    g_assert_cmpstr (error->message, ==, expected);
    g_clear_error (&error);
    /* a folder is not a system file (a FIFO is: test-files reads one) */
    g_assert_null (airy_system_new_from_file (tmpdir, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_FILE);
    g_clear_pointer (&expected, g_free);
    expected = g_strdup_printf ("%s: is a folder, not a regular file", tmpdir);
    g_assert_cmpstr (error->message, ==, expected);
    alarm (0);
  }
  g_free (r.err);
}

/* ---- masks far larger than the grid ---- */

/* A gray PNG whose pixel (y, x) is value (y, x). */
static void
write_gray_png (const char *path, guint width, guint height, int bits, guint (*value) (guint y, guint x))
{
  FILE *f = g_fopen (path, "wb");
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct (png);
  g_autofree guint8 *row = g_malloc ((gsize) width * 2);
  guint y, x;

  g_assert_nonnull (f);
  g_assert_cmpint (setjmp (png_jmpbuf (png)), ==, 0);
  png_init_io (png, f);
  png_set_IHDR (png, info, width, height, bits, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info (png, info);
  for (y = 0; y < height; y++)
    {
      for (x = 0; x < width; x++)
        if (bits == 16)
          png_save_uint_16 (row + 2 * x, (png_uint_16) value (y, x));
        else
          row[x] = (guint8) value (y, x);
      png_write_row (png, row);
    }
  png_write_end (png, NULL);
  png_destroy_write_struct (&png, &info);
  g_assert_cmpint (fclose (f), ==, 0);
}

static guint
ramp_x (guint y, guint x)
{
  return 32 * x;
}

static guint
ramp_xy (guint y, guint x)
{
  return 20 * y + 3 * x;
}

static double
source (guint i, guint image_n, guint n)
{
  return CLAMP ((i + 0.5) * image_n / n - 0.5, 0.0, image_n - 1.0);
}

static void
test_mask_rows (void)
{
  g_autofree char *big = tmp_path ("big-mask.png");
  g_autofree char *small = tmp_path ("small-mask.png");
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryElement) mask = airy_element_new ("amplitude-mask", &error);
  g_autofree float *down = NULL, *up = NULL;
  guint y, x;

  g_assert_no_error (error);
  /* 2048 × 1500 16-bit, 12 MiB as float32, under a 4 MiB budget: read
   * row by row, it never needs its plane (a whole plane was refused) */
  write_gray_png (big, 2048, 1500, 16, ramp_x);
  g_setenv ("AIRY_MEMORY_BUDGET", "4M", TRUE);
  down = _airy_load_mask_image (mask, "file", big, 32, 32, &error);
  g_unsetenv ("AIRY_MEMORY_BUDGET");
  g_assert_no_error (error);
  /* bilinear sampling of a linear ramp is the ramp at the grid's pixel
   * centres: 32·(64x + 31.5) of 65535 */
  for (y = 0; y < 32; y++)
    for (x = 0; x < 32; x++)
      g_assert_cmpfloat_with_epsilon (down[y * 32 + x], 32.0 * (64.0 * x + 31.5) / 65535.0, 1e-6);

  /* the same from a TIFF in strips of 16 rows */
  {
    g_autofree char *tif_path = tmp_path ("big-mask.tif");
    g_autofree guint16 *row = g_new (guint16, 2048);
    g_autofree float *strips = NULL;
    TIFF *tif = TIFFOpen (tif_path, "w");

    TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 2048);
    TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 1500);
    TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 16);
    TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 16);
    for (x = 0; x < 2048; x++)
      row[x] = (guint16) ramp_x (0, x);
    for (y = 0; y < 1500; y++)
      g_assert_cmpint (TIFFWriteScanline (tif, row, y, 0), ==, 1);
    TIFFClose (tif);
    g_setenv ("AIRY_MEMORY_BUDGET", "4M", TRUE);
    strips = _airy_load_mask_image (mask, "file", tif_path, 32, 32, &error);
    g_unsetenv ("AIRY_MEMORY_BUDGET");
    g_assert_no_error (error);
    g_assert_cmpmem (strips, 32 * 32 * sizeof (float), down, 32 * 32 * sizeof (float));
  }

  /* upsampled (8 × 6 onto 13 × 11): the plane 20y + 3x, held at the edges */
  write_gray_png (small, 8, 6, 8, ramp_xy);
  up = _airy_load_mask_image (mask, "file", small, 11, 13, &error);
  g_assert_no_error (error);
  for (y = 0; y < 11; y++)
    for (x = 0; x < 13; x++)
      g_assert_cmpfloat_with_epsilon (up[y * 13 + x], (20.0 * source (y, 6, 11) + 3.0 * source (x, 8, 13)) / 255.0,
                                      1e-6);
}

/* ---- an output that cannot be written names itself ---- */

/* fit -o and a saved system on a location that takes no files (here
 * /proc): the message names the output, never the temporary beside it */
static void
test_unwritable_output (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_data (
    "{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", -1, NULL, "s.json", &error);
  const char *out = "/proc/airy-reader-hostile-fit.json";

  g_assert_no_error (error);
  g_assert_false (airy_system_save (system, out, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_WRITE);
  if (!g_str_has_prefix (error->message, "/proc/airy-reader-hostile-fit.json: cannot write: ")
      || strstr (error->message, ".airy-") != NULL)
    g_error ("the message should name %s, not a temporary: “%s”", out, error->message);
}

/* ---- a deflate strip whose data run past the strip ---- */

/* An 8 × 8 float32 page, one deflate strip holding 8 × 8 + `extra` values
 * (pixel k = k + 0.5): libtiff 4.5's libdeflate path reported such a
 * strip as read and left it unwritten, so the stack held whatever the heap
 * held, with exit status 0. */
static void
write_long_deflate (const char *path, guint extra)
{
  enum { IFD = 8, N_ENTRIES = 9, DATA = IFD + 2 + N_ENTRIES * 12 + 4 };
  float values[64 + 16];
  uLongf clen = compressBound (sizeof values);
  Bytes o = { g_malloc0 (DATA + clen), 0 };
  gsize e = IFD + 2;
  guint k;

  for (k = 0; k < 64 + extra; k++)
    values[k] = k + 0.5f;
  g_assert_cmpint (compress2 (o.b + DATA, &clen, (const Bytef *) values, (64 + extra) * sizeof (float), 9), ==, Z_OK);
  o.n = DATA + clen;
  memcpy (o.b, "II", 2);
  put16 (&o, 2, 42);
  put32 (&o, 4, IFD);
  put16 (&o, IFD, N_ENTRIES);
#define ENTRY(tag, type, value) do { put16 (&o, e, tag); put16 (&o, e + 2, type); put32 (&o, e + 4, 1); \
    if ((type) == 3) put16 (&o, e + 8, value); else put32 (&o, e + 8, value); e += 12; } while (0)
  ENTRY (256, 3, 8);
  ENTRY (257, 3, 8);
  ENTRY (258, 3, 32);
  ENTRY (259, 3, 8);   /* Adobe deflate */
  ENTRY (262, 3, 1);
  ENTRY (273, 4, DATA);
  ENTRY (277, 3, 1);
  ENTRY (279, 4, (guint32) clen);
  ENTRY (339, 3, 3);
#undef ENTRY
  put32 (&o, e, 0);
  g_assert_true (g_file_set_contents (path, (char *) o.b, (gssize) o.n, NULL));
  g_free (o.b);
}

static void
test_long_deflate_strip (void)
{
  g_autofree char *path = tmp_path ("long-deflate.tif");
  guint extra, k;

  for (extra = 0; extra <= 7; extra += 7)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AiryStack) s = NULL;

      write_long_deflate (path, extra);
      s = airy_tiff_read (path, &error);
      g_assert_no_error (error);
      for (k = 0; k < 64; k++)
        g_assert_cmpfloat (s->data[k], ==, k + 0.5f);
    }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-reader-hostile-XXXXXX", NULL);
  g_assert_nonnull (tmpdir);

  g_test_add_func ("/reader-hostile/tiff/strip-table", test_strip_table);
  g_test_add_func ("/reader-hostile/tiff/empty-headers", test_empty_headers);
  g_test_add_func ("/reader-hostile/tiff/ome-sizes", test_ome_sizes);
  g_test_add_func ("/reader-hostile/tiff/long-deflate-strip", test_long_deflate_strip);
  g_test_add_func ("/reader-hostile/fifo-inputs", test_fifo_inputs);
  g_test_add_func ("/reader-hostile/mask-rows", test_mask_rows);
  g_test_add_func ("/reader-hostile/unwritable-output", test_unwritable_output);

  status = g_test_run ();
  {
    g_autoptr(GDir) dir = g_dir_open (tmpdir, 0, NULL);
    const char *name;

    while (dir && (name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *p = g_build_filename (tmpdir, name, NULL);
        g_unlink (p);
      }
    g_rmdir (tmpdir);
  }
  return status;
}

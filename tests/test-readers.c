/* Second readers: what Airy writes, opened by the tools users open it in —
 * ImageJ itself (the reader Fiji uses for plain TIFF), run headless under
 * the test's X display, and tifffile (napari's reader). A round trip
 * through Airy's own reader proves nothing about them.
 *
 * Without imagej or python3-tifffile installed the cases skip with the
 * reason; `./dev.sh test` (and so CI) installs both and sets
 * AIRY_REQUIRE_READERS=1, which turns a missing reader into a failure. */
#include "config.h"

#include <json-glib/json-glib.h>

#include "airy-test-util.h"

static char *tmpdir;

#define IMAGEJ_JAR "/usr/share/java/ij.jar"
#define PYTHON "/usr/bin/python3"

static gboolean
reader_missing (const char *what, gboolean missing)
{
  if (!missing)
    return FALSE;
  if (g_strcmp0 (g_getenv ("AIRY_REQUIRE_READERS"), "1") == 0)
    g_error ("%s is not installed, and AIRY_REQUIRE_READERS=1 says it must be", what);
  g_test_skip_printf ("%s is not installed (Debian: imagej, python3-tifffile)", what);
  return TRUE;
}

static char *
run (const char *const *argv)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, &error))
    g_error ("%s: %s", argv[0], error->message);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed (%d):\n%s\n%s", argv[0], status, out, err);
  return g_steal_pointer (&out);
}

/* ---- ImageJ ---- */

typedef struct
{
  GHashTable *keys;   /* key → value, from the macro's "key=value" lines */
  float      *raw;    /* every slice as ImageJ holds it, host order */
  gsize       n;
} ImageJView;

static void
imagej_view_clear (ImageJView *v)
{
  g_clear_pointer (&v->keys, g_hash_table_unref);
  g_clear_pointer (&v->raw, g_free);
}

static gboolean
imagej_open (const char *path, ImageJView *view)
{
  g_autofree char *macro = g_test_build_filename (G_TEST_DIST, "readers", "imagej-report.ijm", NULL);
  g_autofree char *raw = g_strconcat (path, ".imagej.raw", NULL);
  g_autofree char *arg = g_strconcat (path, "|", raw, NULL);
  g_autofree char *out = NULL, *bytes = NULL;
  g_auto(GStrv) lines = NULL;
  gboolean display = g_getenv ("DISPLAY") != NULL;
  g_autofree char *xvfb = g_find_program_in_path ("xvfb-run");
  gsize len, i;

  if (reader_missing ("ImageJ", !g_file_test (IMAGEJ_JAR, G_FILE_TEST_EXISTS)
                                || g_find_program_in_path ("java") == NULL || (!display && xvfb == NULL)))
    return FALSE;
  /* ImageJ needs a display even in batch mode (ENVIRONMENT.md) */
  if (display)
    out = run ((const char *const[]) { "java", "-jar", IMAGEJ_JAR, "-batch", macro, arg, NULL });
  else
    out = run ((const char *const[]) { "xvfb-run", "-a", "java", "-jar", IMAGEJ_JAR, "-batch", macro, arg, NULL });
  view->keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  lines = g_strsplit (out, "\n", -1);
  for (i = 0; lines[i]; i++)
    {
      char *eq = strchr (lines[i], '=');
      if (eq)
        g_hash_table_insert (view->keys, g_strndup (lines[i], eq - lines[i]), g_strdup (eq + 1));
    }
  if (!g_str_has_suffix (g_strchomp (out), "saved"))
    g_error ("ImageJ did not open %s:\n%s", path, out);
  g_assert_true (g_file_get_contents (raw, &bytes, &len, NULL));
  view->n = len / 4;
  view->raw = g_new (float, view->n);
  /* ImageJ saves raw data big-endian */
  for (i = 0; i < view->n; i++)
    {
      guint32 u;
      memcpy (&u, bytes + 4 * i, 4);
      u = GUINT32_FROM_BE (u);
      memcpy (&view->raw[i], &u, 4);
    }
  g_unlink (raw);
  return TRUE;
}

static const char *
ij (const ImageJView *v, const char *key)
{
  const char *value = g_hash_table_lookup (v->keys, key);

  if (value == NULL)
    g_error ("ImageJ's report has no %s", key);
  return value;
}

static double
ij_number (const ImageJView *v, const char *key, guint index)
{
  g_auto(GStrv) parts = g_strsplit (ij (v, key), ",", -1);

  g_assert_cmpuint (index, <, g_strv_length (parts));
  return g_ascii_strtod (parts[index], NULL);
}

/* Every slice as ImageJ reads it, bit-exact, with the voxel size in µm;
 * with labels, each slice's label is its z. */
static void
check_imagej (const char *path, const AiryStack *s, gboolean calibrated, gboolean labels)
{
  ImageJView v = { 0 };
  gsize plane = airy_stack_plane_size (s);
  guint k;

  if (!imagej_open (path, &v))
    return;
  g_assert_cmpint (atoi (ij (&v, "slices")), ==, s->depth);
  g_assert_cmpint (atoi (ij (&v, "width")), ==, s->width);
  g_assert_cmpint (atoi (ij (&v, "height")), ==, s->height);
  g_assert_cmpint (atoi (ij (&v, "bitdepth")), ==, 32);
  g_assert_cmpuint (v.n, ==, s->depth * plane);
  for (k = 0; k < s->depth; k++)
    if (memcmp (v.raw + k * plane, airy_stack_plane (s, k), plane * 4) != 0)
      g_error ("%s: ImageJ reads slice %u differently", path, k + 1);
  if (calibrated)
    {
      double dz = s->depth > 1 ? fabs (s->dz) : 1.0;

      g_assert_cmpstr (ij (&v, "unit"), ==, "microns");
      g_assert_cmpfloat_with_epsilon (ij_number (&v, "voxel", 0), s->dx, 1e-9);
      g_assert_cmpfloat_with_epsilon (ij_number (&v, "voxel", 1), s->dy, 1e-9);
      if (s->depth > 1)
        g_assert_cmpfloat_with_epsilon (ij_number (&v, "voxel", 2), dz, 1e-9);
      /* the optical axis (pixel ⌊N/2⌋) at 0, slice 1 at its z */
      g_assert_cmpfloat_with_epsilon (ij_number (&v, "origin", 0), -(double) (s->width / 2) * s->dx, 1e-8);
      g_assert_cmpfloat_with_epsilon (ij_number (&v, "origin", 1), -(double) (s->height / 2) * s->dy, 1e-8);
      if (s->depth > 1)
        g_assert_cmpfloat_with_epsilon (ij_number (&v, "origin", 2), airy_stack_get_z (s, 0), 1e-8);
    }
  for (k = 0; labels && k < s->depth; k++)
    {
      g_autofree char *key = g_strdup_printf ("label%u", k + 1);
      const char *label = ij (&v, key);
      double z;

      g_assert_true (g_str_has_prefix (label, "z = "));
      g_assert_true (g_str_has_suffix (label, " µm"));
      z = g_ascii_strtod (label + 4, NULL);
      g_assert_cmpfloat_with_epsilon (z, airy_stack_get_z (s, k), 1e-5 * MAX (1.0, fabs (z)));
    }
  imagej_view_clear (&v);
}

/* ---- tifffile ---- */

static JsonObject *
tifffile_open (const char *path, const AiryStack *s, JsonParser **keep)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "readers", "tifffile-report.py", NULL);
  g_autofree char *raw = g_strconcat (path, ".expected.raw", NULL);
  g_autofree char *d = g_strdup_printf ("%u", s->depth), *h = g_strdup_printf ("%u", s->height);
  g_autofree char *w = g_strdup_printf ("%u", s->width);
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  const char *probe[] = { PYTHON, "-c", "import tifffile, numpy", NULL };
  int status = 1;

  if (!g_file_test (PYTHON, G_FILE_TEST_IS_EXECUTABLE)
      || !g_spawn_sync (NULL, (char **) probe, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                        NULL, NULL, NULL, NULL, &status, NULL)
      || status != 0)
    {
      reader_missing ("python3-tifffile", TRUE);
      return NULL;
    }
  g_assert_true (g_file_set_contents (raw, (const char *) s->data,
                                      (gssize) (s->depth * airy_stack_plane_size (s) * 4), NULL));
  out = run ((const char *const[]) { PYTHON, script, path, raw, d, h, w, NULL });
  g_unlink (raw);
  *keep = json_parser_new ();
  if (!json_parser_load_from_data (*keep, out, -1, &error))
    g_error ("tifffile's report: %s\n%s", error->message, out);
  return json_node_get_object (json_parser_get_root (*keep));
}

/* The series napari shows: the whole stack as one array, bit-exact, memory
 * mapped, with no warnings. */
static JsonObject *
check_tifffile (const char *path, const AiryStack *s, const char *kind, JsonParser **keep)
{
  JsonObject *r = tifffile_open (path, s, keep);
  JsonArray *shape, *planes;
  guint k;

  if (r == NULL)
    return NULL;
  g_assert_cmpstr (json_object_get_string_member (r, "kind"), ==, kind);
  g_assert_cmpstr (json_object_get_string_member (r, "dtype"), ==, "float32");
  shape = json_object_get_array_member (r, "shape");
  g_assert_cmpuint (json_array_get_length (shape), ==, s->depth > 1 ? 3 : 2);
  g_assert_cmpint (json_array_get_int_element (shape, json_array_get_length (shape) - 1), ==, s->width);
  g_assert_cmpint (json_array_get_int_element (shape, json_array_get_length (shape) - 2), ==, s->height);
  if (s->depth > 1)
    g_assert_cmpint (json_array_get_int_element (shape, 0), ==, s->depth);
  planes = json_object_get_array_member (r, "planes_equal");
  for (k = 0; k < s->depth; k++)
    if (!json_array_get_boolean_element (planes, k))
      g_error ("%s: tifffile reads plane %u differently", path, k);
  g_assert_true (json_object_get_boolean_member (r, "equal"));
  g_assert_true (json_object_get_boolean_member (r, "memmap"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "warnings")), ==, 0);
  if (s->dx > 0 && json_object_has_member (r, "resolution"))
    {
      JsonArray *res = json_object_get_array_member (r, "resolution");
      g_assert_cmpfloat_with_epsilon (1.0 / json_array_get_double_element (res, 0), s->dx, 1e-12);
      g_assert_cmpfloat_with_epsilon (1.0 / json_array_get_double_element (res, 1), s->dy, 1e-12);
    }
  return r;
}

/* ---- the files ---- */

static AiryStack *
widefield (void)
{
  g_autoptr(AirySystem) system = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [96, 80], \"spacing\": 0.5},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"start\": -2, \"stop\": 2, \"count\": 9},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);

  return g_steal_pointer (&result->stack);
}

static void
test_imagej_stacks (void)
{
  /* a computed PSF stack (every plane different), two planes, one plane */
  g_autoptr(AiryStack) psf = widefield ();
  g_autoptr(AiryStack) two = airy_stack_new (2, 7, 9);
  g_autoptr(AiryStack) one = airy_stack_new (1, 7, 9);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "imagej.tif", NULL);
  guint i;

  g_assert_true (airy_tiff_write (path, psf, &error));
  check_imagej (path, psf, TRUE, TRUE);
  for (i = 0; i < 2 * 63; i++)
    two->data[i] = one->data[i % 63] = (float) (i * 1.5 - 20.0);
  two->dx = two->dy = one->dx = one->dy = 0.25;
  two->dz = 0.5;
  g_assert_true (airy_tiff_write (path, two, &error));
  check_imagej (path, two, TRUE, TRUE);
  g_assert_true (airy_tiff_write (path, one, &error));
  check_imagej (path, one, TRUE, FALSE);
  g_unlink (path);
}

static void
test_imagej_uneven_and_large (void)
{
  static const double z[6] = { -3.0, -1.0, -0.5, 0.0, 0.125, 2.0 };
  g_autoptr(AiryStack) s = airy_stack_new (6, 12, 10);
  g_autoptr(GError) error = NULL;
  g_autofree char *uneven = g_build_filename (tmpdir, "uneven.tif", NULL);
  g_autofree char *large = g_build_filename (tmpdir, "large.tif", NULL);
  g_autofree char *ome = g_build_filename (tmpdir, "plain.ome.tif", NULL);
  AiryTiffWriteOptions wo = { AIRY_TIFF_IMAGEJ, NULL, 0 };
  guint i;

  for (i = 0; i < 6 * 120; i++)
    s->data[i] = (float) (i % 120) + 1000.0f * (i / 120) + 0.125f;
  s->dx = s->dy = 0.1;
  airy_stack_set_z (s, z);
  /* uneven z: ImageJ shows the mean step, the labels hold the exact z */
  g_assert_true (airy_tiff_write_full (uneven, s, &wo, &error));
  check_imagej (uneven, s, TRUE, TRUE);
  /* ImageJ's own layout beyond 4 GB (the limit lowered): one IFD */
  wo.classic_limit = 1000;
  g_assert_true (airy_tiff_write_full (large, s, &wo, &error));
  check_imagej (large, s, TRUE, TRUE);
  /* ImageJ without Bio-Formats reads an OME-TIFF as plain pages: every
   * slice still right */
  g_assert_true (airy_tiff_write (ome, s, &error));
  check_imagej (ome, s, FALSE, FALSE);
  g_unlink (uneven);
  g_unlink (large);
  g_unlink (ome);
}

static void
test_tifffile_imagej (void)
{
  g_autoptr(AiryStack) psf = widefield ();
  g_autoptr(AiryStack) two = airy_stack_new (2, 5, 6);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) p1 = NULL;
  g_autoptr(JsonParser) p2 = NULL;
  g_autoptr(JsonParser) p3 = NULL;
  g_autoptr(JsonParser) p4 = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "napari.tif", NULL);
  AiryTiffWriteOptions wo = { AIRY_TIFF_AUTO, NULL, 0 };
  JsonObject *r, *meta;
  JsonArray *labels;
  guint i;

  g_assert_true (airy_tiff_write (path, psf, &error));
  r = check_tifffile (path, psf, "imagej", &p1);
  if (r == NULL)
    return;
  g_assert_true (json_object_get_boolean_member (r, "is_imagej"));
  g_assert_false (json_object_get_boolean_member (r, "is_bigtiff"));
  meta = json_object_get_object_member (r, "imagej");
  g_assert_cmpint (json_object_get_int_member (meta, "images"), ==, psf->depth);
  g_assert_cmpstr (json_object_get_string_member (meta, "unit"), ==, "micron");
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (meta, "spacing"), psf->dz, 1e-9);
  labels = json_object_get_array_member (r, "labels");
  g_assert_cmpuint (json_array_get_length (labels), ==, psf->depth);
  g_assert_cmpstr (json_array_get_string_element (labels, 0), ==, "z = -2 µm");
  /* the system travels in ImageJ's Info */
  g_assert_nonnull (strstr (json_object_get_string_member (r, "info"), "\"objective-point-source\""));

  /* two planes: tifffile's ImageJ series read once returned garbage */
  for (i = 0; i < 60; i++)
    two->data[i] = (float) i - 7.5f;
  g_assert_true (airy_tiff_write (path, two, &error));
  check_tifffile (path, two, "imagej", &p2);

  /* beyond 4 GB (the limit lowered below the stack, above a plane):
   * ImageJ's layout, and BigTIFF */
  wo.classic_limit = 100000;
  g_assert_true (airy_tiff_write_full (path, psf, &wo, &error));
  r = check_tifffile (path, psf, "imagej", &p3);
  g_assert_cmpint (json_object_get_int_member (r, "pages"), ==, 1);
  wo.format = AIRY_TIFF_BIGTIFF;
  wo.classic_limit = 0;
  g_assert_true (airy_tiff_write_full (path, psf, &wo, &error));
  r = check_tifffile (path, psf, "imagej", &p4);
  g_assert_true (json_object_get_boolean_member (r, "is_bigtiff"));
  g_assert_cmpint (json_object_get_int_member (r, "pages"), ==, psf->depth);
  g_unlink (path);
}

static void
test_tifffile_ome (void)
{
  static const double z[5] = { -1.0, -0.25, 0.0, 0.1, 1.5 };
  g_autoptr(AirySystem) system = test_system ("{\"airy\": 1, \"grid\": {\"shape\": [64, 48], \"spacing\": 0.5},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"values\": [-1, -0.25, 0, 0.1, 1.5]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) p1 = NULL;
  g_autoptr(JsonParser) p2 = NULL;
  g_autofree char *path = g_build_filename (tmpdir, "psf.ome.tif", NULL);
  AiryStack *s = result->stack;
  AiryTiffWriteOptions wo = { AIRY_TIFF_AUTO, NULL, 100 };
  JsonObject *r, *ome, *notes;
  JsonArray *pz;
  guint k;

  g_assert_true (airy_tiff_write (path, s, &error));
  r = check_tifffile (path, s, "ome", &p1);
  if (r == NULL)
    return;
  g_assert_true (json_object_get_boolean_member (r, "is_ome"));
  ome = json_object_get_object_member (r, "ome");
  g_assert_cmpstr (json_object_get_string_member (ome, "SizeX"), ==, "48");
  g_assert_cmpstr (json_object_get_string_member (ome, "SizeY"), ==, "64");
  g_assert_cmpstr (json_object_get_string_member (ome, "SizeZ"), ==, "5");
  g_assert_cmpstr (json_object_get_string_member (ome, "Type"), ==, "float");
  g_assert_cmpstr (json_object_get_string_member (ome, "PhysicalSizeXUnit"), ==, "µm");
  g_assert_cmpfloat (g_ascii_strtod (json_object_get_string_member (ome, "PhysicalSizeX"), NULL), ==, s->dx);
  g_assert_cmpstr (json_object_get_string_member (ome, "EmissionWavelength"), ==, "532");
  /* every plane's exact z */
  pz = json_object_get_array_member (ome, "PositionZ");
  g_assert_cmpuint (json_array_get_length (pz), ==, 5);
  for (k = 0; k < 5; k++)
    g_assert_cmpfloat (json_array_get_double_element (pz, k), ==, z[k]);
  /* the Airy version and the system, which loads back as the same system */
  notes = json_object_get_object_member (ome, "annotations");
  g_assert_cmpstr (json_object_get_string_member (notes, "airy.version"), ==, PACKAGE_VERSION);
  {
    g_autoptr(AirySystem) back = test_system (json_object_get_string_member (notes, "airy.system"));
    g_assert_cmpuint (airy_system_hash (back), ==, airy_system_hash (system));
  }
  /* beyond 4 GB (limit lowered): BigTIFF */
  g_assert_true (airy_tiff_write_full (path, s, &wo, &error));
  r = check_tifffile (path, s, "ome", &p2);
  g_assert_true (json_object_get_boolean_member (r, "is_bigtiff"));
  g_unlink (path);
}

static void
test_channels (void)
{
  /* two wavelengths kept as channels (a hyperstack, with Airy's wavelength
   * tag): ImageJ and tifffile see C = 2 × Z = 3, every image bit-exact,
   * each slice labelled with its wavelength and z */
  g_autofree char *path = g_build_filename (tmpdir, "channels.tif", NULL);
  const double lambda[2] = { 0.532, 0.64 }, one = 1.0;
  g_autoptr(AiryStack) flat = airy_stack_new (6, 7, 9);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) keep = NULL;
  AiryStack *channels[2];
  ImageJView v = { 0 };
  JsonObject *r;
  guint c, k, i;

  for (c = 0; c < 2; c++)
    {
      channels[c] = airy_stack_new (3, 7, 9);
      for (k = 0; k < 3; k++)
        for (i = 0; i < 63; i++)
          airy_stack_plane (channels[c], k)[i] = airy_stack_plane (flat, 2 * k + c)[i]
            = (float) (100.0 * c + 10.0 * k + 0.25 * i - 2.0);
      channels[c]->dx = channels[c]->dy = 0.25;
      channels[c]->dz = 0.5;
      channels[c]->z0 = -0.5;
      airy_stack_set_provenance (channels[c], 1, &lambda[c], &one, NULL);
    }
  flat->dx = flat->dy = 0.25;
  flat->dz = 0.5;
  flat->z0 = -0.5;
  g_assert_true (airy_tiff_write_channels (path, channels, 2, NULL, &error));
  g_assert_no_error (error);
  airy_stack_free (channels[0]);
  airy_stack_free (channels[1]);

  if (imagej_open (path, &v))
    {
      g_assert_cmpint (atoi (ij (&v, "channels")), ==, 2);
      g_assert_cmpint (atoi (ij (&v, "zslices")), ==, 3);
      g_assert_cmpint (atoi (ij (&v, "slices")), ==, 6);
      g_assert_cmpuint (v.n, ==, 6 * 63);
      g_assert_true (memcmp (v.raw, flat->data, 6 * 63 * 4) == 0);
      g_assert_cmpfloat_with_epsilon (ij_number (&v, "voxel", 2), 0.5, 1e-9);
      g_assert_cmpstr (ij (&v, "label1"), ==, "\xce\xbb = 0.532 \xc2\xb5m, z = -0.5 \xc2\xb5m");
      g_assert_cmpstr (ij (&v, "label6"), ==, "\xce\xbb = 0.64 \xc2\xb5m, z = 0.5 \xc2\xb5m");
      imagej_view_clear (&v);
    }
  r = tifffile_open (path, flat, &keep);
  if (r != NULL)
    {
      JsonArray *shape = json_object_get_array_member (r, "shape");

      g_assert_cmpstr (json_object_get_string_member (r, "kind"), ==, "imagej");
      g_assert_cmpstr (json_object_get_string_member (r, "axes"), ==, "ZCYX");
      g_assert_cmpuint (json_array_get_length (shape), ==, 4);
      g_assert_cmpint (json_array_get_int_element (shape, 0), ==, 3);
      g_assert_cmpint (json_array_get_int_element (shape, 1), ==, 2);
      g_assert_true (json_object_get_boolean_member (r, "equal"));
      g_assert_true (json_object_get_boolean_member (r, "memmap"));
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "warnings")), ==, 0);
      g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (r, "labels"), 1), ==,
                       "\xce\xbb = 0.64 \xc2\xb5m, z = -0.5 \xc2\xb5m");
    }
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  airy_init ();
  tmpdir = g_dir_make_tmp ("airy-readers-XXXXXX", NULL);

  g_test_add_func ("/readers/imagej/stacks", test_imagej_stacks);
  g_test_add_func ("/readers/imagej/uneven-and-large", test_imagej_uneven_and_large);
  g_test_add_func ("/readers/tifffile/imagej", test_tifffile_imagej);
  g_test_add_func ("/readers/tifffile/ome", test_tifffile_ome);
  g_test_add_func ("/readers/channels", test_channels);
  status = g_test_run ();
  g_rmdir (tmpdir);
  return status;
}

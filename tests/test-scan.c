/* The scanning microscopes (confocal, two-photon, ism): their closed forms
 * against Airy's own PSFs, their normalisation, and their bad input. */
#include "config.h"

#include <sys/wait.h>

#include "airy-test-util.h"
#include "airy-grad-private.h"

/* NA 1.2 in water, f = 100 µm, emission 0.52 µm: the image plane's pixel
 * f·λ/(n·N·dx) is 0.0402 µm on 128² at dx = 7.6 µm */
#define OPTICS "{ \"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.33, \"na\": 1.2 }," \
               "{ \"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.33 }"

static char *
scan_json (const char *modality, guint n, double spacing, double lambda_em, const char *parts)
{
  return g_strdup_printf ("{\"airy\": 1, \"modality\": \"%s\", \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
                          " \"spectrum\": {\"wavelengths\": [%.17g]}, \"z\": {\"values\": [0.0, 0.4, -1.0]},"
                          " \"elements\": [" OPTICS "%s%s]}",
                          modality, n, n, spacing, lambda_em, *parts ? ", " : "", parts);
}

/* Airy's widefield PSF of the same optics at λ, its pupil spacing scaled
 * by λ/λ_em so that its pixel is the emission's */
static AiryResult *
widefield (guint n, double spacing, double lambda, double lambda_em)
{
  g_autofree char *json = scan_json ("psf", n, spacing * lambda / lambda_em, lambda, "");
  g_autoptr(AirySystem) system = test_system (json);

  return test_run (system, NULL);
}

static AiryResult *
scan_run (const char *modality, guint n, double spacing, double lambda_em, const char *parts, gboolean channels)
{
  g_autofree char *json = scan_json (modality, n, spacing, lambda_em, parts);
  g_autoptr(AirySystem) system = test_system (json);
  AiryRunOptions options = { .per_wavelength = channels };

  return test_run (system, &options);
}

static double
max_abs_diff (const float *a, const float *b, gsize n)
{
  double m = 0.0;
  gsize i;

  for (i = 0; i < n; i++)
    m = MAX (m, fabs ((double) a[i] - b[i]));
  return m;
}

static gsize
stack_size (const AiryStack *s)
{
  return (gsize) s->depth * s->height * s->width;
}

/* pinhole → 0: E·(D ⊛ P) → E·D·area (a pinhole inside one pixel weighs
 * that pixel by its area) */
static void
test_confocal_small_pinhole (void)
{
  const guint n = 128;
  const double dx = 7.6, lem = 0.52, lex = 0.488, diameter = 0.02;
  g_autoptr(AiryResult) conf = scan_run ("confocal", n, dx, lem,
                                         "{\"type\": \"excitation\", \"wavelength\": 0.488},"
                                         " {\"type\": \"pinhole\", \"diameter\": 0.02}", FALSE);
  g_autoptr(AiryResult) ex = widefield (n, dx, lex, lem);
  g_autoptr(AiryResult) det = widefield (n, dx, lem, lem);
  double radius = diameter / 2.0 * 1.22 * lem / 1.2, area = G_PI * radius * radius, peak = 0.0, err = 0.0;
  gsize i, count = stack_size (conf->stack);

  g_assert_cmpuint (count, ==, stack_size (ex->stack));
  g_assert_cmpfloat_with_epsilon (conf->stack->dx, ex->stack->dx, 1e-9);
  g_assert_cmpfloat_with_epsilon (conf->stack->dx, det->stack->dx, 1e-9);
  for (i = 0; i < count; i++)
    {
      double product = (double) ex->stack->data[i] * det->stack->data[i];

      peak = MAX (peak, product);
      err = MAX (err, fabs (conf->stack->data[i] / area - product));
    }
  g_test_message ("pinhole 0.02 AU: max |eff/area − exc·det| = %.3g of the peak", err / peak);
  g_assert_cmpfloat (err, <=, 1e-5 * peak);
}

/* pinhole ≫ 1: all the light passes, E·1 = E */
static void
test_confocal_large_pinhole (void)
{
  const guint n = 128;
  g_autoptr(AiryResult) conf = scan_run ("confocal", n, 7.6, 0.52,
                                         "{\"type\": \"excitation\", \"wavelength\": 0.488},"
                                         " {\"type\": \"pinhole\", \"diameter\": 1000}", FALSE);
  g_autoptr(AiryResult) ex = widefield (n, 7.6, 0.488, 0.52);
  gsize count = stack_size (ex->stack);
  double peak = plane_max (ex->stack->data, count, NULL);
  double err = max_abs_diff (conf->stack->data, ex->stack->data, count);

  g_test_message ("pinhole 1000 AU: max |eff − exc| = %.3g of the peak", err / peak);
  g_assert_cmpfloat (err, <=, 1e-5 * peak);
}

/* Normalisation: each plane of E has power 1 (Σ·du² = 1, DESIGN §3); the
 * detection term (D ⊛ P)·du² is the fraction of the light the pinhole
 * passes, in [0, 1], and of a 1 AU pinhole on the axis in focus the Airy
 * disk's encircled energy within its first dark ring, 1 − J0²(3.832) −
 * J1²(3.832) = 0.838. */
static void
test_confocal_normalisation (void)
{
  const guint n = 256;
  g_autoptr(AiryResult) conf = scan_run ("confocal", n, 3.8, 0.52, "{\"type\": \"excitation\"},"
                                         " {\"type\": \"pinhole\", \"diameter\": 1.0}", TRUE);
  AiryStack *e, *d, *eff;
  gsize plane, i, centre = (gsize) (n / 2) * n + n / 2;
  double du, lo = INFINITY, hi = -INFINITY;
  guint z;

  g_assert_cmpuint (conf->n_channels, ==, 3);
  e = conf->channels[0];
  d = conf->channels[1];
  eff = conf->channels[2];
  /* each named by what it is */
  g_assert_cmpstr (e->channel_names[0], ==, "excitation");
  g_assert_cmpstr (d->channel_names[0], ==, "detection");
  g_assert_cmpstr (eff->channel_names[0], ==, "effective");
  du = e->dx;
  plane = airy_stack_plane_size (e);
  g_assert_cmpfloat_with_epsilon (e->wavelengths[0], 0.488, 1e-12);
  g_assert_cmpfloat_with_epsilon (d->wavelengths[0], 0.52, 1e-12);
  for (z = 0; z < e->depth; z++)
    g_assert_cmpfloat_with_epsilon (plane_sum (airy_stack_plane (e, z), plane) * du * du, 1.0, 1e-4);
  for (i = 0; i < stack_size (d); i++)
    {
      lo = MIN (lo, d->data[i]);
      hi = MAX (hi, d->data[i]);
    }
  g_assert_cmpfloat (lo, >=, -1e-6);
  g_assert_cmpfloat (hi, <=, 1.0 + 1e-5);
  g_test_message ("1 AU pinhole, in focus on the axis: %.4f of the light passes (Airy disk: 0.838)",
                  d->data[centre]);
  g_assert_cmpfloat_with_epsilon (d->data[centre], 0.838, 0.01);
  /* the effective PSF is the result, and the product of the two */
  g_assert_cmpfloat (max_abs_diff (eff->data, conf->stack->data, stack_size (eff)), ==, 0.0);
  for (i = 0; i < stack_size (eff); i += 97)
    g_assert_cmpfloat_with_epsilon (eff->data[i], e->data[i] * d->data[i], 1e-6 * e->data[centre]);
}

/* two-photon: E² of the excitation at 0.92 µm (each factor normalised as
 * DESIGN §3: power 1 per plane); with a large pinhole the same */
static void
test_two_photon (void)
{
  const guint n = 128;
  g_autoptr(AiryResult) open = scan_run ("two-photon", n, 7.6, 0.52, "{\"type\": \"excitation\", \"wavelength\": 0.92}",
                                         FALSE);
  g_autoptr(AiryResult) pinhole = scan_run ("two-photon", n, 7.6, 0.52,
                                            "{\"type\": \"excitation\", \"wavelength\": 0.92},"
                                            " {\"type\": \"pinhole\", \"diameter\": 1000}", FALSE);
  g_autoptr(AiryResult) ex = widefield (n, 7.6, 0.92, 0.52);
  gsize count = stack_size (ex->stack), i;
  g_autofree float *square = g_new (float, count);
  double peak;

  for (i = 0; i < count; i++)
    square[i] = ex->stack->data[i] * ex->stack->data[i];
  peak = plane_max (square, count, NULL);
  g_assert_cmpfloat (max_abs_diff (open->stack->data, square, count), <=, 1e-6 * peak);
  g_assert_cmpfloat (max_abs_diff (pinhole->stack->data, square, count), <=, 1e-5 * peak);
  /* its channels: the excitation's intensity, then the effective E² */
  {
    g_autoptr(AiryResult) parts = scan_run ("two-photon", n, 7.6, 0.52,
                                            "{\"type\": \"excitation\", \"wavelength\": 0.92}", TRUE);

    g_assert_cmpuint (parts->n_channels, ==, 2);
    g_assert_cmpfloat (max_abs_diff (parts->channels[0]->data, ex->stack->data, count), ==, 0.0);
    g_assert_cmpfloat (max_abs_diff (parts->channels[1]->data, open->stack->data, count), ==, 0.0);
  }
}

/* A Gaussian-filled back aperture widens the excitation focus */
static void
test_confocal_fill (void)
{
  const guint n = 128;
  g_autoptr(AiryResult) uniform = scan_run ("confocal", n, 7.6, 0.52, "{\"type\": \"excitation\"},"
                                            " {\"type\": \"pinhole\", \"diameter\": 1000}", FALSE);
  g_autoptr(AiryResult) gauss = scan_run ("confocal", n, 7.6, 0.52, "{\"type\": \"excitation\", \"fill\": 0.5},"
                                          " {\"type\": \"pinhole\", \"diameter\": 1000}", FALSE);
  double wu = profile_fwhm (uniform->stack->data + (gsize) (n / 2) * n, n, n / 2);
  double wg = profile_fwhm (gauss->stack->data + (gsize) (n / 2) * n, n, n / 2);

  g_test_message ("excitation FWHM: uniform %.3f px, Gaussian fill 0.5 %.3f px", wu, wg);
  g_assert_cmpfloat (wg, >, 1.1 * wu);
}

/* ism: the reassigned sum is √2 narrower than widefield (equal
 * wavelengths, a 5 × 5 array of 0.2 AU: a small pinhole's resolution
 * with the light of the whole array) and carries the elements' power */
static void
test_ism (void)
{
  const guint n = 256;
  g_autoptr(AiryResult) ism = scan_run ("ism", n, 3.8, 0.52, "{\"type\": \"excitation\", \"wavelength\": 0.52},"
                                        " {\"type\": \"detector-array\", \"size\": 5, \"element-size\": 0.2}", TRUE);
  g_autoptr(AiryResult) wf = widefield (n, 3.8, 0.52, 0.52);
  double w_ism = profile_fwhm (ism->stack->data + (gsize) (n / 2) * n, n, n / 2);
  double w_wf = profile_fwhm (wf->stack->data + (gsize) (n / 2) * n, n, n / 2);
  double elements = 0.0, sum;
  gsize plane = airy_stack_plane_size (ism->stack);
  guint k;

  g_assert_cmpuint (ism->n_channels, ==, 26);
  g_test_message ("FWHM: widefield %.3f px, ISM %.3f px, ratio %.4f (1/√2 = 0.7071)", w_wf, w_ism, w_ism / w_wf);
  g_assert_cmpfloat (fabs (w_ism / w_wf - G_SQRT2 / 2.0), <=, 0.05 * G_SQRT2 / 2.0);
  for (k = 0; k < 25; k++)
    elements += plane_sum (ism->channels[k]->data, plane);
  sum = plane_sum (ism->stack->data, plane);
  g_test_message ("in focus: Σ reassigned %.6g, Σ elements %.6g", sum, elements);
  g_assert_cmpfloat (fabs (sum - elements), <=, 1e-3 * elements);
  /* the last channel is the sum */
  g_assert_cmpstr (ism->channels[0]->channel_names[0], ==, "element 1");
  g_assert_cmpstr (ism->channels[24]->channel_names[0], ==, "element 25");
  g_assert_cmpstr (ism->channels[25]->channel_names[0], ==, "reassigned sum");
  g_assert_cmpfloat (max_abs_diff (ism->channels[25]->data, ism->stack->data, stack_size (ism->stack)), ==, 0.0);
}

/* Airyscan's layout: 32 hexagons of 0.2 AU on a honeycomb, the same
 * resolution and power rules */
static void
test_ism_hexagonal (void)
{
  const guint n = 256;
  g_autoptr(AiryResult) ism = scan_run ("ism", n, 3.8, 0.52, "{\"type\": \"excitation\", \"wavelength\": 0.52},"
                                        " {\"type\": \"detector-array\", \"layout\": \"hexagonal\", "
                                        "\"element-size\": 0.2}", TRUE);
  g_autoptr(AiryResult) wf = widefield (n, 3.8, 0.52, 0.52);
  double w_ism = profile_fwhm (ism->stack->data + (gsize) (n / 2) * n, n, n / 2);
  double w_wf = profile_fwhm (wf->stack->data + (gsize) (n / 2) * n, n, n / 2);
  gsize plane = airy_stack_plane_size (ism->stack);
  double elements = 0.0, sum = plane_sum (ism->stack->data, plane);
  guint k;

  g_assert_cmpuint (ism->n_channels, ==, 33);
  for (k = 0; k < 32; k++)
    elements += plane_sum (ism->channels[k]->data, plane);
  g_test_message ("hexagonal 32: FWHM ratio %.4f (1/√2 = 0.7071); Σ reassigned %.6g, Σ elements %.6g",
                  w_ism / w_wf, sum, elements);
  g_assert_cmpfloat (fabs (w_ism / w_wf - G_SQRT2 / 2.0), <=, 0.05 * G_SQRT2 / 2.0);
  g_assert_cmpfloat (fabs (sum - elements), <=, 1e-3 * elements);
  /* the centre element is the brightest */
  g_assert_cmpfloat (plane_max (ism->channels[0]->data, plane, NULL), >,
                     plane_max (ism->channels[31]->data, plane, NULL));
}

static void
test_bad_input (void)
{
  g_autofree char *zero = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"pinhole\", \"diameter\": 0}");
  g_autofree char *negative = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"pinhole\", \"diameter\": -1}");
  g_autofree char *big_array = scan_json ("ism", 64, 7.6, 0.52, "{\"type\": \"pinhole\", \"diameter\": 1},"
                                          " {\"type\": \"detector-array\", \"size\": 15, \"element-size\": 0.5}");
  g_autofree char *off_grid = scan_json ("ism", 64, 7.6, 0.52,
                                         "{\"type\": \"detector-array\", \"size\": 15, \"element-size\": 2}");
  g_autofree char *hex_pinhole = scan_json ("ism", 64, 7.6, 0.52, "{\"type\": \"pinhole\", \"diameter\": 1},"
                                            " {\"type\": \"detector-array\", \"layout\": \"hexagonal\","
                                            " \"element-size\": 0.2}");
  g_autofree char *array_confocal = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"detector-array\"}");
  g_autofree char *in_psf = scan_json ("psf", 64, 7.6, 0.52, "{\"type\": \"pinhole\"}");
  g_autofree char *two = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"pinhole\"}, {\"type\": \"pinhole\"}");
  g_autofree char *sensor = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"sensor\", \"reduce\": \"sum\"}");
  g_autofree char *no_lens = g_strdup_printf ("{\"airy\": 1, \"modality\": \"confocal\", \"grid\": {\"shape\": [64, 64],"
                                              " \"spacing\": 7.6}, \"spectrum\": {\"wavelengths\": [0.52]},"
                                              " \"elements\": [{\"type\": \"objective-point-source\"},"
                                              " {\"type\": \"pinhole\"}]}");

  test_expect_error (zero, AIRY_ERROR_INVALID_VALUE, "elements[2].diameter: must be in (0, 1000] AU, got 0");
  test_expect_error (negative, AIRY_ERROR_INVALID_VALUE, "elements[2].diameter: must be in (0, 1000] AU, got -1");
  test_expect_error (big_array, AIRY_ERROR_INVALID_VALUE,
                     "elements[3].size: the array's 225 elements of 0.5 AU (10.61 AU across its farthest corners) "
                     "do not fit the pinhole of 1 AU (elements[2].diameter); use fewer or smaller elements or a "
                     "larger pinhole");
  /* a hexagonal 32: 1 + 6 + 6 + 6 + 12 cells and one more, its farthest
   * corner 3 pitches + 1/√3 out: 2 × 3.577 × 0.2 AU = 1.431 AU */
  test_expect_error (hex_pinhole, AIRY_ERROR_INVALID_VALUE,
                     "elements[3].elements: the array's 32 elements of 0.2 AU (1.431 AU across its farthest "
                     "corners) do not fit the pinhole of 1 AU (elements[2].diameter); use fewer or smaller elements "
                     "or a larger pinhole");
  test_expect_error (off_grid, AIRY_ERROR_INVALID_VALUE,
                     "elements[2].size: the array (15.86 µm across in the image plane) does not fit the grid's image "
                     "plane (5.144 µm across); use fewer or smaller elements or a larger grid");
  test_expect_error (array_confocal, AIRY_ERROR_INVALID_VALUE,
                     "elements[2]: a detector array is read by the ism modality; set \"modality\": \"ism\" or "
                     "remove it");
  test_expect_error (in_psf, AIRY_ERROR_INVALID_VALUE,
                     "elements[2]: \"pinhole\" belongs to a scanning microscope; set \"modality\" to confocal, "
                     "two-photon or ism, or remove it");
  test_expect_error (two, AIRY_ERROR_INVALID_VALUE,
                     "elements[3]: a second \"pinhole\" (the first is elements[2]); give one");
  test_expect_error (sensor, AIRY_ERROR_INVALID_VALUE,
                     "sensor: a scanning microscope's result is its PSF stack, combined plane by plane; remove the "
                     "sensor");
  test_expect_error (no_lens, AIRY_ERROR_INVALID_VALUE,
                     "elements: a scanning microscope's chain ends in an ff-lens (the image plane of the pinhole)");
}

/* λ_ex > λ_em in one-photon excitation: a warning, not an error */
static void
test_stokes (void)
{
  g_autofree char *json = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"excitation\", \"wavelength\": 0.6}");
  g_autofree char *two = scan_json ("two-photon", 64, 7.6, 0.52, "{\"type\": \"excitation\", \"wavelength\": 0.92}");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AirySystem) two_photon = test_system (two);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) none = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = NULL;
  guint i, found = 0;

  g_assert_true (airy_system_check (system, warnings, &error));
  g_assert_no_error (error);
  for (i = 0; i < warnings->len; i++)
    found += g_str_equal (g_ptr_array_index (warnings, i),
                          "elements[2].wavelength: the excitation (0.6 µm) is longer than the emission (0.52 µm): "
                          "a Stokes shift the wrong way");
  g_assert_cmpuint (found, ==, 1);
  result = test_run (system, NULL);
  for (i = 0, found = 0; i < result->warnings->len; i++)
    found += strstr (g_ptr_array_index (result->warnings, i), "Stokes shift the wrong way") != NULL;
  g_assert_cmpuint (found, ==, 1);
  /* two-photon's 0.92 µm is no Stokes shift the wrong way */
  g_assert_true (airy_system_check (two_photon, none, &error));
  for (i = 0; i < none->len; i++)
    g_assert_null (strstr (g_ptr_array_index (none, i), "Stokes"));
}

/* the CLI: exit 2 and the message at the field */
static void
test_cli (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-scan-XXXXXX", NULL);
  g_autofree char *json = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"pinhole\", \"diameter\": 0}");
  g_autofree char *path = g_build_filename (dir, "bad.json", NULL);
  g_autofree char *out = g_build_filename (dir, "out.tif", NULL);
  g_autofree char *err = NULL, *good_err = NULL;
  const char *argv[] = { g_getenv ("AIRY_SIM"), "run", path, "-o", out, NULL };
  const char *preset[] = { g_getenv ("AIRY_SIM"), "run", "--preset", "confocal", "-o", out, "--quiet", NULL };
  int status;

  g_assert_true (g_file_set_contents (path, json, -1, NULL));
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                               &status, NULL));
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 2);
  g_assert_nonnull (strstr (err, "elements[2].diameter: must be in (0, 1000] AU, got 0"));
  g_assert_true (g_spawn_sync (NULL, (char **) preset, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                               &good_err, &status, NULL));
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_true (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (out);
  g_unlink (path);
  g_rmdir (dir);
}

/* `airy-sim run --preset NAME --channels wavelength`: the ImageJ
 * hyperstack's slice labels name each channel by what it is, as tifffile
 * (napari's reader) reads them: the first plane's channels, each label up
 * to its ", λ = …" */
static void
test_channel_labels (void)
{
  const char *cases[][2] = {
    { "confocal", "excitation|detection|effective" },
    { "sted", "effective|excitation|depletion" },
    { "ism", "element 1|element 2|element 3|element 4|element 5|element 6|element 7|element 8|element 9|"
             "element 10|element 11|element 12|element 13|element 14|element 15|element 16|element 17|"
             "element 18|element 19|element 20|element 21|element 22|element 23|element 24|element 25|"
             "reassigned sum" },
  };
  g_autofree char *dir = g_dir_make_tmp ("airy-scan-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "channels.tif", NULL);
  guint i;

  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 for tifffile");
      return;
    }
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *run[] = { g_getenv ("AIRY_SIM"), "run", "--preset", cases[i][0], "-o", out, "--channels",
                            "wavelength", "--quiet", NULL };
      const char *read[] = { "/usr/bin/python3", "-c",
        "import sys, tifffile\n"
        "with tifffile.TiffFile(sys.argv[1]) as t:\n"
        "    m = t.imagej_metadata\n"
        "    print('|'.join(l.split(', ')[0] for l in m['Labels'][:m['channels']]))\n",
        out, NULL };
      g_autofree char *text = NULL, *err = NULL, *run_err = NULL;
      g_autoptr(GError) error = NULL;
      int status;

      g_assert_true (g_spawn_sync (NULL, (char **) run, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                                   &run_err, &status, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (run_err, ==, "");
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
      g_assert_true (g_spawn_sync (NULL, (char **) read, NULL, G_SPAWN_DEFAULT, NULL, NULL, &text, &err, &status,
                                   &error));
      g_assert_no_error (error);
      if (strstr (err, "No module named 'tifffile'"))
        {
          g_test_skip ("tifffile is not installed");
          break;
        }
      g_strchomp (text);
      g_test_message ("%s: %s", cases[i][0], text);
      g_assert_cmpstr (text, ==, cases[i][1]);
      g_unlink (out);
    }
  g_rmdir (dir);
}

/* the presets run in their modality, and a resident result (the app's)
 * holds the combination */
static void
test_presets (void)
{
  const char *names[] = { "confocal", "two-photon", "ism" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirySystem) system = airy_system_new_from_preset (names[i], &error);
      g_autoptr(AiryResult) result = NULL;
      AiryRunOptions options = { .resident = TRUE };

      g_assert_no_error (error);
      g_assert_cmpstr (airy_system_get_modality (system), ==, names[i]);
      if (!g_test_slow () && i == 2)
        continue;
      result = test_run (system, &options);
      g_assert_nonnull (result->resident);
      g_assert_null (result->stack);
    }
}

static void
cancel_at_end (guint done, guint total, gpointer data)
{
  /* the last plane of a chain: the detection's is the last before the
   * combination */
  if (done == total)
    g_cancellable_cancel (data);
}

/* a cancelled run (here at the end of the chains, before or in the
 * combination) ends with G_IO_ERROR_CANCELLED, not a result */
static void
test_cancel (void)
{
  g_autofree char *json = scan_json ("ism", 128, 7.6, 0.52, "{\"type\": \"detector-array\"}");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  AiryResult *result = airy_run (system, NULL, cancel_at_end, cancellable, cancellable, &error);

  g_assert_null (result);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

static void
record_progress (guint done, guint total, gpointer user_data)
{
  GArray *seen = user_data;
  guint pair[2] = { done, total };

  g_array_append_vals (seen, pair, 2);
}

/* one progress for the whole run: the confocal's two chains of 3 planes
 * each count 0…6 of 6, never restarting at the second chain */
static void
test_progress (void)
{
  g_autofree char *json = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"pinhole\"}");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(GArray) seen = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = airy_run (system, NULL, record_progress, seen, NULL, &error);
  guint i, last = 0;

  g_assert_no_error (error);
  g_assert_nonnull (result);
  g_assert_cmpuint (seen->len, >=, 4);
  for (i = 0; i < seen->len; i += 2)
    {
      guint done = g_array_index (seen, guint, i), total = g_array_index (seen, guint, i + 1);

      g_assert_cmpuint (total, ==, 6);
      g_assert_cmpuint (done, >=, last);
      g_assert_cmpuint (done, <=, total);
      last = done;
    }
  g_assert_cmpuint (last, ==, 6);
}

/* the fit and the gradient follow one chain's ops: a scanning system is
 * refused, not modelled by its detection chain alone */
static void
test_fit_grad_refused (void)
{
  g_autofree char *json = scan_json ("confocal", 64, 7.6, 0.52, "{\"type\": \"pinhole\"}");
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) result = test_run (system, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) fit_error = NULL;
  AiryStack *forward = _airy_grad_forward (system, 1, &error);
  AiryFitOptions options;
  AiryFitResult *fit;

  g_assert_null (forward);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "modality: the gradient follows one optical chain; confocal combines "
                   "several (take its chain in the psf modality)");
  airy_fit_options_init (&options);
  options.threads = 1;
  fit = airy_fit_stack (system, result->stack, &options, NULL, &fit_error);
  g_assert_null (fit);
  g_assert_error (fit_error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (fit_error->message, ==, "modality: the fit models the PSF of one optical chain; confocal "
                   "combines several (fit its chain in the psf modality)");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/scan/confocal/small-pinhole", test_confocal_small_pinhole);
  g_test_add_func ("/scan/confocal/large-pinhole", test_confocal_large_pinhole);
  g_test_add_func ("/scan/confocal/normalisation", test_confocal_normalisation);
  g_test_add_func ("/scan/confocal/fill", test_confocal_fill);
  g_test_add_func ("/scan/two-photon", test_two_photon);
  g_test_add_func ("/scan/ism", test_ism);
  g_test_add_func ("/scan/ism-hexagonal", test_ism_hexagonal);
  g_test_add_func ("/scan/bad-input", test_bad_input);
  g_test_add_func ("/scan/stokes", test_stokes);
  g_test_add_func ("/scan/cli", test_cli);
  g_test_add_func ("/scan/presets", test_presets);
  g_test_add_func ("/scan/channel-labels", test_channel_labels);
  g_test_add_func ("/scan/fit-grad-refused", test_fit_grad_refused);
  g_test_add_func ("/scan/cancel", test_cancel);
  g_test_add_func ("/scan/progress", test_progress);
  return g_test_run ();
}

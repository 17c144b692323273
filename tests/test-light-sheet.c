/* The light-sheet modality (engine/modalities/airy-modality-light-sheet.c):
 * the illumination, computed by angular-spectrum quadrature, against the
 * Gaussian beam's waist and Rayleigh range and the Bessel beam's central
 * lobe; the sheet's offset and tilt; the effective PSF as the product of
 * its channels; bad input in the engine and from airy-sim. */
#include "config.h"

#include "airy-test-util.h"

/* the modality's channels too (spectrum.channels, --channels) */
static const AiryRunOptions with_channels = { .per_wavelength = TRUE };

/* A water objective (NA 0.2 at 0.52 µm, n 1.33) detecting on an n × n grid
 * with output pixel du (µm), the planes z (µm), and the light-sheet
 * element's fields (JSON, without braces). */
static char *
sheet_json (guint n, double du, const char *z, const char *sheet)
{
  return g_strdup_printf (
    "{\"airy\": 1, \"modality\": \"light-sheet\", \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
    " \"spectrum\": {\"wavelengths\": [0.52]}, \"z\": {\"values\": [%s]},"
    " \"elements\": ["
    "  {\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.2},"
    "  {\"type\": \"light-sheet\", %s},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}",
    n, n, 100.0 * 0.52 / (1.33 * n * du), z, sheet);
}

static AiryResult *
sheet_run (guint n, double du, const char *z, const char *sheet)
{
  g_autofree char *json = sheet_json (n, du, z, sheet);
  g_autoptr(AirySystem) system = test_system (json);
  AiryResult *result = test_run (system, &with_channels);

  g_assert_cmpuint (result->n_channels, ==, 3);
  return result;
}

/* The illumination at pixel (y, x) of plane k. */
static double
ill (AiryResult *r, guint k, guint y, guint x)
{
  AiryStack *s = r->channels[2];

  return airy_stack_plane (s, k)[(gsize) y * s->width + x];
}

/* The Gaussian sheet: w0 = λ/(π·NA), the 1/e² intensity radius of a beam
 * of 1/e² divergence half-angle θ0 = NA/n in the medium (the paraxial
 * relation θ0 = λ/(π·n·w0)), and z_R = π·n·w0²/λ (= n·λ/(π·NA²)). The
 * sheet is a cylindrical (1-D) beam, so I(x, z) = (w0/w) exp(−2z²/w²),
 * w = w0 √(1 + x²/z_R²): each plane z gives w0 = √(−2z²/ln(I(z)/I(0)))
 * on the waist's column, and the axis (I(0)/I(x))² − 1 = x²/z_R² gives
 * z_R where it crosses 1, interpolated linearly in x² (exact for the
 * beam). At NA 0.05 the non-paraxial correction is below 1e-3. */
static void
test_gaussian (void)
{
  guint n = 512, c = 256, k, x;
  double du = 0.5, lambda = 0.488, na = 0.05, nm = 1.33;
  double w0 = lambda / (G_PI * na), zr = G_PI * nm * w0 * w0 / lambda, q0 = 0.0, x0 = 0.0;
  g_autoptr(AiryResult) r = sheet_run (n, du, "0, 1, 2, 3, 4",
                                       "\"profile\": \"gaussian\", \"wavelength\": 0.488, \"na\": 0.05, \"n\": 1.33");

  g_assert_cmpfloat_with_epsilon (ill (r, 0, c, c), 1.0, 1e-5);
  for (k = 1; k <= 4; k++)
    {
      double w = sqrt (-2.0 * k * k / log (ill (r, k, c, c) / ill (r, 0, c, c)));

      g_test_message ("waist from z = %u µm: %.6f µm, λ/(π·NA) = %.6f µm", k, w, w0);
      g_assert_cmpfloat (fabs (w / w0 - 1.0), <, 1e-3);
    }
  for (x = c; x < n; x++)
    {
      double xx = (x - c) * du, q = pow (ill (r, 0, c, c) / ill (r, 0, c, x), 2.0) - 1.0;

      if (q >= 1.0)
        {
          double x2 = x0 * x0 + (1.0 - q0) / (q - q0) * (xx * xx - x0 * x0);

          g_test_message ("Rayleigh range: %.4f µm, π·n·w0²/λ = %.4f µm", sqrt (x2), zr);
          g_assert_cmpfloat (fabs (sqrt (x2) / zr - 1.0), <, 1e-3);
          break;
        }
      q0 = q;
      x0 = xx;
    }
  g_assert_cmpuint (x, <, n);
  /* a sheet: the same on every row */
  g_assert_cmpfloat (ill (r, 2, 0, c + 40), ==, ill (r, 2, c, c + 40));
}

/* The Bessel beam of an annulus NA 0.285 … 0.3 (annulus 0.95): its
 * central lobe's radius, the first zero of J0(k sin α ρ), is
 * 2.405/(k sin α) with sin α at the annulus' centre, k = 2πn/λ (so
 * k sin α = 2π·NA/λ). The first minimum on the y axis by a parabola
 * through the three pixels around it. */
static void
test_bessel (void)
{
  guint n = 512, c = 256, y;
  double du = 0.01, kappa = 2.0 * G_PI * 0.3 * 0.975 / 0.488, r0 = 2.405 / kappa;
  g_autoptr(AiryResult) r = sheet_run (n, du, "0",
                                       "\"profile\": \"bessel\", \"wavelength\": 0.488, \"na\": 0.3, "
                                       "\"annulus\": 0.95, \"n\": 1.33");

  for (y = c + 1; y + 1 < n && !(ill (r, 0, y, c) < ill (r, 0, y - 1, c) && ill (r, 0, y, c) <= ill (r, 0, y + 1, c)); y++)
    ;
  {
    double a = ill (r, 0, y - 1, c), b = ill (r, 0, y, c), d = ill (r, 0, y + 1, c);
    double vertex = (y - c) + 0.5 * (a - d) / (a - 2.0 * b + d), radius = vertex * du;

    g_test_message ("Bessel lobe radius %.5f µm, 2.405/(k sin α) = %.5f µm (minimum %.2g)", radius, r0, b);
    g_assert_cmpfloat (fabs (radius / r0 - 1.0), <, 1e-2);
    g_assert_cmpfloat (b, <, 1e-3);
  }
  /* along its axis x it does not spread: the annulus' width gives it
   * ≈ 150 µm of length, and ±2.5 µm keep the centre */
  g_assert_cmpfloat (ill (r, 0, c, n - 1), >, 0.99);
  g_assert_cmpfloat (ill (r, 0, c, 0), >, 0.99);
}

/* A scanned Bessel sheet is the same on every row, 1 at its centre,
 * symmetric about it, and the line integral along y of the static beam:
 * its value at t over its value at 0 is Σ_y I(y, t)/Σ_y I(y, 0) of the
 * static beam's planes z = t (a sum over the grid's rows, ±6.4 µm; the
 * sheet integrates its own table, to 1 %). The side lobes add up: the
 * static beam's zero at 0.64 µm is filled. */
static void
test_scanned (void)
{
  guint n = 256, c = 128, y;
  const char *beam = "\"profile\": \"bessel\", \"wavelength\": 0.488, \"na\": 0.3, \"annulus\": 0.95, \"n\": 1.33";
  g_autofree char *scanned_json = g_strdup_printf ("\"scanned\": true, %s", beam);
  g_autoptr(AiryResult) r = sheet_run (n, 0.05, "0, 0.64, -0.64", scanned_json);
  g_autoptr(AiryResult) still = sheet_run (n, 0.05, "0, 0.64", beam);
  double sum0 = 0.0, sum1 = 0.0;

  g_assert_cmpfloat_with_epsilon (ill (r, 0, c, c), 1.0, 1e-3);
  g_assert_cmpfloat (ill (r, 1, 3, c), ==, ill (r, 1, c, c));
  g_assert_cmpfloat_with_epsilon (ill (r, 1, c, c), ill (r, 2, c, c), 1e-4);
  g_assert_cmpfloat (ill (still, 1, c, c), <, 1e-3);
  for (y = 0; y < n; y++)
    {
      sum0 += ill (still, 0, y, c);
      sum1 += ill (still, 1, y, c);
    }
  g_test_message ("scanned Bessel at t = 0.64 µm: %.4f, the static beam's line integral %.4f", ill (r, 1, c, c),
                  sum1 / sum0);
  g_assert_cmpfloat (fabs (ill (r, 1, c, c) / (sum1 / sum0) - 1.0), <, 1e-2);
}

/* Offset o and tilt θ: the sheet at (x, z) is the beam at s = x·cos θ +
 * (z − o)·sin θ along it and t = −x·sin θ + (z − o)·cos θ across it: at
 * x = 40 µm its centre is at z = o + x·tan θ, and the three planes there
 * and 0.8 µm to either side follow the Gaussian beam (w0/w) exp(−2t²/w²)
 * at their (s, t) (NA 0.1: to the non-paraxial 0.5 %). The effective PSF
 * is detection × illumination. */
static void
test_offset_tilt (void)
{
  guint n = 256, c = 128, col = c + 80, k;
  double du = 0.5, o = 1.5, tilt = 0.2, x = 40.0, zc = o + x * tan (tilt);
  double w0 = 0.488 / (G_PI * 0.1), zr = G_PI * 1.33 * w0 * w0 / 0.488;
  double zs[3] = { zc - 0.8, zc, zc + 0.8 };
  g_autofree char *z = g_strdup_printf ("%.17g, %.17g, %.17g", zs[0], zs[1], zs[2]);
  g_autoptr(AiryResult) r = sheet_run (n, du, z,
                                       "\"profile\": \"gaussian\", \"na\": 0.1, \"offset\": 1.5, \"tilt\": 0.2");
  gsize i, count = (gsize) 3 * n * n;

  for (k = 0; k < 3; k++)
    {
      double s = x * cos (tilt) + (zs[k] - o) * sin (tilt), t = -x * sin (tilt) + (zs[k] - o) * cos (tilt);
      double w = w0 * sqrt (1.0 + s * s / (zr * zr)), expect = w0 / w * exp (-2.0 * t * t / (w * w));

      g_test_message ("z = %.3f µm: %.5f, the beam at s = %.3f, t = %.3f: %.5f", zs[k], ill (r, k, c, col), s, t,
                      expect);
      g_assert_cmpfloat (fabs (ill (r, k, c, col) / expect - 1.0), <, 5e-3);
    }
  g_assert_cmpfloat (ill (r, 1, c, col), >, 1.05 * ill (r, 0, c, col));
  for (i = 0; i < count; i += 997)
    g_assert_cmpfloat_with_epsilon (r->stack->data[i], r->channels[1]->data[i] * r->channels[2]->data[i],
                                    1e-6 * r->channels[1]->data[i] + 1e-30);
}

static void
test_bad_input (void)
{
  g_autofree char *json = sheet_json (64, 0.5, "0", "\"na\": 1.5, \"n\": 1.33");
  g_autofree char *dir = g_dir_make_tmp ("airy-sheet-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "bad.json", NULL);
  g_autofree char *out = g_build_filename (dir, "out.tif", NULL);
  g_autofree char *err = NULL;
  const char *argv[] = { g_getenv ("AIRY_SIM"), "run", path, "-o", out, NULL };
  g_autoptr(GError) error = NULL;
  int status;

  test_expect_error (json, AIRY_ERROR_INVALID_VALUE,
                     "elements[1].na: must be in (0, n=1.33], got 1.5 (an illumination NA above the medium's index)");
  test_expect_error ("{\"airy\": 1, \"modality\": \"light-sheet\", \"grid\": {\"shape\": [64, 64], \"spacing\": 1},"
                     " \"spectrum\": {\"wavelengths\": [0.52]},"
                     " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"ff-lens\"}]}",
                     AIRY_ERROR_INVALID_VALUE, "elements: light-sheet needs a \"light-sheet\" element (the illumination)");
  /* a psf system takes no second source */
  test_expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1},"
                     " \"spectrum\": {\"wavelengths\": [0.52]},"
                     " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"light-sheet\"}]}",
                     AIRY_ERROR_INVALID_VALUE, "elements[1]: only the first element may be a source, got \"light-sheet\"");
  g_assert_true (g_file_set_contents (path, json, -1, NULL));
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err, &status,
                               &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 2);
  g_assert_nonnull (strstr (err, "elements[1].na: must be in (0, n=1.33], got 1.5"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/light-sheet/gaussian", test_gaussian);
  g_test_add_func ("/light-sheet/bessel", test_bessel);
  g_test_add_func ("/light-sheet/scanned", test_scanned);
  g_test_add_func ("/light-sheet/offset-tilt", test_offset_tilt);
  g_test_add_func ("/light-sheet/bad-input", test_bad_input);
  return g_test_run ();
}

/* Polarisation optics on a Jones field (engine/airy-jones.h): Malus's
 * law, extinction, wave plates, the universal compensator and the
 * birefringent sample against their closed forms, the power through
 * lossless retarders, and a polarisation element on a scalar field. Each
 * system is run end to end (the compiled, fused ops) and its power
 * Σ I·dx·dy read back; the sources carry power 1. */
#include "config.h"

#include <complex.h>

#include "airy-test-util.h"

/* The power after a vectorial source with the Jones vector (cos θ,
 * sin θ·e^{iβ}) and the elements (JSON objects, comma-separated), on two
 * wavelengths (0.5 and 0.6 µm, weights ½). */
static double
run_power (const char *source, double theta, double beta, const char *elements)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [24, 20], \"spacing\": 0.5},"
    " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [0.5, 0.5]},"
    " \"elements\": [{\"type\": \"%s\", \"field\": \"vectorial\", \"jones-angle\": %.17g, \"jones-phase\": %.17g%s}%s%s]}",
    source, theta, beta, g_str_equal (source, "point-source") ? ", \"z\": 200" : "",
    *elements ? ", " : "", elements);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) result = test_run (system, NULL);
  AiryStack *s = result->stack;

  g_assert_cmpuint (s->depth, ==, 1);
  return plane_sum (s->data, airy_stack_plane_size (s)) * s->dx * s->dy;
}

static double
plane_power (double theta, double beta, const char *elements)
{
  return run_power ("plane-wave", theta, beta, elements);
}

static void
test_source_power (void)
{
  /* the Jones vector is a unit vector: the source keeps its power */
  g_assert_cmpfloat_with_epsilon (plane_power (0.3, 1.1, ""), 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (run_power ("gaussian-beam", -0.7, 0.4, ""), 1.0, 1e-5);
}

static void
test_malus (void)
{
  static const double alpha[] = { 0.0, 0.4, -1.2 }, theta[] = { 0.0, 0.3, G_PI / 4, 1.0, G_PI / 2, 2.5 };
  guint a, t;

  for (a = 0; a < G_N_ELEMENTS (alpha); a++)
    for (t = 0; t < G_N_ELEMENTS (theta); t++)
      {
        g_autofree char *lp = g_strdup_printf ("{\"type\": \"linear-polarizer\", \"angle\": %.17g}", theta[t]);
        double expected = cos (theta[t] - alpha[a]) * cos (theta[t] - alpha[a]);
        double got = plane_power (alpha[a], 0.0, lp);

        g_test_message ("light at %g through a polariser at %g: %.9f, cos² %.9f", alpha[a], theta[t], got, expected);
        g_assert_cmpfloat_with_epsilon (got, expected, 1e-6);
      }
}

static void
test_malus_point_source (void)
{
  /* a POINT op then the source's own Jones op (not folded into a SET) */
  double all = run_power ("point-source", 0.2, 0.0, "");
  double got = run_power ("point-source", 0.2, 0.0, "{\"type\": \"linear-polarizer\", \"angle\": 1.0}");

  g_assert_cmpfloat (all, >, 0.0);
  g_assert_cmpfloat_with_epsilon (got / all, cos (0.8) * cos (0.8), 1e-6);
}

static void
test_crossed (void)
{
  double open = plane_power (0.0, 0.0, "{\"type\": \"linear-polarizer\", \"angle\": 0}");
  double crossed = plane_power (0.0, 0.0, "{\"type\": \"linear-polarizer\", \"angle\": 0},"
                                          " {\"type\": \"linear-polarizer\", \"angle\": 1.5707963267948966}");
  /* elliptical light at 45° still dies between crossed polarisers */
  double crossed_45 = plane_power (G_PI / 4, 0.7, "{\"type\": \"linear-polarizer\", \"angle\": 0.3},"
                                                  " {\"type\": \"linear-polarizer\", \"angle\": 1.8707963267948966}");

  g_assert_cmpfloat_with_epsilon (open, 1.0, 1e-6);
  g_assert_cmpfloat (crossed, <, 1e-12);
  g_assert_cmpfloat (crossed_45, <, 1e-12);
}

/* Stokes V = I(left) − I(right): the power through each circular polariser */
static double
stokes_v (double theta, double beta, const char *elements)
{
  g_autofree char *left = g_strdup_printf ("%s%s{\"type\": \"circular-polarizer\", \"handedness\": \"left\"}",
                                           elements, *elements ? ", " : "");
  g_autofree char *right = g_strdup_printf ("%s%s{\"type\": \"circular-polarizer\", \"handedness\": \"right\"}",
                                            elements, *elements ? ", " : "");

  return plane_power (theta, beta, left) - plane_power (theta, beta, right);
}

static void
test_circular (void)
{
  /* (1, ±i)/√2 is chromatix's left (right) circular vector */
  g_assert_cmpfloat_with_epsilon (stokes_v (G_PI / 4, G_PI / 2, ""), 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (stokes_v (G_PI / 4, -G_PI / 2, ""), -1.0, 1e-6);
  /* linear light: V = 0, and half passes either */
  g_assert_cmpfloat_with_epsilon (stokes_v (0.6, 0.0, ""), 0.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (plane_power (0.6, 0.0, "{\"type\": \"circular-polarizer\"}"), 0.5, 1e-6);
}

static void
test_quarter_wave (void)
{
  /* linear at ±45° to the fast axis leaves circular, |V| = 1, the sign by
   * the side; along the fast axis it stays linear */
  double v_plus = stokes_v (G_PI / 4, 0.0, "{\"type\": \"quarter-wave-plate\", \"angle\": 0}");
  double v_minus = stokes_v (-G_PI / 4, 0.0, "{\"type\": \"quarter-wave-plate\", \"angle\": 0}");
  double v_rot = stokes_v (0.3 + G_PI / 4, 0.0, "{\"type\": \"quarter-wave-plate\", \"angle\": 0.3}");
  double v_axis = stokes_v (0.3, 0.0, "{\"type\": \"quarter-wave-plate\", \"angle\": 0.3}");

  g_test_message ("V: %.9f, %.9f, %.9f, %.9f", v_plus, v_minus, v_rot, v_axis);
  g_assert_cmpfloat_with_epsilon (v_minus, -v_plus, 1e-6);
  g_assert_cmpfloat_with_epsilon (v_rot, v_plus, 1e-6);
  g_assert_cmpfloat_with_epsilon (v_axis, 0.0, 1e-6);
  /* e^{−iη/2}·diag(1, e^{iη}) at θ = 0: Ey delayed by π/2 from (1, 1)/√2
   * is (1, i)/√2, left */
  g_assert_cmpfloat_with_epsilon (v_plus, 1.0, 1e-6);
}

static void
test_half_wave (void)
{
  static const double alpha[] = { 0.0, 0.3, -0.9 }, theta[] = { 0.2, 0.5, 1.3 };
  guint a, t;

  /* linear at α leaves linear at 2θ − α: an analyser there passes all,
   * one crossed to it nothing, one at 0.1 passes cos²(0.1 − (2θ − α)) */
  for (a = 0; a < G_N_ELEMENTS (alpha); a++)
    for (t = 0; t < G_N_ELEMENTS (theta); t++)
      {
        double out = 2 * theta[t] - alpha[a];
        g_autofree char *along = g_strdup_printf ("{\"type\": \"half-wave-plate\", \"angle\": %.17g},"
                                                  " {\"type\": \"linear-polarizer\", \"angle\": %.17g}",
                                                  theta[t], out);
        g_autofree char *across = g_strdup_printf ("{\"type\": \"half-wave-plate\", \"angle\": %.17g},"
                                                   " {\"type\": \"linear-polarizer\", \"angle\": %.17g}",
                                                   theta[t], out + G_PI / 2);
        g_autofree char *at = g_strdup_printf ("{\"type\": \"half-wave-plate\", \"angle\": %.17g},"
                                               " {\"type\": \"linear-polarizer\", \"angle\": 0.1}", theta[t]);

        g_assert_cmpfloat_with_epsilon (plane_power (alpha[a], 0.0, along), 1.0, 1e-6);
        g_assert_cmpfloat_with_epsilon (plane_power (alpha[a], 0.0, across), 0.0, 1e-6);
        g_assert_cmpfloat_with_epsilon (plane_power (alpha[a], 0.0, at), cos (0.1 - out) * cos (0.1 - out), 1e-6);
      }
}

static void
test_lossless (void)
{
  static const char *const retarders[] = {
    "{\"type\": \"phase-retarder\", \"angle\": 0.4, \"retardance\": 1.3, \"circularity\": 0.8}",
    "{\"type\": \"quarter-wave-plate\", \"angle\": -0.3}",
    "{\"type\": \"half-wave-plate\", \"angle\": 1.1}",
    "{\"type\": \"jones-sample\", \"orientation\": 0.2, \"retardance\": 2.0}",
    "{\"type\": \"jones-sample\", \"pattern\": \"spherulite\", \"retardance\": 1.0, \"radius\": 3}",
    "{\"type\": \"phase-retarder\", \"angle\": 0.4, \"retardance\": 1.3},"
    " {\"type\": \"half-wave-plate\", \"angle\": 0.1}, {\"type\": \"quarter-wave-plate\", \"angle\": 0.7}",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (retarders); i++)
    {
      double p = plane_power (0.35, 0.9, retarders[i]);

      g_test_message ("%s: power %.9f", retarders[i], p);
      g_assert_cmpfloat_with_epsilon (p, 1.0, 1e-6);
    }
}

static void
test_sample_between_crossed (void)
{
  static const double theta[] = { 0.0, 0.3, G_PI / 4, 1.0 }, eta[] = { 0.5, G_PI, 2.2 };
  guint t, e;

  /* a retarder between crossed polarisers passes sin²(2θ)·sin²(η/2), the
   * retardance η·λ_c/λ at λ (λ_c the first wavelength, 0.5 µm; 0.6 µm the
   * other, the weights ½ each) */
  for (t = 0; t < G_N_ELEMENTS (theta); t++)
    for (e = 0; e < G_N_ELEMENTS (eta); e++)
      {
        g_autofree char *chain = g_strdup_printf (
          "{\"type\": \"linear-polarizer\", \"angle\": 0},"
          " {\"type\": \"jones-sample\", \"orientation\": %.17g, \"retardance\": %.17g},"
          " {\"type\": \"linear-polarizer\", \"angle\": 1.5707963267948966}", theta[t], eta[e]);
        double expected = 0.5 * pow (sin (2 * theta[t]) * sin (eta[e] / 2), 2)
                          + 0.5 * pow (sin (2 * theta[t]) * sin (eta[e] * 0.5 / 0.6 / 2), 2);

        g_assert_cmpfloat_with_epsilon (plane_power (0.0, 0.0, chain), expected, 1e-6);
      }
}

/* chromatix's jones_sample: J_pq = e^{i 2π (dn_pq + i·absorption_pq)·t/λ};
 * the power of J·e for the source vector e, summed over the wavelengths */
static void
test_sample_components (void)
{
  static const double dn[4] = { 0.1, 0.02, -0.05, 0.3 }, ab[4] = { 0.01, 0.2, 0.05, 0.03 };
  static const double lambda[2] = { 0.5, 0.6 };
  double theta = 0.4, beta = 0.7, t = 1.3, expected = 0.0;
  double complex e[2] = { cos (theta), sin (theta) * cexp (I * beta) };
  g_autofree char *chain = g_strdup_printf (
    "{\"type\": \"jones-sample\", \"pattern\": \"components\", \"dn\": [%g, %g, %g, %g],"
    " \"absorption\": [%g, %g, %g, %g], \"thickness\": %g}",
    dn[0], dn[1], dn[2], dn[3], ab[0], ab[1], ab[2], ab[3], t);
  guint l, r;

  for (l = 0; l < 2; l++)
    for (r = 0; r < 2; r++)
      {
        double complex j0 = cexp (I * 2 * G_PI * (dn[2 * r] + I * ab[2 * r]) * t / lambda[l]);
        double complex j1 = cexp (I * 2 * G_PI * (dn[2 * r + 1] + I * ab[2 * r + 1]) * t / lambda[l]);
        double complex out = j0 * e[0] + j1 * e[1];

        expected += 0.5 * creal (out * conj (out));
      }
  g_test_message ("components: expected power %.9f", expected);
  g_assert_cmpfloat_with_epsilon (plane_power (theta, beta, chain), expected, 1e-6 * expected);
}

static void
test_sample_map (void)
{
  /* a map of one orientation and retardance per pixel: each pixel passes
   * its own sin²(2θ)·sin²(η/2) between crossed polarisers (η·λ_c/λ at
   * 0.6 µm), a plane wave's |u|² = 1/(N·dx·dy) of the power each */
  GString *th = g_string_new (NULL), *et = g_string_new (NULL);
  g_autofree char *chain = NULL;
  double expected = 0.0;
  guint i;

  for (i = 0; i < 24 * 20; i++)
    {
      double t = 0.01 * i, e = 0.5 + 0.003 * i;

      g_string_append_printf (th, "%s%.17g", i ? ", " : "", t);
      g_string_append_printf (et, "%s%.17g", i ? ", " : "", e);
      expected += (0.5 * pow (sin (2 * t) * sin (e / 2), 2) + 0.5 * pow (sin (2 * t) * sin (e * 0.5 / 0.6 / 2), 2))
                  / (24 * 20);
    }
  chain = g_strdup_printf ("{\"type\": \"linear-polarizer\", \"angle\": 0},"
                           " {\"type\": \"jones-sample\", \"pattern\": \"map\", \"orientation-map\": [%s],"
                           " \"retardance-map\": [%s]}, {\"type\": \"linear-polarizer\", \"angle\": 1.5707963267948966}",
                           th->str, et->str);
  g_string_free (th, TRUE);
  g_string_free (et, TRUE);
  g_test_message ("map: expected %.9f", expected);
  g_assert_cmpfloat_with_epsilon (plane_power (0.0, 0.0, chain), expected, 1e-6);
}

static void
test_universal_compensator (void)
{
  /* LP(0), then retarders at −45° (π/2) and 0° (π): the LC-PolScope's
   * circular state, |V| = 1; with no retardance at −45° it leaves x
   * light, all of it through a polariser along x */
  double v = stokes_v (0.0, 0.0, "{\"type\": \"universal-compensator\", \"retardance-45\": 1.5707963267948966,"
                                 " \"retardance-0\": 3.141592653589793}");
  double x = plane_power (0.0, 0.0, "{\"type\": \"universal-compensator\", \"retardance-45\": 0, \"retardance-0\": 1.0},"
                                    " {\"type\": \"linear-polarizer\", \"angle\": 0}");
  /* the polariser inside: light along y does not pass */
  double y = plane_power (G_PI / 2, 0.0, "{\"type\": \"universal-compensator\"}");

  g_assert_cmpfloat_with_epsilon (fabs (v), 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (x, 1.0, 1e-6);
  g_assert_cmpfloat (y, <, 1e-12);
}

/* the system is refused at its check, with a message that starts so */
static void
expect_refused (const char *json, const char *prefix)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_data (json, -1, NULL, "sys.json", &error);

  if (system != NULL)
    g_assert_false (airy_system_validate (system, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, prefix));
}

static void
test_scalar_refused (void)
{
  /* a polarisation element on a scalar field names itself */
  test_expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 1.0},"
                     " \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"linear-polarizer\"}]}",
                     AIRY_ERROR_INVALID_VALUE,
                     "elements[1] (linear-polarizer): needs a vectorial field, got a scalar one: a polarisation "
                     "element acts on Ex and Ey; give the source \"field\": \"vectorial\" (a plane wave, point "
                     "source or Gaussian beam with a Jones vector)");
  expect_refused (
    "{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"gaussian-beam\", \"field\": \"scalar\"}, {\"type\": \"jones-sample\"}]}",
    "elements[1] (jones-sample): needs a vectorial field");
  expect_refused (
    "{\"airy\": 1, \"grid\": {\"shape\": [4, 4], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\", \"field\": \"vectorial\"},"
    " {\"type\": \"jones-sample\", \"pattern\": \"components\", \"dn\": [0, 1]}]}",
    "elements[1].dn: needs 4 values (xx, xy, yx, yy), got 2");
  expect_refused (
    "{\"airy\": 1, \"grid\": {\"shape\": [4, 4], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\", \"field\": \"vectorial\"},"
    " {\"type\": \"jones-sample\", \"pattern\": \"map\", \"orientation-map\": [0, 1], \"retardance-map\": [1]}]}",
    "elements[1].orientation-map, retardance-map: need 4 × 4 = 16 values each (the grid, row by row), got 2 and 1");
}

/* The preset: a spherulite of retardance π between crossed polarisers
 * passes sin²(2φ) of the plane wave's |u|² = 1/(N²·dx·dy) at azimuth φ
 * inside the disk (the Maltese cross), nothing on the axes, nothing
 * outside the disk */
static void
test_preset (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_preset ("polarization-microscope", &error);
  g_autoptr(AiryResult) result = NULL;
  static const int at[][2] = { { 20, 20 }, { -30, 30 }, { 40, 0 }, { 0, -50 }, { 10, 25 }, { 90, 30 } };
  double unit = 1.0 / (256.0 * 256.0 * 0.25 * 0.25);
  guint i;

  g_assert_no_error (error);
  result = test_run (system, NULL);
  g_assert_cmpuint (result->stack->width, ==, 256);
  for (i = 0; i < G_N_ELEMENTS (at); i++)
    {
      double x = at[i][0] * 0.25, y = at[i][1] * 0.25, phi = atan2 (y, x);
      double expected = hypot (x, y) <= 24.0 ? unit * pow (sin (2 * phi), 2) : 0.0;
      float got = result->stack->data[(gsize) (128 + at[i][1]) * 256 + 128 + at[i][0]];

      g_test_message ("(%d, %d): %.9g, expected %.9g", at[i][0], at[i][1], got, expected);
      g_assert_cmpfloat_with_epsilon (got, expected, 1e-6 * unit);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/polarization/source-power", test_source_power);
  g_test_add_func ("/polarization/malus", test_malus);
  g_test_add_func ("/polarization/malus-point-source", test_malus_point_source);
  g_test_add_func ("/polarization/crossed", test_crossed);
  g_test_add_func ("/polarization/circular", test_circular);
  g_test_add_func ("/polarization/quarter-wave", test_quarter_wave);
  g_test_add_func ("/polarization/half-wave", test_half_wave);
  g_test_add_func ("/polarization/lossless", test_lossless);
  g_test_add_func ("/polarization/sample-between-crossed", test_sample_between_crossed);
  g_test_add_func ("/polarization/sample-components", test_sample_components);
  g_test_add_func ("/polarization/sample-map", test_sample_map);
  g_test_add_func ("/polarization/universal-compensator", test_universal_compensator);
  g_test_add_func ("/polarization/scalar-refused", test_scalar_refused);
  g_test_add_func ("/polarization/preset", test_preset);
  return g_test_run ();
}

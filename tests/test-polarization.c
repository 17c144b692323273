/* Jones calculus on vectorial fields: Malus's law, crossed polarisers,
 * a quarter-wave plate's circular light, a half-wave plate's rotation,
 * energy through lossless retarders, and a polariser on a scalar field. */
#include "airy-test-util.h"

/* Σ I of a 16² plane wave (power 1) with Jones angle a through `chain` */
static double
transmitted (double a, double beta, const char *chain)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 1.0},"
    " \"spectrum\": {\"wavelengths\": [0.5]}, \"z\": {\"start\": 0, \"stop\": 0, \"count\": 1},"
    " \"elements\": [{\"type\": \"plane-wave\", \"field\": \"vectorial\", \"jones-angle\": %.17g,"
    " \"jones-phase\": %.17g}%s]}", a, beta, chain);
  g_autoptr(AirySystem) system = test_system (json);
  AiryRunOptions options = { 0 };
  g_autoptr(AiryResult) r = test_run (system, &options);

  return plane_sum (r->stack->data, airy_stack_plane_size (r->stack));
}

static void
test_malus (void)
{
  const double angles[] = { 0.0, 0.3, 0.7, 1.2, G_PI / 2 };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (angles); i++)
    {
      g_autofree char *chain = g_strdup_printf (", {\"type\": \"linear-polarizer\", \"angle\": %.17g}", angles[i]);
      double c = cos (angles[i] - 0.2);

      g_assert_cmpfloat_with_epsilon (transmitted (0.2, 0.0, chain), c * c, 1e-6);
    }
  /* crossed */
  g_assert_cmpfloat_with_epsilon (transmitted (0.0, 0.0, ", {\"type\": \"linear-polarizer\", \"angle\": 0},"
                                                        " {\"type\": \"linear-polarizer\", \"angle\": 1.5707963267948966}"),
                                  0.0, 1e-9);
}

static void
test_wave_plates (void)
{
  /* QWP at 0 of linear at 45°: circular, half through either circular polariser's
   * wrong hand is 0 and the right hand 1 (Stokes V = ±1) */
  double l = transmitted (G_PI / 4, 0, ", {\"type\": \"quarter-wave-plate\", \"angle\": 0},"
                                         " {\"type\": \"circular-polarizer\", \"handedness\": \"left\"}");
  double r = transmitted (G_PI / 4, 0, ", {\"type\": \"quarter-wave-plate\", \"angle\": 0},"
                                         " {\"type\": \"circular-polarizer\", \"handedness\": \"right\"}");

  g_assert_cmpfloat_with_epsilon (fabs (l - r), 1.0, 1e-6);
  /* HWP at θ rotates linear x by 2θ: a polariser at 2θ passes all */
  g_assert_cmpfloat_with_epsilon (transmitted (0, 0, ", {\"type\": \"half-wave-plate\", \"angle\": 0.3},"
                                                     " {\"type\": \"linear-polarizer\", \"angle\": 0.6}"), 1.0, 1e-6);
  /* lossless retarders conserve power */
  g_assert_cmpfloat_with_epsilon (transmitted (0.4, 0.9, ", {\"type\": \"phase-retarder\", \"angle\": 0.3,"
                                                         " \"retardance\": 1.1, \"circularity\": 0.5},"
                                                         " {\"type\": \"jones-sample\", \"pattern\": \"spherulite\", \"radius\": 5}"),
                                  1.0, 1e-6);
}

static void
test_scalar_refused (void)
{
  test_expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [16, 16], \"spacing\": 1.0},"
                     " \"spectrum\": {\"wavelengths\": [0.5]}, \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"linear-polarizer\"}]}",
                     AIRY_ERROR_INVALID_VALUE,
                     "elements[1] (linear-polarizer): needs a vectorial field, got a scalar one: a polarisation "
                     "element acts on Ex and Ey; give the source \"field\": \"vectorial\" (a plane wave, point "
                     "source or Gaussian beam with a Jones vector)");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/polarization/malus", test_malus);
  g_test_add_func ("/polarization/wave-plates", test_wave_plates);
  g_test_add_func ("/polarization/scalar-refused", test_scalar_refused);
  return g_test_run ();
}

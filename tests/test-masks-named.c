/* Named phase masks from chromatix's initializers: the circular phase is a
 * lens (a quadratic phase focuses as a thin lens does), and the potato chip
 * without its depth term is a vortex of charge C0. */
#include "config.h"

#include "airy-test-util.h"

#define HEAD "{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 0.5}," \
             " \"spectrum\": {\"wavelengths\": [0.532]}, \"elements\": [" \
             "{\"type\": \"plane-wave\", \"n\": 1.0}, {\"type\": \"circular-pupil\", \"diameter\": 40}, %s]}"

static AiryResult *
run_chain (const char *tail)
{
  g_autofree char *json = g_strdup_printf (HEAD, tail);
  g_autoptr (AirySystem) system = test_system (json);

  return test_run (system, NULL);
}

/* largest |a − b| over the peak of a */
static double
difference (const AiryResult *a, const AiryResult *b, double *peak_out)
{
  const float *pa = airy_stack_plane (a->stack, 0), *pb = airy_stack_plane (b->stack, 0);
  gsize n = (gsize) a->stack->height * a->stack->width, i;
  double peak = 0.0, worst = 0.0;

  g_assert_cmpuint (b->stack->height * b->stack->width, ==, n);
  for (i = 0; i < n; i++)
    {
      peak = MAX (peak, pa[i]);
      worst = MAX (worst, fabs (pa[i] - pb[i]));
    }
  g_assert_cmpfloat (peak, >, 0.0);
  if (peak_out)
    *peak_out = peak;
  return worst / peak;
}

/* φ = s·ρ² on the unit pupil R is the thin lens −π r²/(λf) of f = −πR²/(λs):
 * both focus the plane wave at z = f, where the axis holds I₀·(πR²/(λf))² =
 * I₀·s² (Fresnel: the aperture's area over λf, squared; I₀ = 1/(N·dx)² the
 * unit-power plane wave's intensity). */
static void
test_circular_is_lens (void)
{
  double s = -6.0, R = 20.0, lambda = 0.532, f = -G_PI * R * R / (lambda * s), with_peak, plain_peak;
  g_autofree char *mask = g_strdup_printf ("{\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"circular\","
                                           " \"strength\": %g, \"pupil-radius\": %g},"
                                           " {\"type\": \"propagate\", \"z\": %.17g, \"pad\": 64}", s, R, f);
  g_autofree char *lens = g_strdup_printf ("{\"type\": \"thin-lens\", \"f\": %.17g},"
                                           " {\"type\": \"propagate\", \"z\": %.17g, \"pad\": 64}", f, f);
  g_autofree char *none = g_strdup_printf ("{\"type\": \"propagate\", \"z\": %.17g, \"pad\": 64}", f);
  g_autoptr (AiryResult) a = run_chain (mask);
  g_autoptr (AiryResult) b = run_chain (lens);
  g_autoptr (AiryResult) c = run_chain (none);
  double d = difference (a, b, &with_peak);

  difference (c, c, &plain_peak);
  g_test_message ("circular phase s = %g over R = %g µm against a thin lens of f = %.4g µm: %.3g of the peak; "
                  "focal peak %.4g (I₀·s² = %.4g), without the mask %.4g", s, R, f, d, with_peak,
                  s * s / (64.0 * 64.0), plain_peak);
  g_assert_cmpfloat (d, <=, 1e-5);
  g_assert_cmpfloat (fabs (with_peak / (s * s / (64.0 * 64.0)) - 1.0), <, 0.02);
  g_assert_cmpfloat (with_peak, >, 10.0 * plain_peak);
}

/* the potato chip with d = 0 is θ·C0: a vortex of charge C0 (its unit pupil
 * a little larger than the aperture: the chip is 0 from ρ = 1 on) */
static void
test_potato_chip_vortex (void)
{
  g_autoptr (AiryResult) a = run_chain ("{\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"potato-chip\","
                                        " \"chip-depth\": 0, \"chip-c0\": 3, \"pupil-radius\": 21},"
                                        " {\"type\": \"ff-lens\", \"f\": 1000}");
  g_autoptr (AiryResult) b = run_chain ("{\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"vortex\","
                                        " \"strength\": 3, \"pupil-radius\": 21}, {\"type\": \"ff-lens\", \"f\": 1000}");
  g_autoptr (AiryResult) c = run_chain ("{\"type\": \"ff-lens\", \"f\": 1000}");
  const float *pa = airy_stack_plane (a->stack, 0), *pc = airy_stack_plane (c->stack, 0);
  gsize axis = (gsize) 64 * 128 + 64;
  double d = difference (a, b, NULL);

  g_test_message ("potato chip (d = 0, C0 = 3) against a vortex of charge 3: %.3g of the peak; axis %.3g of "
                  "the open pupil's", d, pa[axis] / pc[axis]);
  g_assert_cmpfloat (d, <=, 1e-5);
  /* a charge-3 vortex leaves a dark axis */
  g_assert_cmpfloat (pa[axis], <, 1e-4 * pc[axis]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/masks/circular-is-lens", test_circular_is_lens);
  g_test_add_func ("/masks/potato-chip-vortex", test_potato_chip_vortex);
  return g_test_run ();
}

/* chromatix's tapered pupils (super-gaussian-pupil, tukey-pupil) on a plane
 * wave against their closed forms, pixel by pixel: the plane wave of power
 * 1 on N² pixels of d µm has I0 = 1/(N·d)², so I = I0·mask². */
#include "config.h"

#include "airy-test-util.h"

/* I/I0 after a plane wave and the element, h × w pixels of d µm, λ 0.5 */
static AiryResult *
after (guint h, guint w, double d, const char *element)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"plane-wave\"}, %s]}", h, w, d, element);
  g_autoptr(AirySystem) system = test_system (json);

  return test_run (system, NULL);
}

static void
test_super_gaussian (void)
{
  /* e^{−(r/w)^n}: order 2 is the Gaussian pupil of waist w; at r = w the
   * amplitude is 1/e whatever the order */
  g_autoptr(AiryResult) a = after (32, 32, 1.0, "{\"type\": \"super-gaussian-pupil\", \"width\": 6, \"order\": 2}");
  g_autoptr(AiryResult) b = after (32, 32, 1.0, "{\"type\": \"gaussian-pupil\", \"waist\": 6}");
  g_autoptr(AiryResult) c = after (32, 32, 1.0, "{\"type\": \"super-gaussian-pupil\", \"width\": 6, \"order\": 9.5}");
  double i0 = 1.0 / (32.0 * 32.0);
  guint i;

  for (i = 0; i < 32 * 32; i++)
    g_assert_cmpfloat (fabs (a->stack->data[i] - b->stack->data[i]), <=, 1e-6 * i0);
  /* pixel (16, 22): r = 6 µm */
  g_assert_cmpfloat_with_epsilon (c->stack->data[16 * 32 + 22] / i0, exp (-2.0), 1e-6);
  g_assert_cmpfloat_with_epsilon (c->stack->data[16 * 32 + 16] / i0, 1.0, 1e-6);
  /* r = 4 (pixel 16, 20): e^{−2·(4/6)^9.5} */
  g_assert_cmpfloat_with_epsilon (c->stack->data[16 * 32 + 20] / i0, exp (-2.0 * pow (4.0 / 6.0, 9.5)), 1e-6);
}

static void
test_tukey (void)
{
  /* 40 × 64 pixels of 0.5 µm: extents 20 and 32 µm, width 12 µm: α = 12/32,
   * flat to ρ = α/2 (6 µm along x, 3.75 µm along y), 0 at the grid's edge */
  g_autoptr(AiryResult) r = after (40, 64, 0.5, "{\"type\": \"tukey-pupil\", \"width\": 12}");
  double i0 = 1.0 / (40 * 0.5 * 64 * 0.5), alpha = 12.0 / 32.0;
  guint y, x;

  for (y = 0; y < 40; y++)
    for (x = 0; x < 64; x++)
      {
        double yy = ((int) y - 20) * 0.5 / 20.0, xx = ((int) x - 32) * 0.5 / 32.0;
        double rho = MIN (sqrt (xx * xx + yy * yy), 0.5), m;

        m = rho <= alpha / 2 ? 1.0 : 0.5 * (1 + cos (2 * G_PI / (1 - alpha) * (rho - alpha / 2)));
        g_assert_cmpfloat (fabs (r->stack->data[y * 64 + x] / i0 - m * m), <, 1e-6);
      }
  /* the flat part and the edge */
  g_assert_cmpfloat_with_epsilon (r->stack->data[20 * 64 + 32 + 12] / i0, 1.0, 1e-6);
  g_assert_cmpfloat (r->stack->data[0] / i0, <, 1e-12);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/profiles/super-gaussian-pupil", test_super_gaussian);
  g_test_add_func ("/profiles/tukey-pupil", test_tukey);
  return g_test_run ();
}

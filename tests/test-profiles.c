/* chromatix's tapered pupils (super-gaussian-pupil, tukey-pupil) on a plane
 * wave against their closed forms, pixel by pixel (the plane wave of power
 * 1 on N² pixels of d µm has I0 = 1/(N·d)², so I = I0·mask²), the Seidel
 * phase mask's distortion term as the spot's shift, and the sinusoid
 * grating's orders (J_q(m)²). */
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

/* the PSF's brightest pixel with a Seidel mask, as offsets from the axis */
static void
seidel_peak (const char *coefficients, double u, double v, int *dy, int *dx)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 2.0}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.0, \"na\": 0.5},"
    " {\"type\": \"phase-mask\", \"source\": \"seidel\", \"seidel-coefficients\": [%s], \"field-u\": %g,"
    " \"field-v\": %g}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.0}]}", coefficients, u, v);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) r = test_run (system, NULL);
  gsize at = 0;

  plane_max (r->stack->data, 64 * 64, &at);
  *dy = (int) (at / 64) - 32;
  *dx = (int) (at % 64) - 32;
}

static void
test_seidel (void)
{
  /* distortion W311·h³·X is a tilt 2π W311 h³ x/R: the spot moves by
   * λ f W311 h³/(n R), W311·N·dx/R pixels of f λ/(n N dx); W311 = 5·R/(N·dx)
   * = 1.953125 waves: 5 pixels, along the field point's direction (X turns
   * towards it); at h = ½ by h³ of it; on axis distortion does nothing */
  int dy, dx;

  seidel_peak ("0, 0, 0, 0, 1.953125", 1.0, 0.0, &dy, &dx);
  g_assert_cmpint (dy, ==, 0);
  g_assert_cmpint (dx, ==, 5);
  seidel_peak ("0, 0, 0, 0, 1.953125", 0.0, -1.0, &dy, &dx);
  g_assert_cmpint (dy, ==, -5);
  g_assert_cmpint (dx, ==, 0);
  seidel_peak ("0, 0, 0, 0, 15.625", 0.0, 0.5, &dy, &dx);
  g_assert_cmpint (dy, ==, 5);
  g_assert_cmpint (dx, ==, 0);
  seidel_peak ("0, 0, 0, 0, 15.625", 0.0, 0.0, &dy, &dx);
  g_assert_cmpint (dy, ==, 0);
  g_assert_cmpint (dx, ==, 0);
}

static void
test_seidel_bad_input (void)
{
  test_expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [8, 8], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
                     " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"phase-mask\", \"source\": \"seidel\","
                     " \"seidel-coefficients\": [0.1, 0.2]}]}", AIRY_ERROR_INVALID_VALUE,
                     "elements[1].seidel-coefficients: needs 5 values (W040, W131, W222, W220, W311 in waves), got 2");
  test_expect_error ("{\"airy\": 1, \"grid\": {\"shape\": [8, 8], \"spacing\": 1}, \"spectrum\": {\"wavelengths\": [0.5]},"
                     " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"phase-mask\", \"source\": \"seidel\","
                     " \"seidel-coefficients\": [0, 0, 0, 0, 0], \"field-u\": 1.5}]}", AIRY_ERROR_INVALID_VALUE,
                     "elements[1].field-u: must be in [-1, 1], got 1.5");
}

static void
test_sinusoid (void)
{
  /* a phase grating m·sin(2πx/p) sends J_q(m)² of the power into order q:
   * 4 whole periods on the grid, so each order is one pixel of the FF
   * lens's output, 4q pixels off the axis (also along y for θ = π/2) */
  static const double theta[] = { 0.0, G_PI / 2 };
  double m = 1.3;
  guint t;
  int q;

  for (t = 0; t < G_N_ELEMENTS (theta); t++)
    {
      g_autofree char *el = g_strdup_printf ("{\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"sinusoid\","
                                             " \"strength\": %g, \"period\": 16, \"angle\": %.17g},"
                                             " {\"type\": \"ff-lens\", \"f\": 1000}", m, theta[t]);
      g_autoptr(AiryResult) r = after (64, 64, 1.0, el);
      double total = plane_sum (r->stack->data, 64 * 64);

      for (q = -3; q <= 3; q++)
        {
          guint y = t == 0 ? 32 : 32 + 4 * q, x = t == 0 ? 32 + 4 * q : 32;
          double got = r->stack->data[y * 64 + x] / total, want = jn (q, m) * jn (q, m);

          g_test_message ("order %d: %.7f of the power, J_%d(%g)² = %.7f", q, got, q, m, want);
          g_assert_cmpfloat (fabs (got - want), <, 1e-5);
        }
    }
}

static void
test_spectral_modulation (void)
{
  /* the same grating at λ 0.5 and 0.6 (weights ½): modulated, its
   * amplitude at 0.6 is m·0.5/0.6; unmodulated m at both. Each
   * wavelength's orders fall on the same pixels (4q off the axis), each
   * plane sums to 1/du_l² (du_l = f·λ_l/(N·dx)) */
  static const gboolean modulate[] = { TRUE, FALSE };
  double m = 1.3;
  guint t;
  int q;

  for (t = 0; t < 2; t++)
    {
      g_autofree char *json = g_strdup_printf (
        "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0},"
        " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [0.5, 0.5]},"
        " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"phase-mask\", \"source\": \"named\","
        " \"named\": \"sinusoid\", \"strength\": %g, \"period\": 16, \"spectral-modulation\": %s},"
        " {\"type\": \"ff-lens\", \"f\": 1000}]}", m, modulate[t] ? "true" : "false");
      g_autoptr(AirySystem) system = test_system (json);
      g_autoptr(AiryResult) r = test_run (system, NULL);
      double total = plane_sum (r->stack->data, 64 * 64);
      double w0 = 1.0 / (0.5 * 0.5), w1 = 1.0 / (0.6 * 0.6);  /* 1/du² up to a common factor */
      double m1 = modulate[t] ? m * 0.5 / 0.6 : m;

      for (q = -3; q <= 3; q++)
        {
          double want = (w0 * jn (q, m) * jn (q, m) + w1 * jn (q, m1) * jn (q, m1)) / (w0 + w1);
          double got = r->stack->data[32 * 64 + 32 + 4 * q] / total;

          g_test_message ("%s, order %d: %.7f, expected %.7f", modulate[t] ? "modulated" : "unmodulated", q, got, want);
          g_assert_cmpfloat (fabs (got - want), <, 1e-5);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/profiles/super-gaussian-pupil", test_super_gaussian);
  g_test_add_func ("/profiles/tukey-pupil", test_tukey);
  g_test_add_func ("/profiles/seidel", test_seidel);
  g_test_add_func ("/profiles/sinusoid-grating", test_sinusoid);
  g_test_add_func ("/profiles/spectral-modulation", test_spectral_modulation);
  g_test_add_func ("/profiles/seidel-bad-input", test_seidel_bad_input);
  return g_test_run ();
}

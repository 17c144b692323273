/* Masks from chromatix's library: the circular phase is a lens (a quadratic
 * phase focuses as a thin lens does), the potato chip without its depth term
 * is a vortex of charge C0, and a binarized grey mask is the aperture its
 * threshold draws. */
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

/* A float TIFF in [0, 1] (its min and max present): above 0.5 inside the
 * 17 × 17 square about the axis, under it outside. Binarized it is that
 * square, a square-pupil 17 pixels wide. */
static void
test_binarize_square (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-binarize-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "grey.tif", NULL);
  g_autoptr (GError) error = NULL;
  AiryStack *grey = airy_stack_new (1, 128, 128);
  g_autofree char *binary = NULL, *raw = NULL;
  g_autoptr (AiryResult) a = NULL, b = NULL, c = NULL;
  double d_binary, d_raw;
  guint y, x;

  for (y = 0; y < 128; y++)
    for (x = 0; x < 128; x++)
      {
        gboolean inside = abs ((int) y - 64) <= 8 && abs ((int) x - 64) <= 8;
        double t = ((y * 131 + x * 71) % 97) / 96.0;  /* 0 … 1 */

        grey->data[y * 128 + x] = inside ? 0.6f + 0.4f * (float) t : 0.4f * (float) t;
      }
  grey->data[0] = 0.0f;
  grey->data[1] = 1.0f;
  g_assert_true (airy_image_write (path, grey, NULL, &error));
  g_assert_no_error (error);
  airy_stack_free (grey);
  binary = g_strdup_printf ("{\"type\": \"amplitude-mask\", \"file\": \"%s\", \"binarize\": true},"
                            " {\"type\": \"ff-lens\", \"f\": 1000}", path);
  raw = g_strdup_printf ("{\"type\": \"amplitude-mask\", \"file\": \"%s\"}, {\"type\": \"ff-lens\", \"f\": 1000}",
                         path);
  a = run_chain (binary);
  b = run_chain ("{\"type\": \"square-pupil\", \"width\": 8.5}, {\"type\": \"ff-lens\", \"f\": 1000}");
  c = run_chain (raw);
  d_binary = difference (a, b, NULL);
  d_raw = difference (c, b, NULL);
  g_test_message ("binarized grey mask against the 17-pixel square: %.3g of the peak (not binarized: %.3g)",
                  d_binary, d_raw);
  g_assert_cmpfloat (d_binary, <=, 1e-6);
  g_assert_cmpfloat (d_raw, >, 0.1);
  g_unlink (path);
  g_rmdir (dir);
}

/* The Gaussian filter of one lit pixel is the normalised kernel: its
 * amplitudes sum to the pixel's (a = 1/(N·dx), the unit-power plane wave),
 * their second moment along x is σ² (up to the 4σ truncation), and the high
 * pass of a uniform field is 0 wherever the kernel lies inside the grid. */
static void
test_filter_moments (void)
{
  const double sigma = 2.5, a = 1.0 / (64.0 * 0.5);
  g_autofree char *one = g_strdup_printf ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5},"
                                          " \"spectrum\": {\"wavelengths\": [0.532]}, \"elements\": ["
                                          "{\"type\": \"plane-wave\"}, {\"type\": \"square-pupil\", \"width\": 0.25},"
                                          " {\"type\": \"field-filter\", \"sigma\": %g}]}", sigma);
  g_autofree char *flat = g_strdup_printf ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5},"
                                           " \"spectrum\": {\"wavelengths\": [0.532]}, \"elements\": ["
                                           "{\"type\": \"plane-wave\"}, {\"type\": \"field-filter\", \"sigma\": %g,"
                                           " \"high-pass\": true}]}", sigma);
  g_autoptr (AirySystem) s1 = test_system (one);
  g_autoptr (AirySystem) s2 = test_system (flat);
  g_autoptr (AiryResult) r1 = test_run (s1, NULL);
  g_autoptr (AiryResult) r2 = test_run (s2, NULL);
  const float *p1 = airy_stack_plane (r1->stack, 0), *p2 = airy_stack_plane (r2->stack, 0);
  int r = (int) (4.0 * sigma + 0.5), y, x;
  double sum = 0.0, m2 = 0.0, worst = 0.0, truncated = 0.0, norm = 0.0;

  for (y = 0; y < 64; y++)
    for (x = 0; x < 64; x++)
      {
        double amp = sqrt (p1[y * 64 + x]);

        sum += amp;
        m2 += amp * (x - 32) * (x - 32);
        if (y >= r && y < 64 - r && x >= r && x < 64 - r)
          worst = MAX (worst, sqrt (p2[y * 64 + x]));
      }
  /* the truncated kernel's own second moment */
  for (x = -r; x <= r; x++)
    {
      double k = exp (-0.5 * x * x / (sigma * sigma));

      truncated += k * x * x;
      norm += k;
    }
  g_test_message ("σ = %g px: Σ amplitude %.6g (a = %.6g), second moment %.6g px² (σ² = %.4g, truncated %.6g); "
                  "high pass of a flat field inside: %.3g of a", sigma, sum, a, m2 / sum, sigma * sigma,
                  truncated / norm, worst / a);
  g_assert_cmpfloat (fabs (sum / a - 1.0), <, 1e-5);
  g_assert_cmpfloat (fabs (m2 / sum - truncated / norm), <, 1e-4);
  g_assert_cmpfloat (fabs (m2 / sum / (sigma * sigma) - 1.0), <, 1e-3);
  g_assert_cmpfloat (worst / a, <, 1e-5);
}

/* scale-and-bias on the uniform plane wave a = 1/(N·dx): the field is the
 * constant (a + b)·s, which the FF lens takes to its DC pixel alone,
 * |dx²/(λf)·N²·(a + b)·s|², and to 0 elsewhere. */
static void
test_scale_bias_dc (void)
{
  const double a = 1.0 / (64.0 * 0.5), b = 0.02, s = -1.5, c = 0.5 * 0.5 / (0.532 * 1000.0);
  g_autofree char *json = g_strdup_printf ("{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 0.5},"
                                           " \"spectrum\": {\"wavelengths\": [0.532]}, \"elements\": ["
                                           "{\"type\": \"plane-wave\"}, {\"type\": \"scale-and-bias\", \"scale\": %g,"
                                           " \"bias\": %g}, {\"type\": \"ff-lens\", \"f\": 1000}]}", s, b);
  g_autoptr (AirySystem) system = test_system (json);
  g_autoptr (AiryResult) r = test_run (system, NULL);
  const float *p = airy_stack_plane (r->stack, 0);
  double want = pow (c * 64.0 * 64.0 * (a + b) * s, 2.0), rest = 0.0;
  gsize i;

  for (i = 0; i < 64 * 64; i++)
    if (i != 32 * 64 + 32)
      rest = MAX (rest, p[i]);
  g_test_message ("scale-and-bias: DC %.6g (want %.6g), largest elsewhere %.3g of it", p[32 * 64 + 32], want,
                  rest / want);
  g_assert_cmpfloat (fabs (p[32 * 64 + 32] / want - 1.0), <, 1e-5);
  g_assert_cmpfloat (rest / want, <, 1e-6);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/masks/circular-is-lens", test_circular_is_lens);
  g_test_add_func ("/masks/potato-chip-vortex", test_potato_chip_vortex);
  g_test_add_func ("/masks/binarize-square", test_binarize_square);
  g_test_add_func ("/masks/filter-moments", test_filter_moments);
  g_test_add_func ("/masks/scale-bias-dc", test_scale_bias_dc);
  return g_test_run ();
}

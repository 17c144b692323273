/* The STED modality (engine/modalities/airy-modality-sted.c): the effective
 * PSF h_exc · exp(−ln 2 · ζ · I_dep/max I_dep) against Hell's resolution
 * law, the donut's zero with circular polarisation and its failure with
 * linear polarisation or the wrong vortex handedness, the top-hat's axial
 * zero, and bad input. */
#include "config.h"

#include "airy-test-util.h"
#include "airy-grad-private.h"

/* the modality's channels too (spectrum.channels, --channels) */
static const AiryRunOptions with_channels = { .per_wavelength = TRUE };

/* An oil objective (NA 1.4, n 1.518), vectorial and aplanatic, at the
 * usual STED pair λ_exc 0.64 / λ_dep 0.775 µm; the output pixel du (µm)
 * set through the pupil spacing f·λ_exc/(n·N·du); one plane at focus or
 * count planes over ±zmax. */
static AirySystem *
sted_system (guint n, double du, double saturation, const char *mask_extra, guint count, double zmax)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"modality\": \"sted\", \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
    " \"spectrum\": {\"wavelengths\": [0.64]}, \"z\": {\"start\": %g, \"stop\": %g, \"count\": %u},"
    " \"elements\": ["
    "  {\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.518, \"na\": 1.4, \"defocus-model\": \"nonparaxial\","
    "   \"apodisation\": \"aplanatic\", \"field\": \"vectorial\", \"polarization\": \"circular\"},"
    "  {\"type\": \"depletion-mask\", \"wavelength\": 0.775, \"saturation\": %g%s},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.518}]}",
    n, n, 100.0 * 0.64 / (1.518 * n * du), count > 1 ? -zmax : 0.0, count > 1 ? zmax : 0.0, count, saturation,
    mask_extra ? mask_extra : "");

  return test_system (json);
}

/* FWHM in pixels through pixel c of a profile of stride s, the half-maximum
 * crossings interpolated linearly (the effective PSF is not band-limited,
 * so no Fourier interpolation; the pixel resolves it) */
static double
linear_fwhm (const float *p, int n, int c, int s)
{
  double half = p[c * s] / 2.0, left, right;
  int i;

  for (i = c; i + 1 < n && p[(i + 1) * s] > half; i++)
    ;
  right = i + (p[i * s] - half) / (p[i * s] - p[(i + 1) * s]);
  for (i = c; i - 1 >= 0 && p[(i - 1) * s] > half; i--)
    ;
  left = i - (p[i * s] - half) / (p[i * s] - p[(i - 1) * s]);
  return right - left;
}

/* Hell's d ≈ λ/(2·NA·√(1 + ζ)), λ the depletion wavelength. What it
 * assumes: a diffraction-limited excitation spot of FWHM λ/(2NA) and a
 * donut rising as a parabola that reaches its crest at λ/(4NA); the shapes
 * are taken Gaussian and parabolic. At NA 1.4 with a vectorial, circularly
 * polarised excitation at 0.64 µm the spot is 0.564·λ_exc/NA = 0.93 of
 * λ_dep/(2NA), and the 0.775 µm donut's curvature is 0.95 of the
 * parabola's: the formula holds within 2–4 % for ζ from 1 to 50. (With
 * λ_exc = λ_dep the spot is 13 % wider than λ/(2NA) and ζ = 1 is 14 %
 * off: the law is about the depletion's wavelength.) A pixel of 4 nm
 * resolves the 28 nm FWHM at ζ = 50 with 7 pixels. */
static void
test_resolution (void)
{
  static const double zetas[] = { 1.0, 5.0, 20.0, 50.0 };
  guint n = 2048, k;
  double du = 0.004;

  for (k = 0; k < G_N_ELEMENTS (zetas); k++)
    {
      g_autoptr(AirySystem) system = sted_system (n, du, zetas[k], NULL, 1, 0.0);
      g_autoptr(AiryResult) result = test_run (system, &with_channels);
      const float *p = result->stack->data;
      double expect = 0.775 / (2.0 * 1.4 * sqrt (1.0 + zetas[k]));
      double dx = linear_fwhm (p + (gsize) (n / 2) * n, n, n / 2, 1) * result->stack->dx;
      double dy = linear_fwhm (p + n / 2, n, n / 2, n) * result->stack->dy;

      g_test_message ("ζ = %g: FWHM x %.4f µm, y %.4f µm, Hell %.4f µm (%+.1f %%)", zetas[k], dx, dy, expect,
                      100.0 * (dx / expect - 1.0));
      g_assert_cmpfloat_with_epsilon (result->stack->dx, du, 1e-9);
      g_assert_cmpfloat (fabs (dx / expect - 1.0), <, 0.05);
      g_assert_cmpfloat (fabs (dy / expect - 1.0), <, 0.05);
      /* effective, excitation, depletion */
      g_assert_cmpuint (result->n_channels, ==, 3);
      g_assert_cmpfloat (result->channels[0]->data[(gsize) (n / 2) * n + n / 2], ==, p[(gsize) (n / 2) * n + n / 2]);
      g_assert_cmpstr (result->channels[0]->channel_names[0], ==, "effective");
      g_assert_cmpstr (result->channels[1]->channel_names[0], ==, "excitation");
      g_assert_cmpstr (result->channels[2]->channel_names[0], ==, "depletion");
    }
}

/* The depletion channel's value on the axis over its maximum. */
static double
donut_zero (const char *mask_extra)
{
  guint n = 512;
  g_autoptr(AirySystem) system = sted_system (n, 0.01, 10.0, mask_extra, 1, 0.0);
  g_autoptr(AiryResult) result = test_run (system, &with_channels);
  AiryStack *dep = result->channels[2];
  float lo, hi;

  airy_stack_min_max (dep, &lo, &hi);
  return dep->data[(gsize) (n / 2) * n + n / 2] / hi;
}

/* With circular polarisation (x + iy)/√2 and a vortex exp(+iφ) every
 * component's azimuthal order at the axis is non-zero (E⊥ ~ e^{iφ},
 * e^{3iφ}; Ez ~ e^{2iφ}): a real zero. Linear x light keeps an Ez of order
 * 0, and the opposite vortex exp(−iφ) cancels the circular light's own
 * order: both fill the centre. */
static void
test_donut_zero (void)
{
  double circular = donut_zero (NULL);
  double linear = donut_zero (", \"polarization\": \"x\"");
  double wrong = donut_zero (", \"charge\": -1");

  g_test_message ("zero/max: circular %.3g, linear x %.3g, charge −1 %.3g", circular, linear, wrong);
  g_assert_cmpfloat (circular, <, 1e-3);
  g_assert_cmpfloat (linear, >, 0.1);
  g_assert_cmpfloat (wrong, >, 0.1);
}

/* The top-hat (π inside ρ < 1/√2): the depletion nearly vanishes at the
 * focus and has its maxima on the axis above and below it. 1/√2 halves a
 * uniform pupil's area, a zero of the scalar field; the aplanatic,
 * vectorial pupil weights its rim more, which leaves 0.2 % (a radius a
 * little above 1/√2 would zero it). */
static void
test_top_hat (void)
{
  guint n = 256, count = 21, k, centre = 10;
  g_autoptr(AirySystem) system = sted_system (n, 0.02, 10.0, ", \"mask\": \"top-hat\"", count, 0.8);
  g_autoptr(AiryResult) result = test_run (system, &with_channels);
  AiryStack *dep = result->channels[2];
  gsize axis = (gsize) (n / 2) * n + n / 2;
  float lo, hi, on_axis = 0.0f;

  airy_stack_min_max (dep, &lo, &hi);
  for (k = 0; k < count; k++)
    on_axis = MAX (on_axis, airy_stack_plane (dep, k)[axis]);
  g_test_message ("top-hat: focus %.3g, axis maximum %.3g of the stack's", airy_stack_plane (dep, centre)[axis] / hi,
                  on_axis / hi);
  g_assert_cmpfloat (airy_stack_plane (dep, centre)[axis] / hi, <, 5e-3);
  g_assert_cmpfloat (on_axis / hi, >, 0.3);
}

/* ζ = 0: the effective PSF is the excitation, which is the system without
 * the depletion-mask run as a PSF. */
static void
test_no_depletion (void)
{
  guint n = 128;
  g_autoptr(AirySystem) system = sted_system (n, 0.02, 0.0, NULL, 1, 0.0);
  g_autoptr(AirySystem) plain = airy_system_copy (system);
  g_autoptr(AiryResult) result = test_run (system, &with_channels);
  g_autoptr(AiryResult) psf = NULL;
  gsize i, np = (gsize) n * n;

  g_ptr_array_remove_index (airy_system_get_elements (plain), 1);
  airy_system_set_modality (plain, "psf");
  psf = test_run (plain, NULL);
  for (i = 0; i < np; i++)
    {
      g_assert_cmpfloat (result->stack->data[i], ==, psf->stack->data[i]);
      g_assert_cmpfloat (result->channels[1]->data[i], ==, psf->stack->data[i]);
    }
}

/* Without channels the result is the effective PSF alone, the same. */
static void
test_without_channels (void)
{
  g_autoptr(AirySystem) system = sted_system (128, 0.02, 20.0, NULL, 3, 0.3);
  g_autoptr(AiryResult) plain = test_run (system, NULL);
  g_autoptr(AiryResult) full = test_run (system, &with_channels);

  g_assert_cmpuint (plain->n_channels, ==, 0);
  g_assert_null (plain->channels);
  g_assert_cmpmem (plain->stack->data, (gsize) 3 * 128 * 128 * sizeof (float), full->stack->data,
                   (gsize) 3 * 128 * 128 * sizeof (float));
  g_assert_cmpmem (full->channels[0]->data, (gsize) 3 * 128 * 128 * sizeof (float), full->stack->data,
                   (gsize) 3 * 128 * 128 * sizeof (float));
}

static void
test_bad_input (void)
{
  test_expect_error ("{\"airy\": 1, \"modality\": \"sted\", \"grid\": {\"shape\": [64, 64], \"spacing\": 1},"
                     " \"spectrum\": {\"wavelengths\": [0.64]},"
                     " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"ff-lens\"}]}",
                     AIRY_ERROR_INVALID_VALUE,
                     "elements: sted needs a \"depletion-mask\" element (the depletion beam's mask, wavelength and "
                     "saturation)");
  test_expect_error ("{\"airy\": 1, \"modality\": \"sted\", \"grid\": {\"shape\": [64, 64], \"spacing\": 1},"
                     " \"spectrum\": {\"wavelengths\": [0.6, 0.64]},"
                     " \"elements\": [{\"type\": \"objective-point-source\"}, {\"type\": \"depletion-mask\"},"
                     " {\"type\": \"ff-lens\"}]}",
                     AIRY_ERROR_INVALID_VALUE, "spectrum.wavelengths: sted takes one excitation wavelength, got 2");
  test_expect_error ("{\"airy\": 1, \"modality\": \"sted\", \"grid\": {\"shape\": [64, 64], \"spacing\": 1},"
                     " \"spectrum\": {\"wavelengths\": [0.64]},"
                     " \"elements\": [{\"type\": \"objective-point-source\"},"
                     " {\"type\": \"depletion-mask\", \"saturation\": -1}, {\"type\": \"ff-lens\"}]}",
                     AIRY_ERROR_INVALID_VALUE, "elements[1].saturation: must be in [0, 10000], got -1");
  /* the gradient follows one chain's ops: not STED's two */
  {
    g_autoptr(AirySystem) system = sted_system (64, 0.02, 10.0, NULL, 1, 0.0);
    g_autoptr(GError) error = NULL;

    g_assert_null (_airy_grad_forward (system, 1, &error));
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    g_assert_cmpstr (error->message, ==,
                     "modality: the gradient follows one optical chain; sted combines several (take its chain in the psf modality)");
  }
}

static void
record_progress (guint done, guint total, gpointer user_data)
{
  GArray *seen = user_data;
  guint pair[2] = { done, total };

  g_array_append_vals (seen, pair, 2);
}

/* one progress over both beams: 2 × 3 planes count 0…6 of 6 */
static void
test_progress (void)
{
  g_autoptr(AirySystem) system = sted_system (64, 0.02, 10.0, NULL, 3, 0.3);
  g_autoptr(GArray) seen = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = airy_run (system, NULL, record_progress, seen, NULL, &error);
  guint i, last = 0;

  g_assert_no_error (error);
  g_assert_nonnull (result);
  g_assert_cmpuint (seen->len, >=, 4);
  for (i = 0; i < seen->len; i += 2)
    {
      g_assert_cmpuint (g_array_index (seen, guint, i + 1), ==, 6);
      g_assert_cmpuint (g_array_index (seen, guint, i), >=, last);
      last = g_array_index (seen, guint, i);
    }
  g_assert_cmpuint (last, ==, 6);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/sted/resolution", test_resolution);
  g_test_add_func ("/sted/donut-zero", test_donut_zero);
  g_test_add_func ("/sted/top-hat", test_top_hat);
  g_test_add_func ("/sted/no-depletion", test_no_depletion);
  g_test_add_func ("/sted/without-channels", test_without_channels);
  g_test_add_func ("/sted/progress", test_progress);
  g_test_add_func ("/sted/bad-input", test_bad_input);
  return g_test_run ();
}

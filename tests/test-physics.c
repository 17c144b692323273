/* Physics against analytic results (DESIGN §3, §7). */
#include "config.h"

#include "airy-test-util.h"
#include "airy-elements-private.h"
#include "airy-physics.h"

/* The seed widefield system with chosen z planes (and optionally NA). */
static AirySystem *
seed_widefield (const char *z_values)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [1536, 1536], \"spacing\": 0.3},"
    " \"spectrum\": {\"wavelengths\": [0.532]}, \"z\": {\"values\": [%s]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"phase-mask\", \"value\": 1.0}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}",
    z_values);
  return test_system (json);
}

/* Number of grid pixels inside the pupil r² ≤ R² (the pixelated pupil). */
static double
pupil_pixels (guint n, double dx, double radius)
{
  double count = 0;
  guint y, x;

  for (y = 0; y < n; y++)
    for (x = 0; x < n; x++)
      {
        double xx = airy_grid_coord (x, n, dx), yy = airy_grid_coord (y, n, dx);
        count += airy_inside_circle (xx * xx + yy * yy, radius);
      }
  return count;
}

static void
check_airy_disk (AiryStack *s, double lambda, double na, double n_medium, double f, guint n, double dx)
{
  guint c = n / 2;
  float *p = airy_stack_plane (s, 0);
  gsize where = 0;
  float peak = plane_max (p, (gsize) n * n, &where);
  double du = s->dx;
  double fwhm_x, fwhm_y, expected = 0.5145 * lambda / na;
  double m = pupil_pixels (n, dx, f * na / n_medium);
  double peak_pixelated = m * dx * dx * n_medium * n_medium / (lambda * f * lambda * f);
  double peak_analytic = G_PI * na * na / (lambda * lambda);
  g_autofree float *column = g_new (float, n);
  guint y;

  /* the peak sits on the optical axis, pixel ⌊N/2⌋ */
  g_assert_cmpuint (where, ==, (gsize) c * n + c);
  fwhm_x = profile_fwhm (p + (gsize) c * n, n, c) * du;
  for (y = 0; y < n; y++)
    column[y] = p[(gsize) y * n + c];
  fwhm_y = profile_fwhm (column, n, c) * du;
  g_test_message ("FWHM %.5f / %.5f µm, Airy %.5f µm; peak %.6g, pixelated %.6g, π·NA²/λ² %.6g",
                  fwhm_x, fwhm_y, expected, peak, peak_pixelated, peak_analytic);
  g_assert_cmpfloat_with_epsilon (fwhm_x / expected, 1.0, 0.005);
  g_assert_cmpfloat_with_epsilon (fwhm_y / expected, 1.0, 0.005);
  g_assert_cmpfloat_with_epsilon (peak / peak_pixelated, 1.0, 0.001);
  g_assert_cmpfloat_with_epsilon (peak / peak_analytic, 1.0, 0.01);
}

static void
test_airy_disk_seed (void)
{
  g_autoptr(AirySystem) system = seed_widefield ("0.0");
  g_autoptr(AiryResult) result = test_run (system, NULL);

  /* output spacing f·λ/(n·N·dx) */
  g_assert_cmpfloat_with_epsilon (result->stack->dx, 100 * 0.532 / (1.33 * 1536 * 0.3), 1e-12);
  check_airy_disk (result->stack, 0.532, 0.8, 1.33, 100, 1536, 0.3);
}

static void
test_airy_disk_odd_grid (void)
{
  /* odd N, another wavelength and NA, air */
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [1001, 1001], \"spacing\": 0.4},"
    " \"spectrum\": {\"wavelengths\": [0.64]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 200, \"n\": 1.0, \"na\": 0.5},"
    "  {\"type\": \"ff-lens\", \"f\": 200, \"n\": 1.0}]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);

  check_airy_disk (result->stack, 0.64, 0.5, 1.0, 200, 1001, 0.4);
}

static void
test_plane_power (void)
{
  g_autoptr(AirySystem) system = seed_widefield ("-4.0, -1.3, 0.0, 2.5");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  AiryStack *s = result->stack;
  guint z;

  /* Σ I du² = power = 1 on every plane (the FF lens conserves energy) */
  for (z = 0; z < s->depth; z++)
    {
      double total = plane_sum (airy_stack_plane (s, z), airy_stack_plane_size (s)) * s->dx * s->dy;
      g_assert_cmpfloat_with_epsilon (total, 1.0, 1e-5);
    }
}

static void
test_defocus_sinc (void)
{
  /* paraxial on-axis law I(z)/I(0) = sinc²(π z NA²/(2 n λ)) over |z| ≤ 4 µm */
  g_autoptr(AirySystem) system = seed_widefield ("0.0, -4.0, -3.0, -2.0, -1.0, -0.5, 0.5, 1.0, 1.7, 2.0, 3.0, 4.0");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  AiryStack *s = result->stack;
  gsize centre = (gsize) 768 * 1536 + 768;
  double i0 = airy_stack_plane (s, 0)[centre];
  guint k, nz;
  const double *z = airy_system_get_z (system, &nz);

  for (k = 1; k < nz; k++)
    {
      double expected = pow (sinc (G_PI * z[k] * 0.8 * 0.8 / (2 * 1.33 * 0.532)), 2);
      double got = airy_stack_plane (s, k)[centre] / i0;

      g_test_message ("z = %+.2f µm: %.6f, sinc² %.6f", z[k], got, expected);
      g_assert_cmpfloat_with_epsilon (got, expected, 0.005);
    }
}

static void
test_z_symmetry (void)
{
  g_autoptr(AirySystem) system = seed_widefield ("1.5, -1.5");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  AiryStack *s = result->stack;
  gsize n = airy_stack_plane_size (s), i;
  float peak = plane_max (airy_stack_plane (s, 0), n, NULL);
  double worst = 0.0;

  for (i = 0; i < n; i++)
    worst = MAX (worst, fabs (airy_stack_plane (s, 0)[i] - airy_stack_plane (s, 1)[i]));
  g_assert_cmpfloat (worst, <=, 1e-5 * peak);
}

static void
test_lens_round_trip (void)
{
  /* FF lens forward then inverse returns the field; energy is kept both ways */
  double lambda = 0.5;
  g_autoptr(AirySpectrum) spectrum = airy_spectrum_new (&lambda, NULL, 1, NULL);
  g_autoptr(AiryField) field = airy_field_new (spectrum, 96, 80, 0.7);
  g_autofree fftwf_complex *orig = NULL;
  gsize n = airy_field_plane_size (field), i;
  double p0, worst = 0.0, amax = 0.0;

  for (i = 0; i < n; i++)
    field->data[i] = (float) sin (0.37 * i) + I * (float) cos (0.11 * i * i);
  orig = g_memdup2 (field->data, n * sizeof (fftwf_complex));
  p0 = airy_field_power (field, 0);
  _airy_ff_transform (field, 150.0, 1.2, FALSE, 1);
  g_assert_cmpfloat_with_epsilon (field->dx[0], 150.0 * 0.5 / (1.2 * 80 * 0.7), 1e-12);
  g_assert_cmpfloat_with_epsilon (field->dy[0], 150.0 * 0.5 / (1.2 * 96 * 0.7), 1e-12);
  g_assert_cmpfloat_with_epsilon (airy_field_power (field, 0) / p0, 1.0, 1e-5);
  _airy_ff_transform (field, 150.0, 1.2, TRUE, 1);
  g_assert_cmpfloat_with_epsilon (field->dx[0], 0.7, 1e-12);
  for (i = 0; i < n; i++)
    {
      worst = MAX (worst, cabsf (field->data[i] - orig[i]));
      amax = MAX (amax, cabsf (orig[i]));
    }
  g_assert_cmpfloat (worst, <=, 1e-5 * amax);
}

static void
test_zernike_defocus (void)
{
  /* Z(2,0) = √3(2ρ²−1) with c waves: on-axis intensity sinc²(2√3·π·c) of
   * the aberration-free one */
  const double c[] = { 0.0, 0.1, 0.2 };
  double i0 = 0.0;
  guint k;

  for (k = 0; k < G_N_ELEMENTS (c); k++)
    {
      g_autofree char *json = g_strdup_printf (
        "{\"airy\": 1, \"grid\": {\"shape\": [512, 512], \"spacing\": 0.5},"
        " \"spectrum\": {\"wavelengths\": [0.532]},"
        " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
        "  {\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [4],"
        "   \"zernike-coefficients\": [%g]}, {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}", c[k]);
      g_autoptr(AirySystem) system = test_system (json);
      g_autoptr(AiryResult) result = test_run (system, NULL);
      double on_axis = result->stack->data[256 * 512 + 256];

      if (k == 0)
        i0 = on_axis;
      else
        {
          double expected = pow (sinc (2 * sqrt (3.0) * G_PI * c[k]), 2);
          g_test_message ("c = %.2f waves: %.6f, expected %.6f", c[k], on_axis / i0, expected);
          g_assert_cmpfloat_with_epsilon (on_axis / i0, expected, 0.005);
        }
    }
}

static void
test_zernike_closed_forms (void)
{
  int n, m, j;

  /* ANSI and Noll single indices */
  airy_zernike_ansi_to_nm (4, &n, &m);
  g_assert_cmpint (n, ==, 2); g_assert_cmpint (m, ==, 0);
  airy_zernike_ansi_to_nm (5, &n, &m);
  g_assert_cmpint (n, ==, 2); g_assert_cmpint (m, ==, 2);
  airy_zernike_ansi_to_nm (3, &n, &m);
  g_assert_cmpint (n, ==, 2); g_assert_cmpint (m, ==, -2);
  airy_zernike_ansi_to_nm (12, &n, &m);
  g_assert_cmpint (n, ==, 4); g_assert_cmpint (m, ==, 0);
  {
    const int noll[][3] = { { 1, 0, 0 }, { 2, 1, 1 }, { 3, 1, -1 }, { 4, 2, 0 }, { 5, 2, -2 },
                            { 6, 2, 2 }, { 7, 3, -1 }, { 8, 3, 1 }, { 9, 3, -3 }, { 10, 3, 3 },
                            { 11, 4, 0 }, { 22, 6, 0 } };
    for (j = 0; j < (int) G_N_ELEMENTS (noll); j++)
      {
        airy_zernike_noll_to_nm (noll[j][0], &n, &m);
        g_assert_cmpint (n, ==, noll[j][1]);
        g_assert_cmpint (m, ==, noll[j][2]);
      }
  }
  /* closed forms: defocus √3(2ρ²−1), astigmatism √6 ρ² cos 2θ, spherical √5(6ρ⁴−6ρ²+1) */
  for (j = 0; j <= 10; j++)
    {
      double rho = j / 10.0, th = 0.3 + j;
      g_assert_cmpfloat_with_epsilon (airy_zernike (2, 0, rho, th, 1), sqrt (3.0) * (2 * rho * rho - 1), 1e-12);
      g_assert_cmpfloat_with_epsilon (airy_zernike (2, 2, rho, th, 1), sqrt (6.0) * rho * rho * cos (2 * th), 1e-12);
      g_assert_cmpfloat_with_epsilon (airy_zernike (2, -2, rho, th, 1), sqrt (6.0) * rho * rho * sin (2 * th), 1e-12);
      g_assert_cmpfloat_with_epsilon (airy_zernike (4, 0, rho, th, 1),
                                      sqrt (5.0) * (6 * pow (rho, 4) - 6 * rho * rho + 1), 1e-12);
    }
}

/* Applies one phase mask to a unit plane field on a grid and returns arg(u). */
static void
test_astigmatism_mask (void)
{
  double lambda = 0.5;
  g_autoptr(AirySpectrum) spectrum = airy_spectrum_new (&lambda, NULL, 1, NULL);
  g_autoptr(AiryField) field = airy_field_new (spectrum, 65, 65, 1.0);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryElement) mask = NULL;
  GVariant *idx = g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, (double[]) { 6 }, 1, sizeof (double));
  GVariant *coef = g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE, (double[]) { 0.05 }, 1, sizeof (double));
  AiryContext ctx;
  AiryPlane plane = { 0, 0.0, 1 };
  gpointer state;
  gsize i;
  guint y, x;

  mask = airy_element_new ("phase-mask", &error);
  g_assert_no_error (error);
  g_object_set (mask, "source", AIRY_PHASE_ZERNIKE, "zernike-indexing", AIRY_ZERNIKE_NOLL,
                "zernike-indices", idx, "zernike-coefficients", coef, "pupil-radius", 30.0, NULL);
  airy_context_init (&ctx, spectrum, 65, 65, (double[]) { 1.0 });
  ctx.path = "test";
  g_assert_true (airy_element_check (mask, &ctx, &error));
  state = AIRY_ELEMENT_GET_CLASS (mask)->prepare (mask, &ctx, &error);
  g_assert_no_error (error);
  for (i = 0; i < airy_field_plane_size (field); i++)
    field->data[i] = 1.0f;
  g_assert_true (AIRY_ELEMENT_GET_CLASS (mask)->apply (mask, state, field, &plane, &error));
  /* Noll 6 = (2, 2): φ = 2π·c·√6·ρ²·cos 2θ inside ρ ≤ 1 */
  for (y = 0; y < 65; y += 4)
    for (x = 0; x < 65; x += 4)
      {
        double xx = airy_grid_coord (x, 65, 1.0) / 30.0, yy = airy_grid_coord (y, 65, 1.0) / 30.0;
        double rho2 = xx * xx + yy * yy;
        double expected = rho2 <= 1.0 ? 2 * G_PI * 0.05 * sqrt (6.0) * (xx * xx - yy * yy) : 0.0;
        double got = cargf (field->data[y * 65 + x]);

        g_assert_cmpfloat_with_epsilon (got, expected, 1e-5);
      }
  AIRY_ELEMENT_GET_CLASS (mask)->free_state (state);
  airy_context_clear (&ctx);
}

static void
test_vortex_doughnut (void)
{
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [512, 512], \"spacing\": 0.5},"
    " \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8},"
    "  {\"type\": \"phase-mask\", \"source\": \"named\", \"named\": \"vortex\", \"strength\": 1},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  float *p = result->stack->data;
  gsize where = 0;
  float peak = plane_max (p, 512 * 512, &where);
  double r = hypot ((double) (where % 512) - 256, (double) (where / 512) - 256) * result->stack->dx;

  /* a zero on the axis and a ring around it */
  g_test_message ("axis %.3g, peak %.3g at r = %.3f µm", p[256 * 512 + 256], peak, r);
  g_assert_cmpfloat (p[256 * 512 + 256], <, 1e-3 * peak);
  g_assert_cmpfloat (r, >, 0.1);
  g_assert_cmpfloat (r, <, 0.6);
}

static void
check_square_aperture (const char *method)
{
  /* plane wave, square aperture of 81 pixels (width 40.5 µm), propagated by z:
   * Fresnel: I = |F(x)|²|F(y)|², |F|² = ½[(ΔC)² + (ΔS)²], t = √(2n/(λz))(±a/2 − x) */
  double lambda = 0.5, z = 200.0, dx = 0.5, a = 81 * dx;
  guint n = 512, x, c = n / 2;
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g},"
    " \"spectrum\": {\"wavelengths\": [%g]},"
    " \"elements\": [{\"type\": \"plane-wave\", \"power\": %g}, {\"type\": \"square-pupil\", \"width\": 40.2},"
    "  {\"type\": \"propagate\", \"z\": %g, \"method\": \"%s\"}]}",
    n, n, dx, lambda, (double) n * n * dx * dx, z, method);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) result = test_run (system, NULL);
  float *p = result->stack->data;
  double s = sqrt (2.0 / (lambda * z)), worst = 0.0, fy2, peak = 0.0;
  double c1, s1, c2, s2;

  /* |F(0)|² on the y axis through the centre */
  fresnel_cs (s * (a / 2), &c2, &s2);
  fresnel_cs (s * (-a / 2), &c1, &s1);
  fy2 = 0.5 * ((c2 - c1) * (c2 - c1) + (s2 - s1) * (s2 - s1));
  for (x = 0; x < n; x++)
    {
      double xx = airy_grid_coord (x, n, dx), expected;

      fresnel_cs (s * (a / 2 - xx), &c2, &s2);
      fresnel_cs (s * (-a / 2 - xx), &c1, &s1);
      expected = 0.5 * ((c2 - c1) * (c2 - c1) + (s2 - s1) * (s2 - s1)) * fy2;
      worst = MAX (worst, fabs (p[(gsize) c * n + x] - expected));
      peak = MAX (peak, expected);
    }
  g_test_message ("%s: worst |I − I_Fresnel| = %.4f of the peak", method, worst / peak);
  g_assert_cmpfloat (worst, <=, 0.03 * peak);
}

static void
test_fresnel_transfer (void)
{
  check_square_aperture ("transfer");
}

static void
test_fresnel_angular (void)
{
  check_square_aperture ("angular-spectrum");
}

static void
test_propagate_energy (void)
{
  /* propagation is unitary: the power stays 1 for a field well inside the grid */
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.5},"
    " \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"elements\": [{\"type\": \"gaussian-beam\", \"waist\": 8},"
    "  {\"type\": \"propagate\", \"z\": 300, \"method\": \"angular-spectrum\", \"pad\": 64}]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  double total = plane_sum (result->stack->data, 256 * 256) * 0.25;
  /* and the beam widens as w(z) = w0 √(1 + (z/z_R)²) */
  double zr = G_PI * 64 / 0.5, w = 8 * sqrt (1 + (300 / zr) * (300 / zr));
  double peak_expected = 2.0 / (G_PI * w * w);

  g_assert_cmpfloat_with_epsilon (total, 1.0, 1e-4);
  g_assert_cmpfloat_with_epsilon (result->stack->data[128 * 256 + 128] / peak_expected, 1.0, 0.01);
}

static void
test_lateral_offset (void)
{
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [512, 512], \"spacing\": 0.5},"
    " \"spectrum\": {\"wavelengths\": [0.532]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.33, \"na\": 0.8,"
    "   \"offset-x\": 1.5625, \"offset-y\": -0.78125},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.33}]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  gsize where = 0;

  /* du = 0.15625 µm: +10 pixels in x, −5 in y */
  plane_max (result->stack->data, 512 * 512, &where);
  g_assert_cmpuint (where % 512, ==, 266);
  g_assert_cmpuint (where / 512, ==, 251);
}

static void
test_nonparaxial_limit (void)
{
  /* at low NA the non-paraxial defocus equals the paraxial one */
  g_autoptr(AirySystem) a = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"values\": [3.0]}, \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.0,"
    " \"na\": 0.1, \"defocus-model\": \"paraxial\"}, {\"type\": \"ff-lens\", \"f\": 100}]}");
  g_autoptr(AirySystem) b = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [256, 256], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5]},"
    " \"z\": {\"values\": [3.0]}, \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": 1.0,"
    " \"na\": 0.1, \"defocus-model\": \"nonparaxial\"}, {\"type\": \"ff-lens\", \"f\": 100}]}");
  g_autoptr(AiryResult) ra = test_run (a, NULL);
  g_autoptr(AiryResult) rb = test_run (b, NULL);
  float peak = plane_max (ra->stack->data, 256 * 256, NULL);
  double worst = 0.0;
  gsize i;

  for (i = 0; i < 256 * 256; i++)
    worst = MAX (worst, fabs (ra->stack->data[i] - rb->stack->data[i]));
  g_assert_cmpfloat (worst, <, 0.01 * peak);
}

static void
test_spectrum_weights (void)
{
  /* two wavelengths: Σ I du² = Σ w_l = 1, and the result is the weighted sum */
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [128, 128], \"spacing\": 1.0},"
    " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [3, 1]},"
    " \"elements\": [{\"type\": \"gaussian-beam\", \"waist\": 10}]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);

  g_assert_cmpfloat_with_epsilon (plane_sum (result->stack->data, 128 * 128), 1.0, 1e-5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();

  g_test_add_func ("/engine/psf/airy-disk-seed-grid", test_airy_disk_seed);
  g_test_add_func ("/engine/psf/airy-disk-odd-grid", test_airy_disk_odd_grid);
  g_test_add_func ("/engine/psf/plane-power", test_plane_power);
  g_test_add_func ("/engine/psf/defocus-sinc2", test_defocus_sinc);
  g_test_add_func ("/engine/psf/z-symmetry", test_z_symmetry);
  g_test_add_func ("/engine/psf/lateral-offset", test_lateral_offset);
  g_test_add_func ("/engine/psf/nonparaxial-low-na", test_nonparaxial_limit);
  g_test_add_func ("/engine/psf/spectrum-weights", test_spectrum_weights);
  g_test_add_func ("/engine/lens/round-trip", test_lens_round_trip);
  g_test_add_func ("/engine/zernike/closed-forms", test_zernike_closed_forms);
  g_test_add_func ("/engine/zernike/defocus-on-axis", test_zernike_defocus);
  g_test_add_func ("/engine/zernike/astigmatism-mask", test_astigmatism_mask);
  g_test_add_func ("/engine/mask/vortex-doughnut", test_vortex_doughnut);
  g_test_add_func ("/engine/propagate/fresnel-transfer", test_fresnel_transfer);
  g_test_add_func ("/engine/propagate/fresnel-angular-spectrum", test_fresnel_angular);
  g_test_add_func ("/engine/propagate/gaussian-beam", test_propagate_energy);
  return g_test_run ();
}

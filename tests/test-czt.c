/* The ff-lens's output region (a chirp-z transform): a zoomed, off-axis
 * Airy disk against the far-field integral summed directly (in double, one
 * output point at a time), the plain FFT where the spacings agree, and a
 * region outside the lens's field refused. */
#include "config.h"

#include <complex.h>

#include "airy-test-util.h"

#define SYSTEM "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %g}," \
               " \"spectrum\": {\"wavelengths\": [%g]}, \"elements\": [" \
               "{\"type\": \"plane-wave\", \"n\": %g}, {\"type\": \"circular-pupil\", \"diameter\": %g}," \
               "{\"type\": \"ff-lens\", \"f\": %g, \"n\": %g%s}]}"

typedef struct
{
  guint  h, w;
  double dx, lambda, n, diameter, f;
  guint  m;                 /* output pixels on each axis */
  double spacing, cx, cy;   /* the region */
} Zoom;

static AiryResult *
run_lens (const Zoom *z, const char *region)
{
  g_autofree char *json = g_strdup_printf (SYSTEM, z->h, z->w, z->dx, z->lambda, z->n, z->diameter,
                                           z->f, z->n, region);
  g_autoptr (AirySystem) system = test_system (json);

  return test_run (system, NULL);
}

/* |c · Σ_pupil a·e^{−2πi n x·p/(λf)}|², c = dx²·n/(λf), a the plane wave's
 * amplitude 1/√(H·W·dx²) (unit power): the midpoint rule of the far-field
 * integral at p, pixel by pixel. */
static double
far_field (const Zoom *z, double px, double py)
{
  double k = 2.0 * G_PI * z->n / (z->lambda * z->f), r2 = z->diameter * z->diameter / 4.0;
  double a = 1.0 / sqrt ((double) z->h * z->w * z->dx * z->dx), c = z->dx * z->dx * z->n / (z->lambda * z->f);
  double complex s = 0.0;
  guint y, x;

  for (y = 0; y < z->h; y++)
    {
      double yy = ((double) y - z->h / 2) * z->dx;

      for (x = 0; x < z->w; x++)
        {
          double xx = ((double) x - z->w / 2) * z->dx;

          if (xx * xx + yy * yy <= r2)
            s += cexp (-I * k * (xx * px + yy * py));
        }
    }
  s *= a * c;
  return creal (s) * creal (s) + cimag (s) * cimag (s);
}

static void
check_zoom (const Zoom *z)
{
  g_autofree char *region = g_strdup_printf (", \"output-shape\": %u, \"output-spacing\": %g,"
                                             " \"output-center-x\": %g, \"output-center-y\": %g",
                                             z->m, z->spacing, z->cx, z->cy);
  g_autoptr (AiryResult) r = run_lens (z, region);
  const float *got = airy_stack_plane (r->stack, 0);
  double peak = 0.0, worst = 0.0;
  guint y, x;

  g_assert_cmpuint (r->stack->height, ==, z->m);
  g_assert_cmpuint (r->stack->width, ==, z->m);
  g_assert_cmpfloat_with_epsilon (r->stack->dx, z->spacing, 1e-9);
  for (y = 0; y < z->m; y++)
    for (x = 0; x < z->m; x++)
      {
        double want = far_field (z, z->cx + ((double) x - z->m / 2) * z->spacing,
                                 z->cy + ((double) y - z->m / 2) * z->spacing);

        peak = MAX (peak, want);
        worst = MAX (worst, fabs (got[y * z->m + x] - want));
      }
  g_test_message ("zoomed %u² at %g µm about (%g, %g): max |CZT − direct| = %.3g of the peak %.4g",
                  z->m, z->spacing, z->cx, z->cy, worst / peak, peak);
  g_assert_cmpfloat (peak, >, 0.0);
  g_assert_cmpfloat (worst / peak, <=, 1e-4);
}

static void
test_zoom_airy_disk (void)
{
  /* a disk of 30 µm at f = 1 mm: the FFT's spacing 8.3 µm, the first zero
   * at 1.22·λf/D = 21.6 µm; the region 64² at 1 µm, off the axis */
  check_zoom (&(Zoom) { 128, 128, 0.5, 0.532, 1.0, 30.0, 1000.0, 64, 1.0, 15.0, 0.0 });
  /* a rectangular grid, n = 1.33, the region 40² at 0.7 µm below the axis */
  check_zoom (&(Zoom) { 96, 128, 0.6, 0.6, 1.33, 40.0, 1500.0, 40, 0.7, 0.0, -12.0 });
}

/* The region of the FFT's own samples gives the FFT's output. */
static void
test_zoom_equals_fft (void)
{
  Zoom z = { 128, 128, 0.5, 0.532, 1.0, 30.0, 1000.0, 0, 0, 0, 0 };
  double du = z.f * z.lambda / (z.n * z.w * z.dx);
  g_autofree char *region = g_strdup_printf (", \"output-shape\": %u, \"output-spacing\": %.17g", z.h, du);
  g_autoptr (AiryResult) plain = run_lens (&z, "");
  g_autoptr (AiryResult) zoom = run_lens (&z, region);
  const float *a = airy_stack_plane (plain->stack, 0), *b = airy_stack_plane (zoom->stack, 0);
  double peak = 0.0, worst = 0.0;
  gsize i;

  g_assert_cmpuint (zoom->stack->height, ==, plain->stack->height);
  g_assert_cmpuint (zoom->stack->width, ==, plain->stack->width);
  for (i = 0; i < (gsize) z.h * z.w; i++)
    {
      peak = MAX (peak, a[i]);
      worst = MAX (worst, fabs (a[i] - b[i]));
    }
  g_test_message ("CZT at the FFT's spacing: max |CZT − FFT| = %.3g of the peak", worst / peak);
  g_assert_cmpfloat (peak, >, 0.0);
  g_assert_cmpfloat (worst / peak, <=, 1e-5);
}

static void
test_region_outside (void)
{
  g_autofree char *json = g_strdup_printf (SYSTEM, 128u, 128u, 0.5, 0.532, 1.0, 30.0, 1000.0, 1.0,
                                           ", \"output-shape\": 64, \"output-spacing\": 1, \"output-center-x\": 600");

  test_expect_error (json, AIRY_ERROR_INVALID_VALUE,
                     "elements[2].output-center-x: the output region [568, 631] µm (centre 600 µm, 64 pixels "
                     "of 1 µm) must lie inside the lens's field [-532, 523.688] µm (λ = 0.532 µm)");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  g_test_add_func ("/czt/zoomed-airy-disk", test_zoom_airy_disk);
  g_test_add_func ("/czt/equals-fft", test_zoom_equals_fft);
  g_test_add_func ("/czt/region-outside", test_region_outside);
  return g_test_run ();
}

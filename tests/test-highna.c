/* High-NA physics against quadratures written here (DESIGN §3): the aplanatic
 * factor against the Debye integral. */
#include "config.h"

#include "airy-test-util.h"
#include "airy-physics.h"

/* Gauss–Legendre nodes and weights on [a, b]: Newton on P_n from
 * Tricomi's first guess. */
static void
gauss_legendre (int n, double a, double b, double *x, double *w)
{
  int i, k;

  for (i = 0; i < (n + 1) / 2; i++)
    {
      double t = cos (G_PI * (i + 0.75) / (n + 0.5)), dp = 1.0;
      int it;

      for (it = 0; it < 100; it++)
        {
          double p0 = 1.0, p1 = t, dt;

          for (k = 2; k <= n; k++)
            {
              double p2 = ((2.0 * k - 1.0) * t * p1 - (k - 1.0) * p0) / k;
              p0 = p1;
              p1 = p2;
            }
          dp = n * (t * p1 - p0) / (t * t - 1.0);
          dt = p1 / dp;
          t -= dt;
          if (fabs (dt) < 1e-15)
            break;
        }
      x[i] = 0.5 * (a + b) - 0.5 * (b - a) * t;
      x[n - 1 - i] = 0.5 * (a + b) + 0.5 * (b - a) * t;
      w[i] = w[n - 1 - i] = (b - a) / ((1.0 - t * t) * dp * dp);
    }
}

/* A grid whose pupil radius is `pupil_px` pixels: the spacing f·NA/(n·px). */
static double
pupil_spacing (double f, double na, double n, double pupil_px)
{
  return f * na / (n * pupil_px);
}

/* ---- 1. Aplanatic apodisation against the Debye integral ---------------
 *
 * Airy's stack is |c·DFT(u)|² with u = A·a(r)·e^{i z G(r)} on the pupil grid
 * (r = f sin θ) and c = dx dy n/(λ f); in the continuum the DFT sum is
 * (1/dx dy)∫∫, so with the azimuth done by J0 and r dr = f² sin θ cos θ dθ:
 *   E(ρ, z) = (n/(λ f)) A 2π f² ∫₀^θmax a(θ) e^{i z G(θ)} J0(k n ρ sin θ) sin θ cos θ dθ,
 * G = k n (cos θ − 1), k = 2π/λ, and A² 2π f² ∫ a² sin θ cos θ dθ = power = 1.
 * The aplanatic a(θ) is (cos θ)^−½ (Richards–Wolf √cos θ per solid angle
 * over the Jacobian's cos θ). */

typedef struct
{
  double      n, na, lambda;
  gboolean    aplanatic;
} DebyeCase;

static double
debye_apod (const DebyeCase *c, double theta)
{
  return c->aplanatic ? pow (cos (theta), -0.5) : 1.0;
}

static void
check_debye (const DebyeCase *c)
{
  const guint N = 512;
  const double f = 100.0, zs[] = { 0.0, 0.4, -0.8 };
  const guint nz = G_N_ELEMENTS (zs), nq = 800;
  double dx = pupil_spacing (f, c->na, c->n, 200.0);
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
    " \"spectrum\": {\"wavelengths\": [%.17g]}, \"z\": {\"values\": [0.0, 0.4, -0.8]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": %.17g, \"n\": %.17g, \"na\": %.17g,"
    "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"%s\"},"
    "  {\"type\": \"ff-lens\", \"f\": %.17g, \"n\": %.17g}]}",
    N, N, dx, c->lambda, f, c->n, c->na, c->aplanatic ? "aplanatic" : "none", f, c->n);
  g_autoptr(AirySystem) system = test_system (json);
  g_autoptr(AiryResult) result = test_run (system, NULL);
  AiryStack *s = result->stack;
  double k = 2.0 * G_PI / c->lambda, theta_max = asin (c->na / c->n);
  g_autofree double *t = g_new (double, nq);
  g_autofree double *wt = g_new (double, nq);
  g_autofree double *j0v = g_new (double, nq);
  guint max_r2 = 2 * (N / 2) * (N / 2) + 1;
  g_autofree double *table = g_new (double, (gsize) max_r2 * nz);
  g_autofree gboolean *done = g_new0 (gboolean, max_r2);
  double norm = 0.0, amp, peak = 0.0, worst = 0.0, du = s->dx;
  guint q, z, y, x;

  g_assert_cmpuint (s->width, ==, N);
  g_assert_cmpuint (s->depth, ==, nz);
  gauss_legendre (nq, 0.0, theta_max, t, wt);
  for (q = 0; q < nq; q++)
    {
      double a = debye_apod (c, t[q]);
      norm += wt[q] * a * a * sin (t[q]) * cos (t[q]);
    }
  amp = sqrt (1.0 / (2.0 * G_PI * f * f * norm));

  for (z = 0; z < nz; z++)
    peak = MAX (peak, plane_max (airy_stack_plane (s, z), airy_stack_plane_size (s), NULL));
  for (y = 0; y < N; y++)
    for (x = 0; x < N; x++)
      {
        int iy = (int) y - (int) N / 2, ix = (int) x - (int) N / 2;
        guint r2 = (guint) (iy * iy + ix * ix);

        if (!done[r2])
          {
            double rho = sqrt ((double) r2) * du;

            for (q = 0; q < nq; q++)
              j0v[q] = j0 (k * c->n * rho * sin (t[q]));
            for (z = 0; z < nz; z++)
              {
                double re = 0.0, im = 0.0, e;

                for (q = 0; q < nq; q++)
                  {
                    double g = k * c->n * (cos (t[q]) - 1.0) * zs[z];
                    double v = wt[q] * debye_apod (c, t[q]) * j0v[q] * sin (t[q]) * cos (t[q]);
                    re += v * cos (g);
                    im += v * sin (g);
                  }
                e = c->n / (c->lambda * f) * amp * 2.0 * G_PI * f * f;
                table[(gsize) r2 * nz + z] = e * e * (re * re + im * im);
              }
            done[r2] = TRUE;
          }
        for (z = 0; z < nz; z++)
          {
            double d = fabs (airy_stack_plane (s, z)[(gsize) y * N + x] - table[(gsize) r2 * nz + z]);
            worst = MAX (worst, d);
          }
      }
  g_test_message ("n %g NA %g %s: peak %.6g (Debye %.6g), worst |Airy − Debye| %.3g of the peak",
                  c->n, c->na, c->aplanatic ? "aplanatic" : "plain", peak, table[0], worst / peak);
  g_assert_cmpfloat (worst, <, 1e-3 * peak);
}

static void
test_debye_water_plain (void)
{
  DebyeCase c = { 1.33, 0.8, 0.52, FALSE };
  check_debye (&c);
}

static void
test_debye_water_aplanatic (void)
{
  DebyeCase c = { 1.33, 0.8, 0.52, TRUE };
  check_debye (&c);
}

static void
test_debye_oil_plain (void)
{
  DebyeCase c = { 1.518, 1.4, 0.6, FALSE };
  check_debye (&c);
}

static void
test_debye_oil_aplanatic (void)
{
  DebyeCase c = { 1.518, 1.4, 0.6, TRUE };
  check_debye (&c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();

  g_test_add_func ("/engine/highna/debye/water-0.8-plain", test_debye_water_plain);
  g_test_add_func ("/engine/highna/debye/water-0.8-aplanatic", test_debye_water_aplanatic);
  g_test_add_func ("/engine/highna/debye/oil-1.4-plain", test_debye_oil_plain);
  g_test_add_func ("/engine/highna/debye/oil-1.4-aplanatic", test_debye_oil_aplanatic);
  return g_test_run ();
}

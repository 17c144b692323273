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

/* ---- 2. Gibson–Lanni --------------------------------------------------- */

static const char *gl_oil =
  "\"f\": 100, \"n\": 1.518, \"na\": 1.4, \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\"";

static AiryResult *
run_quiet (AirySystem *system)
{
  return test_run (system, NULL);
}

/* An objective (a pupil radius of 0.39·N pixels), an optional gibson-lanni
 * element, an FF lens. */
static AirySystem *
gl_system (guint n, const char *objective, const char *gl, const char *z)
{
  double dx = pupil_spacing (100.0, 1.4, 1.518, n * 0.39);
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
    " \"spectrum\": {\"wavelengths\": [0.6]}, \"z\": %s,"
    " \"elements\": [{\"type\": \"objective-point-source\", %s}, %s%s%s"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": 1.518}]}",
    n, n, dx, z, objective, gl ? "{\"type\": \"gibson-lanni\", " : "", gl ? gl : "", gl ? "}," : "");
  return test_system (json);
}

static void
check_gl_matched (const char *objective)
{
  /* matched indices and thicknesses, depth 0: the phase is 0 and nothing is
   * cut (ns ≥ NA), so the stack is the plain objective's, bit for bit */
  const char *z = "{\"values\": [-1.0, 0.0, 0.3, 2.0]}";
  g_autoptr(AirySystem) plain = gl_system (128, objective, NULL, z);
  g_autoptr(AirySystem) matched = gl_system (128, objective,
    "\"ns\": 1.518, \"ng\": 1.52, \"ng0\": 1.52, \"tg\": 170, \"tg0\": 170, \"ni0\": 1.518, \"ti0\": 150, \"depth\": 0", z);
  g_autoptr(AiryResult) a = run_quiet (plain);
  g_autoptr(AiryResult) b = run_quiet (matched);
  gsize n = airy_stack_plane_size (a->stack) * a->stack->depth;

  g_assert_cmpuint (b->stack->depth, ==, 4);
  g_assert_cmpint (memcmp (a->stack->data, b->stack->data, n * sizeof (float)), ==, 0);
}

static void
test_gl_matched_scalar (void)
{
  check_gl_matched (gl_oil);
}

/* On-axis Debye intensity of the GL pupil at stage offset z: J0(0) = 1, so
 *   I(z) = [(n/(λf)) A 2π f² |∫₀^θc a(θ) e^{ik(z ni cos θ + OPD(θ))} P(θ) sin θ cos θ dθ|]²,
 * θc the evanescent cut (ni sin θ ≤ ns), A from the uncut pupil, P the
 * on-axis polarisation factor (1 scalar, (1 + cos θ)/2 for Ex under x input). */
typedef struct
{
  double ni, na, ns, ng, ng0, ni0, tg, tg0, ti0, depth, lambda, f;
  gboolean vectorial;
  double   xn[600], wn[600], xc[600], wc[600];   /* nodes over the pupil and up to the cut */
} GlCase;

static void
gl_case_nodes (GlCase *c)
{
  gauss_legendre (600, 0.0, asin (c->na / c->ni), c->xn, c->wn);
  gauss_legendre (600, 0.0, asin (MIN (c->na, MIN (c->ns, c->ng)) / c->ni), c->xc, c->wc);
}

static double
gl_axial (const GlCase *c, double z)
{
  const int nq = 600;
  const double *x = c->xc, *w = c->wc;
  double k = 2.0 * G_PI / c->lambda, norm = 0.0, re = 0.0, im = 0.0, amp, e;
  int q;

  for (q = 0; q < nq; q++)
    norm += c->wn[q] / cos (c->xn[q]) * sin (c->xn[q]) * cos (c->xn[q]);
  amp = sqrt (1.0 / (2.0 * G_PI * c->f * c->f * norm));
  for (q = 0; q < nq; q++)
    {
      double st = sin (x[q]), ct = cos (x[q]), q2 = c->ni * c->ni * st * st;
      double opd = c->depth * sqrt (c->ns * c->ns - q2) + c->ti0 * sqrt (c->ni * c->ni - q2)
                   - c->ti0 * sqrt (c->ni0 * c->ni0 - q2) + c->tg * sqrt (c->ng * c->ng - q2)
                   - c->tg0 * sqrt (c->ng0 * c->ng0 - q2);
      double g = k * (z * c->ni * ct + opd);
      double v = w[q] * pow (ct, -0.5) * st * ct * (c->vectorial ? (1.0 + ct) / 2.0 : 1.0);

      re += v * cos (g);
      im += v * sin (g);
    }
  e = c->ni / (c->lambda * c->f) * amp * 2.0 * G_PI * c->f * c->f;
  return e * e * (re * re + im * im);
}

/* the peak of three samples by a parabola through them */
static double
parabola_peak (double zm, double dz, double a, double b, double c)
{
  return zm + 0.5 * dz * (a - c) / (a - 2.0 * b + c);
}

static void
check_gl_focal_shift (const char *objective, gboolean vectorial)
{
  /* an oil objective imaging an emitter 10 µm deep in water: the stage
   * moves further than the depth (paraxially by ni/ns), so the axial peak
   * lies below the matched one at z = −10 µm */
  GlCase c = { 1.518, 1.4, 1.33, 1.52, 1.52, 1.518, 170, 170, 150, 10.0, 0.6, 100.0, vectorial };
  const guint N = 512, nz = 81;
  const double z0 = -14.0, dz = 0.05;
  g_autofree char *z = g_strdup_printf ("{\"start\": %g, \"stop\": %g, \"count\": %u}", z0, z0 + (nz - 1) * dz, nz);
  g_autoptr(AirySystem) system = gl_system (N, objective,
    "\"ns\": 1.33, \"ng\": 1.52, \"ng0\": 1.52, \"tg\": 170, \"tg0\": 170, \"ni0\": 1.518, \"ti0\": 150, \"depth\": 10", z);
  g_autoptr(AiryResult) result = run_quiet (system);
  AiryStack *s = result->stack;
  gsize centre = (gsize) (N / 2) * N + N / 2;
  double peak = 0.0, worst = 0.0, best_q = 0.0, zq = 0.0, za, zz;
  guint k, km = 0;

  gboolean warned = FALSE;

  for (k = 0; k < result->warnings->len; k++)
    warned |= strstr (g_ptr_array_index (result->warnings, k), "evanescent and cut") != NULL;
  g_assert_true (warned);
  g_assert_cmpuint (s->depth, ==, nz);
  gl_case_nodes (&c);
  for (k = 0; k < nz; k++)
    {
      double v = airy_stack_plane (s, k)[centre];
      if (v > peak)
        peak = v, km = k;
    }
  g_assert_cmpuint (km, >, 0);
  g_assert_cmpuint (km, <, nz - 1);
  za = parabola_peak (z0 + km * dz, dz, airy_stack_plane (s, km - 1)[centre],
                      airy_stack_plane (s, km)[centre], airy_stack_plane (s, km + 1)[centre]);
  for (k = 0; k < nz; k++)
    worst = MAX (worst, fabs (airy_stack_plane (s, k)[centre] - gl_axial (&c, z0 + k * dz)));
  /* the quadrature's peak on a fine scan */
  for (zz = z0; zz <= z0 + (nz - 1) * dz; zz += 0.002)
    {
      double v = gl_axial (&c, zz);
      if (v > best_q)
        best_q = v, zq = zz;
    }
  g_test_message ("axial peak at z = %.4f µm (quadrature %.4f µm, matched −10, paraxial %.3f); "
                  "on-axis |Airy − quadrature| %.3g of the peak", za, zq, -10.0 * c.ni / c.ns, worst / peak);
  g_assert_cmpfloat (fabs (za - zq), <, 0.01);
  g_assert_cmpfloat (za, <, -10.5);
  /* the pupil's pixels resolve the √(ns² − ni² sin²θ) edge at the cut
   * slowly (3.0e-3 here; 4e-3 … 1.2e-2 on 256², by the pupil radius) */
  g_assert_cmpfloat (worst, <, 5e-3 * peak);
}

static void
test_gl_needs_objective (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = airy_system_new_from_data (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.6]},"
    " \"elements\": [{\"type\": \"plane-wave\"}, {\"type\": \"gibson-lanni\"}, {\"type\": \"ff-lens\"}]}",
    -1, NULL, "test", &error);
  g_autoptr(AiryResult) result = NULL;

  if (system != NULL)
    result = airy_run (system, NULL, NULL, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "elements[1]: gibson-lanni needs an objective-point-source"));
}

static void
test_gl_focal_shift_scalar (void)
{
  check_gl_focal_shift (gl_oil, FALSE);
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
  g_test_add_func ("/engine/highna/gibson-lanni/matched-scalar", test_gl_matched_scalar);
  g_test_add_func ("/engine/highna/gibson-lanni/focal-shift-scalar", test_gl_focal_shift_scalar);
  g_test_add_func ("/engine/highna/gibson-lanni/needs-objective", test_gl_needs_objective);
  return g_test_run ();
}

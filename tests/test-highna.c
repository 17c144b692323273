/* High-NA physics against quadratures written here (DESIGN §3): the aplanatic
 * factor against the Debye integral. */
#include "config.h"

#include "airy-test-util.h"
#include "airy-elements-private.h"
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
test_gl_needs_nonparaxial (void)
{
  /* the immersion term is the objective's own defocus: with the paraxial
   * one the OPD would be wrong, so the system check refuses it, named at
   * the gibson-lanni element (the check on the UI thread and the run) */
  g_autoptr(AirySystem) system = gl_system (64, "\"f\": 100, \"n\": 1.518, \"na\": 1.4",
                                            "\"ns\": 1.33, \"depth\": 10", "{\"values\": [0.0]}");
  g_autoptr(AirySystem) fixed = gl_system (64, "\"f\": 100, \"n\": 1.518, \"na\": 1.4, \"defocus-model\": \"nonparaxial\"",
                                           "\"ns\": 1.33, \"depth\": 10", "{\"values\": [0.0]}");
  const char *expected = "elements[1]: gibson-lanni needs the objective's \"defocus-model\": \"nonparaxial\", "
                         "got \"paraxial\"";
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryResult) result = NULL;

  g_assert_false (airy_system_check (system, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  result = airy_run (system, NULL, NULL, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  g_assert_true (airy_system_check (fixed, NULL, &error));
  g_assert_no_error (error);
}

static void
test_gl_focal_shift_scalar (void)
{
  check_gl_focal_shift (gl_oil, FALSE);
}

/* ---- 3. Vectorial fields ---------------------------------------------- */

/* An objective on N² with a pupil of `px` pixels, its extra keys, an FF lens. */
static AirySystem *
vec_system (guint N, double n, double na, double px, const char *keys, const char *z)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
    " \"spectrum\": {\"wavelengths\": [0.6]}, \"z\": %s,"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100, \"n\": %.17g, \"na\": %.17g,"
    "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\"%s%s},"
    "  {\"type\": \"ff-lens\", \"f\": 100, \"n\": %.17g}]}",
    N, N, pupil_spacing (100.0, na, n, px), z, n, na, keys ? ", " : "", keys ? keys : "", n);
  return test_system (json);
}

/* Vectorial (x and unpolarized) against scalar at a low NA in water: the
 * peaks' ratio, and the largest difference of the shapes (each over its
 * peak), over planes z = 0 and 1.5 µm. */
static void
low_na_difference (double na, double *ratio, double *shape_x, double *shape_u)
{
  const char *z = "{\"values\": [0.0, 1.5]}";
  g_autoptr(AirySystem) scalar = vec_system (256, 1.33, na, 100.0, NULL, z);
  g_autoptr(AirySystem) vx = vec_system (256, 1.33, na, 100.0, "\"field\": \"vectorial\", \"polarization\": \"x\"", z);
  g_autoptr(AirySystem) vu = vec_system (256, 1.33, na, 100.0, "\"field\": \"vectorial\"", z);
  g_autoptr(AiryResult) a = test_run (scalar, NULL);
  g_autoptr(AiryResult) b = test_run (vx, NULL);
  g_autoptr(AiryResult) c = test_run (vu, NULL);
  gsize n = airy_stack_plane_size (a->stack) * a->stack->depth, i;
  double pa = plane_max (a->stack->data, n, NULL), pb = plane_max (b->stack->data, n, NULL);
  double pc = plane_max (c->stack->data, n, NULL);

  *shape_x = *shape_u = 0.0;
  for (i = 0; i < n; i++)
    {
      *shape_x = MAX (*shape_x, fabs (a->stack->data[i] / pa - b->stack->data[i] / pb));
      *shape_u = MAX (*shape_u, fabs (a->stack->data[i] / pa - c->stack->data[i] / pc));
    }
  *ratio = pb / pa;
  g_assert_cmpfloat_with_epsilon (pc / pa, pb / pa, 1e-6);
}

static void
test_vectorial_low_na (void)
{
  /* The vectorial PSF tends to the scalar one as NA² → 0: at NA 0.3 in
   * water (sin θ ≤ 0.23) the power moved into Ey and Ez costs the peak
   * 1.3 % and changes the shape by ≈ 1 % of the peak (the x elongation),
   * at NA 0.1 by 1e-3; the peak ratio (∫ a (1 + cos θ)/2 sin θ cos θ dθ /
   * ∫ a sin θ cos θ dθ)² of the same power is the quadrature's. */
  double r3, x3, u3, r1, x1, u1, num = 0.0, den = 0.0, xq[200], wq[200];
  int q;

  low_na_difference (0.3, &r3, &x3, &u3);
  low_na_difference (0.1, &r1, &x1, &u1);
  gauss_legendre (200, 0.0, asin (0.3 / 1.33), xq, wq);
  for (q = 0; q < 200; q++)
    {
      double v = wq[q] * pow (cos (xq[q]), -0.5) * sin (xq[q]) * cos (xq[q]);
      num += v * (1.0 + cos (xq[q])) / 2.0;
      den += v;
    }
  g_test_message ("NA 0.3: peak vectorial/scalar %.5f (quadrature %.5f), shapes differ by %.3g (x), %.3g "
                  "(unpolarized); NA 0.1: %.3g, %.3g of the peak", r3, num * num / (den * den), x3, u3, x1, u1);
  g_assert_cmpfloat (fabs (r3 - num * num / (den * den)), <, 2e-4);
  g_assert_cmpfloat (x1, <, 1.2e-3);
  g_assert_cmpfloat (u1, <, 1e-3);
  g_assert_cmpfloat (x3, <, 1.5e-2);
  /* the NA² law: a third of the NA, a ninth of the difference */
  g_assert_cmpfloat (fabs (x3 / x1 / 9.0 - 1.0), <, 0.2);
}

/* Richards–Wolf in focus on the pupil grid's measure (w = a(θ) sin θ cos θ dθ,
 * a = (cos θ)^−½): for x input, Ex = C(I0 + I2 cos 2φ), Ey = C I2 sin 2φ,
 * Ez = i C I1 cos φ with I0 = ∫ w (1 + cos θ)/2 J0, I2 = ∫ w (1 − cos θ)/2 J2,
 * I1 = ∫ w sin θ J1, J_m(k n ρ sin θ), C = (n/(λ f)) A 2π f². */
typedef struct
{
  double n, na, lambda, f, amp;
  double x[400], w[400];
} RwCase;

static void
rw_init (RwCase *c, double n, double na)
{
  double norm = 0.0;
  int q;

  c->n = n;
  c->na = na;
  c->lambda = 0.6;
  c->f = 100.0;
  gauss_legendre (400, 0.0, asin (na / n), c->x, c->w);
  for (q = 0; q < 400; q++)
    norm += c->w[q] * sin (c->x[q]);   /* a² sin θ cos θ = sin θ */
  c->amp = sqrt (1.0 / (2.0 * G_PI * c->f * c->f * norm));
}

static void
rw_integrals (const RwCase *c, double rho, double *i0, double *i1, double *i2)
{
  double k = 2.0 * G_PI / c->lambda, pre = c->n / (c->lambda * c->f) * c->amp * 2.0 * G_PI * c->f * c->f;
  int q;

  *i0 = *i1 = *i2 = 0.0;
  for (q = 0; q < 400; q++)
    {
      double st = sin (c->x[q]), ct = cos (c->x[q]), v = c->w[q] * pow (ct, -0.5) * st * ct;
      double arg = k * c->n * rho * st;

      *i0 += v * (1.0 + ct) / 2.0 * j0 (arg);
      *i1 += v * st * j1 (arg);
      *i2 += v * (1.0 - ct) / 2.0 * jn (2, arg);
    }
  *i0 *= pre;
  *i1 *= pre;
  *i2 *= pre;
}

/* x input, along x (φ = 0) or along y (φ = π/2) */
static double
rw_x_profile (const RwCase *c, double rho, gboolean along_y)
{
  double i0, i1, i2;

  rw_integrals (c, rho, &i0, &i1, &i2);
  return along_y ? (i0 - i2) * (i0 - i2) : (i0 + i2) * (i0 + i2) + i1 * i1;
}

/* the half-maximum radius of a profile by bisection */
static double
rw_half_radius (const RwCase *c, gboolean along_y)
{
  double peak = rw_x_profile (c, 0.0, along_y), lo = 0.0, hi = c->lambda / c->na;
  int it;

  for (it = 0; it < 60; it++)
    {
      double mid = 0.5 * (lo + hi);
      if (rw_x_profile (c, mid, along_y) > peak / 2.0)
        lo = mid;
      else
        hi = mid;
    }
  return 0.5 * (lo + hi);
}

static void
test_vectorial_x_elongation (void)
{
  const guint N = 512, c0 = N / 2;
  /* a pupil of N/5 pixels: du = λ/(2.5 NA·2) samples the intensity above
   * Nyquist, which the FWHM's Fourier interpolation needs */
  g_autoptr(AirySystem) system = vec_system (N, 1.518, 1.4, N / 5.0,
                                             "\"field\": \"vectorial\", \"polarization\": \"x\"",
                                             "{\"values\": [0.0]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  float *p = result->stack->data;
  double du = result->stack->dx, peak = plane_max (p, (gsize) N * N, NULL), worst = 0.0;
  g_autofree float *column = g_new (float, N);
  double fx, fy, qx, qy;
  RwCase c;
  guint k;

  rw_init (&c, 1.518, 1.4);
  for (k = 0; k < N; k++)
    column[k] = p[(gsize) k * N + c0];
  fx = profile_fwhm (p + (gsize) c0 * N, N, c0) * du;
  fy = profile_fwhm (column, N, c0) * du;
  qx = 2.0 * rw_half_radius (&c, FALSE);
  qy = 2.0 * rw_half_radius (&c, TRUE);
  /* both axes pixel by pixel against the quadrature */
  for (k = 0; k < N; k++)
    {
      double rho = fabs ((double) k - c0) * du;
      worst = MAX (worst, fabs (p[(gsize) c0 * N + k] - rw_x_profile (&c, rho, FALSE)));
      worst = MAX (worst, fabs (column[k] - rw_x_profile (&c, rho, TRUE)));
    }
  g_test_message ("x polarisation, NA 1.4 oil: FWHM x %.4f µm, y %.4f µm, ratio %.4f "
                  "(Richards–Wolf %.4f, %.4f, %.4f); axes |Airy − RW| %.3g of the peak",
                  fx, fy, fx / fy, qx, qy, qx / qy, worst / peak);
  g_assert_cmpfloat (fx, >, fy);
  g_assert_cmpfloat (fabs ((fx / fy) / (qx / qy) - 1.0), <, 2e-3);
  g_assert_cmpfloat (worst, <, 1e-3 * peak);
}

static void
test_vectorial_unpolarized_symmetric (void)
{
  /* unpolarized: rotationally symmetric (the grid's exact symmetries, the
   * transpose and the quarter turn, to 1e-5), its radial profile
   * I0² + I2² + I1²/2 from the quadrature; y input is x input transposed */
  const guint N = 512, c0 = N / 2;
  g_autoptr(AirySystem) su = vec_system (N, 1.518, 1.4, 200.0, "\"field\": \"vectorial\"", "{\"values\": [0.0, 0.6]}");
  g_autoptr(AirySystem) sx = vec_system (N, 1.518, 1.4, 200.0, "\"field\": \"vectorial\", \"polarization\": \"x\"", "{\"values\": [0.0, 0.6]}");
  g_autoptr(AirySystem) sy = vec_system (N, 1.518, 1.4, 200.0, "\"field\": \"vectorial\", \"polarization\": \"y\"", "{\"values\": [0.0, 0.6]}");
  g_autoptr(AiryResult) ru = test_run (su, NULL);
  g_autoptr(AiryResult) rx = test_run (sx, NULL);
  g_autoptr(AiryResult) ry = test_run (sy, NULL);
  double peak = plane_max (ru->stack->data, (gsize) N * N, NULL), du = ru->stack->dx;
  double sym = 0.0, xy = 0.0, radial = 0.0;
  RwCase c;
  guint z, y, x;

  for (z = 0; z < 2; z++)
    {
      const float *u = airy_stack_plane (ru->stack, z);
      const float *a = airy_stack_plane (rx->stack, z), *b = airy_stack_plane (ry->stack, z);

      /* pixels 1 … N−1 about the axis ⌊N/2⌋: (x, y) → (y, x) and → (N − y, x) */
      for (y = 1; y < N; y++)
        for (x = 1; x < N; x++)
          {
            double v = u[(gsize) y * N + x];
            sym = MAX (sym, fabs (v - u[(gsize) x * N + y]));
            sym = MAX (sym, fabs (v - u[(gsize) x * N + (N - y)]));
            xy = MAX (xy, fabs ((double) a[(gsize) y * N + x] - b[(gsize) x * N + y]));
          }
    }
  rw_init (&c, 1.518, 1.4);
  for (x = 0; x < N; x++)
    {
      double i0, i1, i2;

      rw_integrals (&c, fabs ((double) x - c0) * du, &i0, &i1, &i2);
      radial = MAX (radial, fabs (ru->stack->data[(gsize) c0 * N + x] - (i0 * i0 + i2 * i2 + i1 * i1 / 2.0)));
    }
  g_test_message ("unpolarized: symmetry %.3g, x ↔ y transpose %.3g, radial |Airy − RW| %.3g of the peak",
                  sym / peak, xy / peak, radial / peak);
  g_assert_cmpfloat (sym, <, 1e-5 * peak);
  g_assert_cmpfloat (xy, <, 1e-5 * peak);
  g_assert_cmpfloat (radial, <, 1e-3 * peak);
}

static void
test_vectorial_energy (void)
{
  /* Σ I du² = power on every plane, for each polarisation */
  const char *const keys[] = {
    "\"field\": \"vectorial\"",
    "\"field\": \"vectorial\", \"polarization\": \"x\"",
    "\"field\": \"vectorial\", \"polarization\": \"circular\"",
    "\"field\": \"vectorial\", \"polarization\": \"dipole\", \"dipole-polar\": 0.7, \"dipole-azimuth\": 0.4",
    "\"field\": \"vectorial\", \"polarization\": \"dipole\", \"power\": 2.5",
  };
  guint i, z;

  for (i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autoptr(AirySystem) system = vec_system (256, 1.518, 1.4, 90.0, keys[i], "{\"values\": [-1.0, 0.0, 0.7]}");
      g_autoptr(AiryResult) result = test_run (system, NULL);
      AiryStack *s = result->stack;
      double power = strstr (keys[i], "2.5") ? 2.5 : 1.0;

      for (z = 0; z < s->depth; z++)
        {
          double total = plane_sum (airy_stack_plane (s, z), airy_stack_plane_size (s)) * s->dx * s->dy;
          g_assert_cmpfloat_with_epsilon (total / power, 1.0, 1e-5);
        }
    }
}

static void
test_vectorial_z_dipole (void)
{
  /* a dipole along z sends radially polarised light: a doughnut in focus,
   * dark on the axis, its ring round */
  const guint N = 256, c0 = N / 2;
  g_autoptr(AirySystem) system = vec_system (N, 1.518, 1.4, 100.0,
                                             "\"field\": \"vectorial\", \"polarization\": \"dipole\", \"dipole-polar\": 0",
                                             "{\"values\": [0.0]}");
  g_autoptr(AiryResult) result = test_run (system, NULL);
  float *p = result->stack->data;
  gsize where = 0;
  float peak = plane_max (p, (gsize) N * N, &where);
  int py = (int) (where / N) - (int) c0, px = (int) (where % N) - (int) c0;
  double r = sqrt (px * px + py * py) * result->stack->dx;

  g_test_message ("z dipole: axis %.3g of the peak, ring radius %.4f µm, ring x %.6g / y %.6g",
                  p[(gsize) c0 * N + c0] / peak, r,
                  p[(gsize) c0 * N + c0 + (guint) MAX (abs (px), abs (py))],
                  p[(gsize) (c0 + (guint) MAX (abs (px), abs (py))) * N + c0]);
  g_assert_cmpfloat (p[(gsize) c0 * N + c0], <, 1e-6 * peak);
  g_assert_cmpfloat (r, >, 0.1);
  g_assert_cmpfloat (r, <, 0.5);
  /* the ring: the same along x and y */
  g_assert_cmpfloat (fabs (p[(gsize) c0 * N + c0 + 2] - p[(gsize) (c0 + 2) * N + c0]), <, 1e-5 * peak);
}

static void
test_vectorial_errors (void)
{
  struct { const char *json, *message; } cases[] = {
    { "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.6]},"
      " \"elements\": [{\"type\": \"objective-point-source\", \"field\": \"vectorial\"}, {\"type\": \"ff-lens\"}]}",
      "elements[0].field: vectorial needs \"defocus-model\": \"nonparaxial\", got \"paraxial\"" },
    { "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0}, \"spectrum\": {\"wavelengths\": [0.6]},"
      " \"elements\": [{\"type\": \"objective-point-source\", \"field\": \"vectorial\", \"defocus-model\": \"nonparaxial\"},"
      "  {\"type\": \"propagate\", \"z\": 1.0}, {\"type\": \"ff-lens\"}]}",
      "needs its pupil to go through pupil-plane masks into one ff-lens that ends the optics; "
      "after it come the operations fft, multiply, fft, fft, intensity" },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AirySystem) system = airy_system_new_from_data (cases[i].json, -1, NULL, "test", &error);
      g_autoptr(AiryResult) result = NULL;

      if (system != NULL)
        result = airy_run (system, NULL, NULL, NULL, NULL, &error);
      g_assert_null (result);
      g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, cases[i].message));
    }
}

static void
test_vectorial_no_fast_path (void)
{
  /* the unfused interpreters have one scalar plane per wavelength: a clear
   * error there, not a scalar answer */
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) system = vec_system (64, 1.518, 1.4, 20.0, "\"field\": \"vectorial\"", "{\"values\": [0.0]}");
  g_autoptr(AiryResult) result = NULL;

  g_setenv ("AIRY_NO_FAST_PATH", "1", TRUE);
  result = airy_run (system, NULL, NULL, NULL, NULL, &error);
  g_unsetenv ("AIRY_NO_FAST_PATH");
  g_assert_null (result);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_nonnull (strstr (error->message, "fused PSF path only, which AIRY_NO_FAST_PATH turns off"));
  g_clear_error (&error);
  /* and without it the same system runs */
  result = test_run (system, NULL);
  g_assert_nonnull (result);
}

static const char *gl_oil_vectorial =
  "\"f\": 100, \"n\": 1.518, \"na\": 1.4, \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\","
  " \"field\": \"vectorial\", \"polarization\": \"x\"";

static void
test_gl_matched_vectorial (void)
{
  check_gl_matched (gl_oil_vectorial);
}

static void
test_gl_focal_shift_vectorial (void)
{
  check_gl_focal_shift (gl_oil_vectorial, TRUE);
}

/* ---- 4. Parameters and presets ----------------------------------------- */

static void
test_parameters (void)
{
  /* declared once: the panel builds its rows from these specs and shows
   * the relevant ones */
  g_autoptr(AiryElement) o = airy_element_new ("objective-point-source", NULL);
  g_autoptr(AiryElement) gl = airy_element_new ("gibson-lanni", NULL);
  const char *const gl_keys[] = { "ns", "ng", "ng0", "tg", "tg0", "ni0", "ti0", "depth" };
  guint i;

  g_assert_nonnull (o);
  g_assert_nonnull (gl);
  g_assert_false (test_param_relevant_of (o, "polarization"));
  g_assert_false (test_param_relevant_of (o, "dipole-polar"));
  g_object_set (o, "field", AIRY_FIELD_VECTORIAL, NULL);
  g_assert_true (test_param_relevant_of (o, "polarization"));
  g_assert_false (test_param_relevant_of (o, "dipole-azimuth"));
  g_object_set (o, "polarization", AIRY_POLARIZATION_DIPOLE, NULL);
  g_assert_true (test_param_relevant_of (o, "dipole-polar"));
  g_assert_true (test_param_relevant_of (o, "dipole-azimuth"));
  for (i = 0; i < G_N_ELEMENTS (gl_keys); i++)
    g_assert_true (test_param_relevant_of (gl, gl_keys[i]));
}

static void
test_presets (void)
{
  /* oil-vectorial: unpolarized, aplanatic, NA 1.4 in oil, the PSF sampled
   * finer than λ/(4 NA); depth-aberration: the axial peak of the bead 20 µm
   * deep lies near twice the 10 µm one's (−12.4 µm), inside the scan */
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) ov = airy_system_new_from_preset ("oil-vectorial", &error);
  g_autoptr(AirySystem) da = NULL;
  g_autoptr(AiryResult) r = NULL;
  AiryElement *o;
  gsize centre;
  guint k, km = 0, nz;
  const double *z;
  double peak = 0.0;

  g_assert_no_error (error);
  o = g_ptr_array_index (airy_system_get_elements (ov), 0);
  g_assert_cmpint (airy_element_get_enum (o, "field"), ==, AIRY_FIELD_VECTORIAL);
  g_assert_cmpint (airy_element_get_enum (o, "polarization"), ==, AIRY_POLARIZATION_UNPOLARIZED);
  g_assert_cmpint (airy_element_get_enum (o, "apodisation"), ==, AIRY_APODISATION_APLANATIC);
  g_assert_cmpfloat (airy_element_get_double (o, "na"), ==, 1.4);
  g_assert_cmpfloat (airy_element_get_double (o, "n"), ==, 1.518);

  da = airy_system_new_from_preset ("depth-aberration", &error);
  g_assert_no_error (error);
  airy_system_set_shape (da, 128, 128);
  airy_system_set_spacing (da, airy_system_get_spacing (da) * 512 / 128);
  r = test_run (da, NULL);
  centre = (gsize) 64 * 128 + 64;
  for (k = 0; k < r->stack->depth; k++)
    if (airy_stack_plane (r->stack, k)[centre] > peak)
      peak = airy_stack_plane (r->stack, k)[centre], km = k;
  z = airy_system_get_z (da, &nz);
  g_test_message ("depth-aberration: axial peak at z = %.3f µm", z[km]);
  g_assert_cmpuint (km, >, 0);
  g_assert_cmpuint (km, <, nz - 1);
  g_assert_cmpfloat (z[km], <, -23.0);
  g_assert_cmpfloat (z[km], >, -26.0);
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
  g_test_add_func ("/engine/highna/gibson-lanni/needs-nonparaxial", test_gl_needs_nonparaxial);
  g_test_add_func ("/engine/highna/gibson-lanni/matched-vectorial", test_gl_matched_vectorial);
  g_test_add_func ("/engine/highna/gibson-lanni/focal-shift-vectorial", test_gl_focal_shift_vectorial);
  g_test_add_func ("/engine/highna/vectorial/low-na", test_vectorial_low_na);
  g_test_add_func ("/engine/highna/vectorial/x-elongation", test_vectorial_x_elongation);
  g_test_add_func ("/engine/highna/vectorial/unpolarized-symmetric", test_vectorial_unpolarized_symmetric);
  g_test_add_func ("/engine/highna/vectorial/energy", test_vectorial_energy);
  g_test_add_func ("/engine/highna/vectorial/z-dipole", test_vectorial_z_dipole);
  g_test_add_func ("/engine/highna/vectorial/errors", test_vectorial_errors);
  g_test_add_func ("/engine/highna/vectorial/no-fast-path", test_vectorial_no_fast_path);
  g_test_add_func ("/engine/highna/parameters", test_parameters);
  g_test_add_func ("/engine/highna/presets", test_presets);
  return g_test_run ();
}

#include "config.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include "airy-test-util.h"
#include "airy-elements-private.h"
#include "airy-ops-private.h"

/* Every op kind's adjoint (airy-ops-kinds.c) against its forward by the
 * dot-product test: ⟨J v, w⟩ = ⟨v, Jᵀ w⟩ with random v and w, to 1e-5 of
 * ‖J v‖·‖w‖ (the Cauchy–Schwarz bound of either side). ⟨a, b⟩ is the real
 * inner product Re Σ conj(a)·b. J v comes from the forward itself: the op
 * on v where it is linear, the difference of two forwards where it is
 * quadratic (exact for a quadratic map), or the forward's own scaling. */

static GRand *rng;

static void
fill_random (fftwf_complex *u, gsize n)
{
  gsize k;

  for (k = 0; k < n; k++)
    u[k] = (float) g_rand_double_range (rng, -1, 1) + I * (float) g_rand_double_range (rng, -1, 1);
}

static void
fill_random_real (float *v, gsize n)
{
  gsize k;

  for (k = 0; k < n; k++)
    v[k] = (float) g_rand_double_range (rng, -1, 1);
}

static double
cdot (const fftwf_complex *a, const fftwf_complex *b, gsize n)
{
  double s = 0.0;
  gsize k;

  for (k = 0; k < n; k++)
    s += (double) crealf (a[k]) * crealf (b[k]) + (double) cimagf (a[k]) * cimagf (b[k]);
  return s;
}

static double
rdot (const float *a, const float *b, gsize n)
{
  double s = 0.0;
  gsize k;

  for (k = 0; k < n; k++)
    s += (double) a[k] * b[k];
  return s;
}

static double
ddot (const double *a, const double *b, gsize n)
{
  double s = 0.0;
  gsize k;

  for (k = 0; k < n; k++)
    s += a[k] * b[k];
  return s;
}

/* ⟨J v, w⟩ = lhs, ⟨v, Jᵀ w⟩ = rhs, bound = ‖J v‖·‖w‖ */
static void
check_dot (const char *what, double lhs, double rhs, double bound)
{
  g_test_message ("%s: ⟨Jv, w⟩ = %.9g, ⟨v, Jᵀw⟩ = %.9g (%.2g of the bound)", what, lhs, rhs,
                  fabs (lhs - rhs) / bound);
  g_assert_cmpfloat (bound, >, 0.0);
  /* not a trivial zero: random vectors give ≈ 1/√n of the bound */
  g_assert_cmpfloat (fabs (lhs), >, 1e-4 * bound);
  if (fabs (lhs - rhs) > 1e-5 * bound)
    g_error ("%s: ⟨Jv, w⟩ = %.9g but ⟨v, Jᵀw⟩ = %.9g", what, lhs, rhs);
}

static AirySpectrum *
two_wavelengths (void)
{
  static const double wl[] = { 0.5, 0.62 }, wt[] = { 0.7, 0.3 };

  return airy_spectrum_new (wl, wt, 2, NULL);
}

static AiryField *
random_field (guint h, guint w)
{
  g_autoptr(AirySpectrum) s = two_wavelengths ();
  AiryField *f = airy_field_new (s, h, w, 0.3);

  fill_random (f->data, (gsize) f->n_lambda * h * w);
  return f;
}

static gsize
field_size (const AiryField *f)
{
  return (gsize) f->n_lambda * f->height * f->width;
}

/* A field op linear in u: J = the op. */
static void
check_linear_field_op (const char *what, AiryOp *op, guint h, guint w)
{
  const AiryOpKindInfo *kind = _airy_op_kind_info (op->kind);
  g_autoptr(AiryField) v = random_field (h, w);
  g_autoptr(AiryField) in = _airy_field_copy (v);
  g_autoptr(AiryField) jv = _airy_field_copy (v);
  g_autoptr(AiryField) bar = NULL;
  AiryPlane plane = { 0, 0.0, 1 };
  double lhs;

  g_assert_true (kind->forward (op, jv, &plane, NULL));
  bar = random_field (jv->height, jv->width);
  {
    g_autoptr(AiryField) w0 = _airy_field_copy (bar);

    lhs = cdot (jv->data, w0->data, field_size (jv));
    g_assert_true (kind->adjoint (op, in, bar, &plane, NULL, NULL));
    g_assert_cmpuint (bar->height, ==, h);
    g_assert_cmpuint (bar->width, ==, w);
    check_dot (what, lhs, cdot (v->data, bar->data, field_size (v)),
               sqrt (cdot (jv->data, jv->data, field_size (jv)) * cdot (w0->data, w0->data, field_size (w0))));
  }
}

static void
test_multiply (void)
{
  g_autoptr(AiryField) geometry = random_field (24, 20);
  AiryOp *op = _airy_op_take_factor (AIRY_OP_MULTIPLY, geometry);
  g_autoptr(AiryField) u = random_field (24, 20);
  g_autoptr(AiryField) df = random_field (24, 20);
  g_autoptr(AiryField) jv = _airy_field_copy (u);
  g_autoptr(AiryField) bar = random_field (24, 20);
  g_autoptr(AiryField) w0 = _airy_field_copy (bar);
  gsize n = field_size (u);
  g_autofree fftwf_complex *gf = g_new0 (fftwf_complex, n);
  AiryOpGrad grad = { .factor = gf };
  AiryOp *dir = _airy_op_take_factor (AIRY_OP_MULTIPLY, df);
  AiryPlane plane = { 0, 0.0, 1 };

  /* in the field */
  check_linear_field_op ("multiply (u)", op, 24, 20);
  /* in its factor: J δf = u·δf */
  g_assert_true (_airy_op_kind_info (AIRY_OP_MULTIPLY)->forward (dir, jv, &plane, NULL));
  g_assert_true (_airy_op_kind_info (AIRY_OP_MULTIPLY)->adjoint (op, u, bar, &plane, &grad, NULL));
  check_dot ("multiply (factor)", cdot (jv->data, w0->data, n), cdot (df->data, gf, n),
             sqrt (cdot (jv->data, jv->data, n) * cdot (w0->data, w0->data, n)));
  _airy_op_unref (op);
  _airy_op_unref (dir);
}

/* JONES: a random matrix per pixel and pair (2 × 2 complex, the entries
 * uniform in the unit square) */
static void
random_jones (guint y, guint x, guint pair, double j[8], gpointer user_data)
{
  guint m;

  for (m = 0; m < 8; m++)
    j[m] = g_rand_double_range (rng, -1, 1);
}

static void
test_jones (void)
{
  /* two wavelengths: one Jones pair (Ex, Ey) */
  g_autoptr(AiryField) geometry = random_field (12, 10);
  AiryOp *op = _airy_op_jones_new (geometry, random_jones, NULL);
  AiryOp *dir = _airy_op_jones_new (geometry, random_jones, NULL);
  g_autoptr(AiryField) u = random_field (12, 10);
  g_autoptr(AiryField) jv = _airy_field_copy (u);
  g_autoptr(AiryField) bar = random_field (12, 10);
  g_autoptr(AiryField) w0 = _airy_field_copy (bar);
  gsize n = field_size (u), nj = 2 * n;
  g_autofree fftwf_complex *gf = g_new0 (fftwf_complex, nj);
  AiryOpGrad grad = { .factor = gf };
  AiryPlane plane = { 0, 0.0, 1 };
  const AiryOpKindInfo *kind = _airy_op_kind_info (AIRY_OP_JONES);

  g_assert_cmpuint (geometry->n_lambda, ==, 2);
  /* in the field: ū = Jᴴ·ū' */
  check_linear_field_op ("jones (u)", op, 12, 10);
  /* in its matrix: J δJ = δJ·u, the pairs' four planes of dir->factor */
  g_assert_true (kind->forward (dir, jv, &plane, NULL));
  g_assert_true (kind->adjoint (op, u, bar, &plane, &grad, NULL));
  check_dot ("jones (matrix)", cdot (jv->data, w0->data, n), cdot (dir->factor, gf, nj),
             sqrt (cdot (jv->data, jv->data, n) * cdot (w0->data, w0->data, n)));
  _airy_op_unref (op);
  _airy_op_unref (dir);
}

static void
test_fft (void)
{
  static const guint shapes[][2] = { { 24, 20 }, { 25, 19 } };
  guint s, centred, sign, scaled;

  for (s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (centred = 0; centred < 2; centred++)
      for (sign = 0; sign < 2; sign++)
        for (scaled = 0; scaled < 2; scaled++)
          {
            g_autoptr(AiryField) geometry = random_field (shapes[s][0], shapes[s][1]);
            AiryOp *op = _airy_op_new (AIRY_OP_FFT, geometry);
            g_autofree char *what = g_strdup_printf ("fft %u × %u%s%s%s", shapes[s][0], shapes[s][1],
                                                     centred ? " centred" : "", sign ? " backward" : "",
                                                     scaled ? " scaled" : "");

            op->centred = centred;
            op->sign = sign ? AIRY_FFT_BACKWARD : AIRY_FFT_FORWARD;
            if (scaled)
              {
                op->scale = fftwf_alloc_complex (2);
                op->scale[0] = 0.3f - 1.2f * I;
                op->scale[1] = -0.7f + 0.1f * I;
              }
            check_linear_field_op (what, op, shapes[s][0], shapes[s][1]);
            _airy_op_unref (op);
          }
}

static void
test_resize (void)
{
  static const guint to[][2] = { { 32, 27 }, { 15, 12 }, { 30, 14 }, { 24, 20 } };
  guint t;

  for (t = 0; t < G_N_ELEMENTS (to); t++)
    {
      g_autoptr(AiryField) geometry = random_field (to[t][0], to[t][1]);
      AiryOp *op = _airy_op_new (AIRY_OP_RESIZE, geometry);
      g_autofree char *what = g_strdup_printf ("resize 24 × 20 → %u × %u", to[t][0], to[t][1]);

      check_linear_field_op (what, op, 24, 20);
      _airy_op_unref (op);
    }
}

/* A source in one of its complex parameters: J δp is `dir`'s forward (an op
 * like `op` with δp in that parameter), Jᵀ w lands in grad->factor, and
 * the field's own cotangent is zero (a source overwrites it). */
static void
check_source (const char *what, AiryOp *op, AiryOp *dir, fftwf_complex *dp, double t)
{
  const AiryOpKindInfo *kind = _airy_op_kind_info (op->kind);
  gsize n = (gsize) op->n_lambda * op->height * op->width, k;
  g_autoptr(AiryField) jv = random_field (op->height, op->width);
  g_autoptr(AiryField) in = random_field (op->height, op->width);
  g_autoptr(AiryField) bar = random_field (op->height, op->width);
  g_autoptr(AiryField) w0 = _airy_field_copy (bar);
  g_autofree fftwf_complex *gf = g_new0 (fftwf_complex, n);
  AiryOpGrad grad = { .factor = gf };
  AiryPlane plane = { 0, t, 1 };

  g_assert_true (kind->forward (dir, jv, &plane, NULL));
  g_assert_true (kind->adjoint (op, in, bar, &plane, &grad, NULL));
  check_dot (what, cdot (jv->data, w0->data, n), cdot (dp, gf, n),
             sqrt (cdot (jv->data, jv->data, n) * cdot (w0->data, w0->data, n)));
  for (k = 0; k < n; k++)
    g_assert_true (bar->data[k] == 0.0f);
}

static void
test_set (void)
{
  g_autoptr(AiryField) f = random_field (16, 18);
  g_autoptr(AiryField) df = random_field (16, 18);
  AiryOp *op = _airy_op_take_factor (AIRY_OP_SET, f);
  AiryOp *dir = _airy_op_take_factor (AIRY_OP_SET, df);

  check_source ("set (factor)", op, dir, df->data, 0.0);
  _airy_op_unref (op);
  _airy_op_unref (dir);
}

static void
test_objective (void)
{
  g_autoptr(AiryField) f = random_field (16, 18);
  g_autoptr(AiryField) df = random_field (16, 18);
  gsize n = field_size (f), k;
  AiryOp *op = _airy_op_take_factor (AIRY_OP_OBJECTIVE, f);
  AiryOp *dir = _airy_op_take_factor (AIRY_OP_OBJECTIVE, df);
  g_autofree double *dg = g_new (double, n);
  g_autofree double *gg = g_new0 (double, n);
  double t = 0.8 + 0.35;

  op->z = dir->z = 0.35;
  op->phase = g_new (double, n);
  for (k = 0; k < n; k++)
    op->phase[k] = g_rand_double_range (rng, -3, 3);
  dir->phase = g_memdup2 (op->phase, n * sizeof (double));
  /* in F: J δF = δF·e^{itG}, the forward with δF */
  check_source ("objective (F)", op, dir, df->data, 0.8);
  /* in G: δu = i·t·u·δG = the forward with F' = i·t·F·δG */
  for (k = 0; k < n; k++)
    {
      dg[k] = g_rand_double_range (rng, -1, 1);
      dir->factor[k] = (fftwf_complex) (I * t * dg[k]) * op->factor[k];
    }
  {
    const AiryOpKindInfo *kind = _airy_op_kind_info (AIRY_OP_OBJECTIVE);
    g_autoptr(AiryField) jv = random_field (16, 18);
    g_autoptr(AiryField) in = random_field (16, 18);
    g_autoptr(AiryField) bar = random_field (16, 18);
    g_autoptr(AiryField) w0 = _airy_field_copy (bar);
    AiryOpGrad grad = { .phase = gg };
    AiryPlane plane = { 0, 0.8, 1 };

    g_assert_true (kind->forward (dir, jv, &plane, NULL));
    g_assert_true (kind->adjoint (op, in, bar, &plane, &grad, NULL));
    check_dot ("objective (G)", cdot (jv->data, w0->data, n), ddot (dg, gg, n),
               sqrt (cdot (jv->data, jv->data, n) * cdot (w0->data, w0->data, n)));
  }
  _airy_op_unref (op);
  _airy_op_unref (dir);
}

/* POINT and GAUSS in their power: u ∝ √power, so u(4P) − u(P) = u(P) and
 * J δP = (u(4P) − u(P))·δP/(2P) from two forwards. */
static void
check_generated_power (AiryOpKind kind_id, const char *what)
{
  const AiryOpKindInfo *kind = _airy_op_kind_info (kind_id);
  g_autoptr(AiryField) geometry = random_field (20, 22);
  AiryOp *op = _airy_op_new (kind_id, geometry);
  gsize n = field_size (geometry), k;
  g_autoptr(AiryField) u1 = _airy_field_copy (geometry);
  g_autoptr(AiryField) u4 = _airy_field_copy (geometry);
  g_autoptr(AiryField) bar = random_field (20, 22);
  g_autoptr(AiryField) w0 = _airy_field_copy (bar);
  g_autoptr(AiryField) jv = _airy_field_copy (geometry);
  AiryOpGrad grad = { 0 };
  AiryPlane plane = { 0, 40.0, 1 };
  double dp = 0.37, power = 2.5;

  op->n = 1.33;
  op->z = 5.0;
  op->waist = 2.0;
  op->power = 4 * power;
  g_assert_true (kind->forward (op, u4, &plane, NULL));
  op->power = power;
  g_assert_true (kind->forward (op, u1, &plane, NULL));
  for (k = 0; k < n; k++)
    jv->data[k] = (u4->data[k] - u1->data[k]) * (float) (dp / (2 * power));
  g_assert_true (kind->adjoint (op, geometry, bar, &plane, &grad, NULL));
  check_dot (what, cdot (jv->data, w0->data, n), dp * grad.power,
             sqrt (cdot (jv->data, jv->data, n) * cdot (w0->data, w0->data, n)));
  _airy_op_unref (op);
}

/* POINT in its distance: J δz by central differences of two forwards (in
 * float: 2·10⁻⁷ of |u| over 2ε = 0.1 µm, far below the dot test's
 * 10⁻⁵; the truncation, ε²/6·|u'''|, is smaller still). */
static void
test_point_z (void)
{
  const AiryOpKindInfo *kind = _airy_op_kind_info (AIRY_OP_POINT);
  g_autoptr(AiryField) geometry = random_field (20, 22);
  AiryOp *op = _airy_op_new (AIRY_OP_POINT, geometry);
  gsize n = field_size (geometry), k;
  g_autoptr(AiryField) up = _airy_field_copy (geometry);
  g_autoptr(AiryField) um = _airy_field_copy (geometry);
  g_autoptr(AiryField) bar = random_field (20, 22);
  g_autoptr(AiryField) w0 = _airy_field_copy (bar);
  g_autoptr(AiryField) jv = _airy_field_copy (geometry);
  AiryOpGrad grad = { 0 };
  AiryPlane plane = { 0, 40.0, 1 };
  double dz = 0.8, eps = 0.05;

  op->n = 1.33;
  op->power = 1.0;
  op->z = 5.0 + eps;
  g_assert_true (kind->forward (op, up, &plane, NULL));
  op->z = 5.0 - eps;
  g_assert_true (kind->forward (op, um, &plane, NULL));
  op->z = 5.0;
  for (k = 0; k < n; k++)
    jv->data[k] = (up->data[k] - um->data[k]) * (float) (dz / (2 * eps));
  g_assert_true (kind->adjoint (op, geometry, bar, &plane, &grad, NULL));
  check_dot ("point (z)", cdot (jv->data, w0->data, n), dz * grad.z,
             sqrt (cdot (jv->data, jv->data, n) * cdot (w0->data, w0->data, n)));
  _airy_op_unref (op);
}

static void
test_generated (void)
{
  check_generated_power (AIRY_OP_POINT, "point (power)");
  check_generated_power (AIRY_OP_GAUSS, "gauss (power)");
  test_point_z ();
}

/* I = Σ w_l |u_l|² is quadratic: J v = (I(u + v) − I(u − v))/2. */
static void
test_intensity (void)
{
  g_autoptr(AiryField) u = random_field (20, 18);
  g_autoptr(AiryField) v = random_field (20, 18);
  g_autoptr(AiryField) up = _airy_field_copy (u);
  g_autoptr(AiryField) um = _airy_field_copy (u);
  g_autoptr(AiryField) bar = random_field (1, 1);
  gsize np = 20 * 18, n = field_size (u), k;
  g_autofree float *ip = g_new (float, np), *im = g_new (float, np), *jv = g_new (float, np);
  g_autofree float *w = g_new (float, np);
  AiryOp op = { .kind = AIRY_OP_INTENSITY, .n_lambda = 2, .height = 20, .width = 18,
                .weights = (double[]) { 0.7, 0.3 } };

  for (k = 0; k < n; k++)
    {
      up->data[k] += v->data[k];
      um->data[k] -= v->data[k];
    }
  _airy_op_intensity_forward (&op, up, ip);
  _airy_op_intensity_forward (&op, um, im);
  for (k = 0; k < np; k++)
    jv[k] = (ip[k] - im[k]) / 2;
  fill_random_real (w, np);
  _airy_op_intensity_adjoint (&op, u, w, bar);
  check_dot ("intensity", rdot (jv, w, np), cdot (v->data, bar->data, n), sqrt (rdot (jv, jv, np) * rdot (w, w, np)));
}

/* The fused PSF of a small microscope, quadratic in F: J δF = (I(F + δF) −
 * I(F − δF))/2; in G, δE = i·t·E·δG is the F direction i·t·F·δG. */
static void
test_fused_psf (void)
{
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5, 0.6]},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.5, \"z\": 0.4},"
    "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  AiryRunOptions options = { 0 };
  g_autoptr(AiryPlan) plan = _airy_plan_new (system, &options, NULL, NULL);
  AiryOp *op;
  AiryFusedPsf *psf;
  gsize nb, np = 32 * 32, k;
  g_autofree fftwf_complex *F = NULL, *dF = NULL, *gf = NULL;
  g_autofree double *dG = NULL, *gg = NULL;
  g_autofree float *ip = g_new (float, np), *im = g_new (float, np), *jv = g_new (float, np), *w = g_new (float, np);
  double z = 0.7, t;
  guint pass;

  g_assert_true (_airy_plan_compile (plan, NULL));
  op = g_ptr_array_index (plan->ops, 0);
  g_assert_cmpint (op->kind, ==, AIRY_OP_FUSED_PSF);
  psf = op->psf;
  t = z + psf->z0;
  nb = (gsize) op->n_lambda * psf->rows * op->width;
  F = g_memdup2 (psf->F, nb * sizeof (fftwf_complex));
  dF = g_new (fftwf_complex, nb);
  dG = g_new (double, nb);
  gf = g_new0 (fftwf_complex, nb);
  gg = g_new0 (double, nb);
  fill_random (dF, nb);
  for (k = 0; k < nb; k++)
    dG[k] = g_rand_double_range (rng, -1, 1);
  fill_random_real (w, np);
  _airy_fused_psf_adjoint (op, z, 1, w, &(AiryOpGrad) { .factor = gf, .phase = gg });
  for (pass = 0; pass < 2; pass++)
    {
      /* the direction in F: δF, or i·t·F·δG for G */
      for (k = 0; k < nb; k++)
        {
          fftwf_complex d = pass == 0 ? dF[k] : (fftwf_complex) (I * t * dG[k]) * F[k];
          psf->F[k] = F[k] + d;
        }
      _airy_fused_psf_reference (op, z, 1, ip);
      for (k = 0; k < nb; k++)
        psf->F[k] = 2 * F[k] - psf->F[k];
      _airy_fused_psf_reference (op, z, 1, im);
      for (k = 0; k < np; k++)
        jv[k] = (ip[k] - im[k]) / 2;
      check_dot (pass == 0 ? "fused-psf (F)" : "fused-psf (G)", rdot (jv, w, np),
                 pass == 0 ? cdot (dF, gf, nb) : ddot (dG, gg, nb), sqrt (rdot (jv, jv, np) * rdot (w, w, np)));
    }
  memcpy (psf->F, F, nb * sizeof (fftwf_complex));
}

/* An op of the intensity stage, linear (or affine: J v = f(v) − f(0)). */
static void
check_image_op (const char *what, const AiryOp *op, guint n_in, gsize in_size, gsize out_size, gboolean affine)
{
  const AiryOpKindInfo *kind = _airy_op_kind_info (op->kind);
  gsize ni = n_in * in_size, no = (op->kind == AIRY_OP_SENSOR ? n_in : 1) * out_size, k;
  g_autofree float *v = g_new (float, ni), *zero = g_new0 (float, ni), *jv = g_new (float, no);
  g_autofree float *f0 = g_new (float, no), *w = g_new (float, no), *bar = g_new (float, ni);

  fill_random_real (v, ni);
  fill_random_real (w, no);
  g_assert_true (kind->image_forward (op, v, n_in, 0, jv, NULL));
  if (affine)
    {
      g_assert_true (kind->image_forward (op, zero, n_in, 0, f0, NULL));
      for (k = 0; k < no; k++)
        jv[k] -= f0[k];
    }
  g_assert_true (kind->image_adjoint (op, v, n_in, 0, w, bar, NULL, NULL));
  check_dot (what, rdot (jv, w, no), rdot (v, bar, ni), sqrt (rdot (jv, jv, no) * rdot (w, w, no)));
}

static void
test_sum (void)
{
  AiryReduceOp r = { AIRY_REDUCE_AXIS_PLANES, 5 };
  AiryOp op = { .kind = AIRY_OP_SUM, .n_lambda = 1, .height = 12, .width = 17, .reduce = &r };

  check_image_op ("sum", &op, 5, 12 * 17, 12 * 17, FALSE);
}

static void
test_sensor (void)
{
  AirySensorOp s = {
    .in_height = 30, .in_width = 26, .in_dy = 0.1, .in_dx = 0.12,
    .noise = { .exposure = 3.0, .gain = 0.5, .offset = 7.0 },
  };
  AiryOp op = { .kind = AIRY_OP_SENSOR, .n_lambda = 1, .sensor = &s };
  g_autoptr(GError) error = NULL;
  g_autofree float *in = g_new0 (float, 30 * 26), *out = g_new (float, 30 * 26), *bar = g_new (float, 30 * 26);

  /* the same pixels, with gain, exposure and offset */
  s.resample = AIRY_SENSOR_COPY;
  op.height = s.out_height = 30;
  op.width = s.out_width = 26;
  check_image_op ("sensor (copy)", &op, 3, 30 * 26, 30 * 26, TRUE);
  /* block sums of 4 × 4 (the last rows and columns are not read) */
  s.resample = AIRY_SENSOR_BLOCK_SUM;
  s.factor = 4;
  op.height = s.out_height = 7;
  op.width = s.out_width = 6;
  check_image_op ("sensor (block sum)", &op, 2, 30 * 26, 7 * 6, TRUE);
  /* bilinear onto 0.23 µm pixels, the sum kept */
  s.resample = AIRY_SENSOR_LINEAR;
  op.height = s.out_height = 13;
  op.width = s.out_width = 13;
  s.out_dy = s.out_dx = 0.23;
  s.scale = 0.23 * 0.23 / (0.1 * 0.12);
  check_image_op ("sensor (linear)", &op, 1, 30 * 26, 13 * 13, TRUE);
  /* in gain, exposure and offset: y is linear in each, J δ = y(p + δ) − y(p) */
  {
    const AiryOpKindInfo *kind = _airy_op_kind_info (AIRY_OP_SENSOR);
    gsize ni = 30 * 26, no = 13 * 13, k;
    g_autofree float *v = g_new (float, ni), *y0 = g_new (float, no), *y1 = g_new (float, no);
    g_autofree float *w = g_new (float, no), *jv = g_new (float, no), *ib = g_new (float, ni);
    AiryOpGrad grad = { 0 };
    double *params[] = { &s.noise.gain, &s.noise.exposure, &s.noise.offset }, delta = 0.75;
    const char *names[] = { "sensor (gain)", "sensor (exposure)", "sensor (offset)" };
    guint p;

    fill_random_real (v, ni);
    fill_random_real (w, no);
    g_assert_true (kind->image_adjoint (&op, v, 1, 0, w, ib, &grad, NULL));
    for (p = 0; p < 3; p++)
      {
        double *q = params[p], keep = *q, g = p == 0 ? grad.gain : p == 1 ? grad.exposure : grad.offset;

        g_assert_true (kind->image_forward (&op, v, 1, 0, y0, NULL));
        *q = keep + delta;
        g_assert_true (kind->image_forward (&op, v, 1, 0, y1, NULL));
        *q = keep;
        for (k = 0; k < no; k++)
          jv[k] = y1[k] - y0[k];
        check_dot (names[p], rdot (jv, w, no), delta * g, sqrt (rdot (jv, jv, no) * rdot (w, w, no)));
      }
  }
  /* the noise has none */
  s.noise.noise = 1;
  g_assert_false (_airy_op_kind_info (AIRY_OP_SENSOR)->image_adjoint (&op, in, 1, 0, out, bar, NULL, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_assert_cmpstr (error->message, ==, "sensor: noise, saturation and rounding have no derivative; the adjoint "
                                       "needs a sensor without them");
}

/* CONVOLVE is bilinear: in the planes for its sample, and in the sample
 * (a file's planes) for given planes. */
static void
test_convolve (void)
{
  guint n = 3, ph = 40, pw = 36;
  AiryStack *volume = airy_stack_new (n, 22, 20);
  AiryStack **box = g_atomic_rc_box_new (AiryStack *);
  AiryConvolveOp c = {
    .kind = AIRY_SAMPLE_FILE, .n_planes = n, .psf_height = 15, .psf_width = 13,
    .vol_height = 22, .vol_width = 20, .pad_height = ph, .pad_width = pw,
  };
  AiryOp op = { .kind = AIRY_OP_CONVOLVE, .n_lambda = 1, .height = 22, .width = 20, .convolve = &c };
  gsize npsf = 15 * 13, nvol = 22 * 20;
  g_autofree float *planes = g_new (float, n * npsf), *jv = g_new (float, nvol), *w = g_new (float, nvol);
  g_autofree float *bar = g_new (float, n * npsf), *gs = g_new0 (float, n * nvol);
  g_autofree float *dv = g_new (float, n * nvol);
  const AiryOpKindInfo *kind = _airy_op_kind_info (AIRY_OP_CONVOLVE);

  *box = volume;
  c.volume = box;
  fill_random_real (volume->data, n * nvol);
  /* in the planes */
  check_image_op ("convolve (planes)", &op, n, npsf, nvol, FALSE);
  /* in the sample: J δV = conv(I, δV), the forward with δV as the file */
  fill_random_real (planes, n * npsf);
  fill_random_real (w, nvol);
  g_assert_true (kind->image_adjoint (&op, planes, n, 0, w, bar, &(AiryOpGrad) { .sample = gs }, NULL));
  fill_random_real (dv, n * nvol);
  memcpy (volume->data, dv, n * nvol * sizeof (float));
  g_assert_true (kind->image_forward (&op, planes, n, 0, jv, NULL));
  check_dot ("convolve (sample)", rdot (jv, w, nvol), rdot (dv, gs, n * nvol), sqrt (rdot (jv, jv, nvol) * rdot (w, w, nvol)));
  g_atomic_rc_box_release_full (box, _airy_volume_box_clear);
}

/* The reference interpreter's adjoint run of a whole field stage (plane
 * wave → pupil → FF lens → intensity, unfused): in the pupil's factor the
 * intensity is quadratic, J δf = (I(f + δf) − I(f − δf))/2; APPLY has no
 * adjoint, said so. */
static void
test_chain (void)
{
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [32, 30], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5, 0.6]},"
    " \"elements\": [{\"type\": \"plane-wave\", \"angle-x\": 0.02}, {\"type\": \"circular-pupil\", \"diameter\": 9},"
    "  {\"type\": \"ff-lens\", \"f\": 100}]}");
  AiryRunOptions options = { 0 };
  g_autoptr(AiryPlan) plan = _airy_plan_new (system, &options, NULL, NULL);
  g_autoptr(AiryOpList) list = _airy_ops_compile (plan, NULL);
  g_autoptr(AiryField) field = NULL;
  AiryOp *mask;
  AiryPlane plane = { 0, 0.0, 1 };
  gsize n, np, k;
  g_autofree fftwf_complex *f = NULL, *df = NULL, *gf = NULL;
  g_autofree float *ip = NULL, *im = NULL, *jv = NULL, *w = NULL;
  AiryOpGrad grads[4] = { { 0 } };

  _airy_ops_end_field (list, plan->spectrum);
  g_assert_cmpuint (list->ops->len, ==, 4);
  mask = g_ptr_array_index (list->ops, 1);
  g_assert_cmpint (mask->kind, ==, AIRY_OP_MULTIPLY);
  n = (gsize) mask->n_lambda * mask->height * mask->width;
  np = (gsize) plan->psf_height * plan->psf_width;
  f = g_memdup2 (mask->factor, n * sizeof (fftwf_complex));
  df = g_new (fftwf_complex, n);
  gf = g_new0 (fftwf_complex, n);
  ip = g_new (float, np);
  im = g_new (float, np);
  jv = g_new (float, np);
  w = g_new (float, np);
  fill_random (df, n);
  fill_random_real (w, np);
  field = airy_field_new (plan->spectrum, plan->in_height, plan->in_width, 0.5);
  grads[1].factor = gf;
  g_assert_true (_airy_ops_run_vjp (list->ops, field, &plane, w, grads, NULL));
  for (k = 0; k < n; k++)
    mask->factor[k] = f[k] + df[k];
  g_assert_true (_airy_ops_run_intensity (list->ops, field, &plane, ip, NULL));
  for (k = 0; k < n; k++)
    mask->factor[k] = f[k] - df[k];
  g_assert_true (_airy_ops_run_intensity (list->ops, field, &plane, im, NULL));
  memcpy (mask->factor, f, n * sizeof (fftwf_complex));
  for (k = 0; k < np; k++)
    jv[k] = (ip[k] - im[k]) / 2;
  check_dot ("chain (pupil factor)", rdot (jv, w, np), cdot (df, gf, n), sqrt (rdot (jv, jv, np) * rdot (w, w, np)));

  /* every kind but APPLY declares its adjoint; the ends are their own */
  g_assert_null (_airy_op_kind_info (AIRY_OP_APPLY)->adjoint);
  for (k = 0; k < AIRY_N_OP_KINDS; k++)
    {
      const AiryOpKindInfo *kind = _airy_op_kind_info ((AiryOpKind) k);

      if (k == AIRY_OP_APPLY || k == AIRY_OP_INTENSITY || k == AIRY_OP_FUSED_PSF)
        continue;
      g_assert_true ((kind->forward != NULL && kind->adjoint != NULL)
                     || (kind->image_forward != NULL && kind->image_adjoint != NULL));
    }
}

/* The whole program's adjoint (_airy_ops_run_program_vjp) in one factor
 * of its field stage, for a program that is quadratic in it (every op
 * after it linear or affine): J δf = (P(f + δf) − P(f − δf))/2. */
static void
check_program (const char *what, const char *json, guint at, const char *kinds)
{
  g_autoptr(AirySystem) system = test_system (json);
  AiryRunOptions options = { 0 };
  g_autoptr(AiryPlan) plan = _airy_plan_new (system, &options, NULL, NULL);
  g_autofree char *described = NULL;
  g_autoptr(AiryStack) pp = NULL;
  g_autoptr(AiryStack) pm = NULL;
  g_autofree AiryOpGrad *grads = NULL;
  g_autofree fftwf_complex *f = NULL, *df = NULL, *gf = NULL;
  g_autofree float *w = NULL, *jv = NULL;
  fftwf_complex *factor;
  AiryOp *op;
  gsize n, no, k;

  g_assert_true (_airy_plan_compile (plan, NULL));
  described = _airy_plan_describe (plan);
  g_assert_cmpstr (described, ==, kinds);
  op = g_ptr_array_index (plan->ops, at);
  factor = op->kind == AIRY_OP_FUSED_PSF ? op->psf->F : op->factor;
  n = op->kind == AIRY_OP_FUSED_PSF ? (gsize) op->n_lambda * op->psf->rows * op->width
                                    : (gsize) op->n_lambda * op->height * op->width;
  f = g_memdup2 (factor, n * sizeof (fftwf_complex));
  df = g_new (fftwf_complex, n);
  gf = g_new0 (fftwf_complex, n);
  fill_random (df, n);
  for (k = 0; k < n; k++)
    factor[k] = f[k] + df[k];
  pp = _airy_ops_run_program (plan->ops, plan->n_planes, plan->z, 1, NULL);
  for (k = 0; k < n; k++)
    factor[k] = f[k] - df[k];
  pm = _airy_ops_run_program (plan->ops, plan->n_planes, plan->z, 1, NULL);
  memcpy (factor, f, n * sizeof (fftwf_complex));
  no = (gsize) pp->depth * airy_stack_plane_size (pp);
  jv = g_new (float, no);
  w = g_new (float, no);
  for (k = 0; k < no; k++)
    jv[k] = (pp->data[k] - pm->data[k]) / 2;
  fill_random_real (w, no);
  grads = g_new0 (AiryOpGrad, plan->ops->len);
  grads[at].factor = gf;
  g_assert_true (_airy_ops_run_program_vjp (plan->ops, plan->n_planes, plan->z, 1, w, grads, NULL));
  check_dot (what, rdot (jv, w, no), cdot (df, gf, n), sqrt (rdot (jv, jv, no) * rdot (w, w, no)));
}

static void
test_program (void)
{
  g_autofree char *microscope = test_microscope_json ("{\"beads\": {\"count\": 12, \"seed\": 5, \"intensity\": 3}}",
                                                      "\"reduce\": \"sum\", \"resample\": \"block-sum\", \"factor\": 2,"
                                                      " \"gain\": 2, \"exposure\": 5, \"offset\": 9", 32, 3);

  /* the fused PSF's F through CONVOLVE and a block-summing sensor */
  check_program ("program: fused-psf convolve sensor", microscope, 0, "fused-psf convolve sensor");
  /* a pupil's factor through the field ops of each plane, SUM and a
   * bilinear sensor */
  check_program ("program: gauss multiply fft intensity sum sensor",
                 "{\"airy\": 1, \"grid\": {\"shape\": [32, 32], \"spacing\": 0.5}, \"spectrum\": {\"wavelengths\": [0.5, 0.6]},"
                 " \"z\": {\"values\": [0, 20, -30]},"
                 " \"elements\": [{\"type\": \"gaussian-beam\", \"waist\": 3}, {\"type\": \"circular-pupil\", \"diameter\": 9},"
                 "  {\"type\": \"ff-lens\", \"f\": 100}],"
                 " \"sensor\": {\"reduce\": \"sum\", \"resample\": \"linear\", \"spacing\": 2.3, \"gain\": 3}}",
                 1, "gauss multiply fft intensity sum sensor");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  airy_init ();
  rng = g_rand_new_with_seed (27);
  g_test_add_func ("/adjoint/multiply", test_multiply);
  g_test_add_func ("/adjoint/jones", test_jones);
  g_test_add_func ("/adjoint/fft", test_fft);
  g_test_add_func ("/adjoint/resize", test_resize);
  g_test_add_func ("/adjoint/set", test_set);
  g_test_add_func ("/adjoint/objective", test_objective);
  g_test_add_func ("/adjoint/generated", test_generated);
  g_test_add_func ("/adjoint/intensity", test_intensity);
  g_test_add_func ("/adjoint/fused-psf", test_fused_psf);
  g_test_add_func ("/adjoint/sum", test_sum);
  g_test_add_func ("/adjoint/sensor", test_sensor);
  g_test_add_func ("/adjoint/convolve", test_convolve);
  g_test_add_func ("/adjoint/chain", test_chain);
  g_test_add_func ("/adjoint/program", test_program);
  return g_test_run ();
}

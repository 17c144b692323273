/* Phase retrieval (issue 19): the fit's forward model against airy_run, its
 * gradient against finite differences, synthetic beads recovered with
 * their uncertainties, bad input, and the CLI. */

#include "config.h"

#include <sys/wait.h>

#include <json-glib/json-glib.h>

#include "airy-fit-private.h"
#include "airy-test-fit.h"

/* airy_run's PSF stack of a microscope */
static AiryStack *
run_psf (AirySystem *system)
{
  AiryRunOptions options = { .keep_psf = TRUE, .threads = 2 };
  g_autoptr(AiryResult) result = test_run (system, &options);

  g_assert_nonnull (result->psf);
  return airy_stack_copy (result->psf);
}

/* p ← the true terms, the bead at (x, y, z), amplitude 1, background 0;
 * the model there (into mu) is psf to 1e-5 of its peak, which it returns */
static double
assert_model_at_truth (AiryFitModel *m, const AiryStack *psf, double *p, double x, double y, double z,
                       float *mu, gsize n)
{
  guint K = G_N_ELEMENTS (true_idx), i;
  double peak = 0, diff = 0;
  gsize q;

  for (i = 0; i < K; i++)
    p[i] = true_c[i];
  p[K] = x;
  p[K + 1] = y;
  p[K + 2] = z;
  p[K + 3] = 1.0;
  p[K + 4] = 0.0;
  _airy_fit_model_eval (m, p, mu);
  g_assert_cmpuint (psf->depth * psf->height * psf->width, ==, n);
  for (q = 0; q < n; q++)
    {
      peak = MAX (peak, psf->data[q]);
      diff = MAX (diff, fabs (mu[q] - psf->data[q]));
    }
  g_test_message ("peak %g, largest difference %g (%g of the peak)", peak, diff, diff / peak);
  g_assert_cmpfloat (peak, >, 0);
  g_assert_cmpfloat (diff, <=, 1e-5 * peak);
  return peak;
}

/* The model at the true parameters is airy_run's PSF of the system with
 * those terms, the bead offset (objective offset, magnification 1) and
 * depth (the objective's extra defocus −z_b): to 1e-5 of the peak. The
 * truth's source is at (x, y, −z) µm; both are size² × planes. */
static void
check_model_matches_run (AirySystem *truth, AirySystem *base, guint size, guint planes, double x, double y, double z)
{
  g_autoptr(AiryStack) psf = run_psf (truth);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitModel) m = _airy_fit_model_new (base, true_idx, G_N_ELEMENTS (true_idx), size, size, 2, NULL, &error);
  guint K = G_N_ELEMENTS (true_idx);
  double p[K + 5], peak;
  g_autofree float *mu = NULL;
  gsize n = (gsize) planes * size * size, q;

  g_assert_no_error (error);
  g_assert_cmpuint (_airy_fit_model_n_params (m), ==, K + 5);
  mu = g_new (float, n);
  peak = assert_model_at_truth (m, psf, p, x, y, z, mu, n);

  /* and the amplitude and background are what they say */
  p[K + 3] = 250.0;
  p[K + 4] = 7.0;
  _airy_fit_model_eval (m, p, mu);
  for (q = 0; q < n; q++)
    g_assert_cmpfloat (fabs (mu[q] - (250.0 * psf->data[q] + 7.0)), <=, 1e-4 * (250.0 * peak));
}

static void
test_model_matches_run (gconstpointer data)
{
  const char *defocus_model = data;
  g_autofree char *mask = mask_json (true_idx, true_c, G_N_ELEMENTS (true_idx));
  g_autofree char *extra = g_strdup_printf (", \"offset-x\": 0.23, \"offset-y\": -0.17, \"z\": -0.3, "
                                            "\"defocus-model\": \"%s\"", defocus_model);
  g_autofree char *plain = g_strdup_printf (", \"defocus-model\": \"%s\"", defocus_model);
  g_autoptr(AirySystem) truth = micro_system (64, 12, extra, mask);
  g_autoptr(AirySystem) base = micro_system (64, 12, plain, NULL);

  check_model_matches_run (truth, base, 64, 12, 0.23, -0.17, 0.3);
}

/* The fit's basis is the one its mask's op carries: with the mask's
 * pupil-radius set (here 2/3 of the objective's), the model at the true
 * terms is airy_run's PSF of the system with that mask, to 1e-5 of the
 * peak (a basis over the objective's radius misses by far more). */
static void
test_model_pupil_radius (void)
{
  g_autoptr(AirySystem) base = micro_system (64, 6, NULL, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryElement) zero = _airy_fit_zernike_mask_new (true_idx, NULL, G_N_ELEMENTS (true_idx), &error);
  g_autoptr(AiryElement) terms = _airy_fit_zernike_mask_new (true_idx, true_c, G_N_ELEMENTS (true_idx), &error);
  g_autoptr(AirySystem) truth = NULL;
  g_autoptr(AiryStack) psf = NULL;
  g_autoptr(AiryFitModel) m = NULL;
  guint K = G_N_ELEMENTS (true_idx);
  double p[K + 5];
  g_autofree float *mu = NULL;
  gsize n = (gsize) 6 * 64 * 64;

  g_assert_no_error (error);
  /* the objective's pupil: f·NA/n = 100 · 0.8 / 1.33 = 60.15 µm */
  g_object_set (zero, "pupil-radius", 40.0, NULL);
  g_object_set (terms, "pupil-radius", 40.0, NULL);
  truth = _airy_fit_system_insert_mask (base, terms, NULL);
  psf = run_psf (truth);
  m = _airy_fit_model_new_for_mask (base, zero, 64, 64, 2, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (_airy_fit_model_n_params (m), ==, K + 5);
  mu = g_new (float, n);
  assert_model_at_truth (m, psf, p, 0.0, 0.0, 0.0, mu, n);
}

/* The same for the vectorial field at NA 1.4 in oil (unpolarized, aplanatic):
 * its six field components (x and y input, three each) share the phase. */
static void
test_model_matches_run_vectorial (void)
{
  g_autofree char *mask = mask_json (true_idx, true_c, G_N_ELEMENTS (true_idx));
  g_autoptr(AirySystem) truth = oil_system (64, 8, TRUE, ", \"offset-x\": 0.13, \"offset-y\": -0.09, \"z\": -0.2", mask);
  g_autoptr(AirySystem) base = oil_system (64, 8, TRUE, NULL, NULL);

  check_model_matches_run (truth, base, 64, 8, 0.13, -0.09, 0.2);
}

/* The analytic gradient equals central finite differences to 1e-4
 * (relative) for every free parameter, Poisson and least squares; the
 * scalar microscope, and the vectorial field at NA 1.4 (vectorial, 1 in
 * the data's second bit). */
static void
test_gradient (gconstpointer data)
{
  gboolean poisson = GPOINTER_TO_INT (data) & 1, vectorial = GPOINTER_TO_INT (data) & 2;
  g_autoptr(AirySystem) base = vectorial ? oil_system (48, 16, TRUE, NULL, NULL) : micro_system (48, 16, NULL, NULL);
  static const int idx[] = { 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
  guint K = G_N_ELEMENTS (idx), P = K + 5, i, j;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitModel) m = _airy_fit_model_new (base, idx, K, 48, 48, 2, NULL, &error);
  gsize n = (gsize) 16 * 48 * 48;
  g_autofree float *d = g_new (float, n);
  double p[P], g[P], h[P], worst = 0;

  g_assert_no_error (error);
  test_fit_data_and_point (m, 7, d, p);
  /* steps where the float transforms' rounding is far below the change;
   * Richardson's extrapolation of two central differences removes their
   * O(h²) error */
  for (i = 0; i < K; i++)
    h[i] = poisson ? 6e-4 : 5e-3;
  h[K] = h[K + 1] = 1e-3;
  h[K + 2] = 2e-3;
  h[K + 3] = 1e-3 * p[K + 3];
  h[K + 4] = 2e-2;
  _airy_fit_model_loss (m, d, poisson, 4.0, p, g);
  for (i = 0; i < P; i++)
    {
      double q[P], fd[2], rel, fdr;
      guint s;

      for (s = 0; s < 2; s++)
        {
          double step = h[i] / (1 + s), fp, fm;

          for (j = 0; j < P; j++)
            q[j] = p[j];
          q[i] = p[i] + step;
          fp = _airy_fit_model_loss (m, d, poisson, 4.0, q, NULL);
          q[i] = p[i] - step;
          fm = _airy_fit_model_loss (m, d, poisson, 4.0, q, NULL);
          fd[s] = (fp - fm) / (2 * step);
        }
      fdr = (4 * fd[1] - fd[0]) / 3;
      rel = fabs (fdr - g[i]) / fabs (g[i]);
      g_test_message ("parameter %u: analytic %.8g, central differences %.8g (h), %.8g (h/2), extrapolated %.8g, relative %.2g",
                      i, g[i], fd[0], fd[1], fdr, rel);
      worst = MAX (worst, rel);
      g_assert_cmpfloat (fabs (g[i]), >, 0);
      g_assert_cmpfloat (rel, <=, 1e-4);
    }
  g_test_message ("worst relative difference %.2g", worst);
}

typedef struct
{
  AiryStack *beads;
  double     c[16];
} Synthetic;

/* beads: the true terms (or none), bead at (0.23, −0.17, 0.3) µm, 10⁴
 * photons in the brightest voxel, background 10, Poisson noise */
static AiryStack *
beads_of (AirySystem *truth, unsigned long seed, double *peak_out)
{
  g_autoptr(AiryStack) psf = run_psf (truth);
  AiryStack *beads = airy_stack_copy (psf);
  gsize n = (gsize) psf->depth * psf->height * psf->width, q;
  double peak = 0;
  g_autofree float *mu = g_new (float, n);

  for (q = 0; q < n; q++)
    peak = MAX (peak, psf->data[q]);
  for (q = 0; q < n; q++)
    mu[q] = (float) (1e4 * psf->data[q] / peak + 10.0);
  poisson_sample (mu, beads->data, n, seed);
  if (peak_out)
    *peak_out = 1e4 / peak;
  return beads;
}

static AiryStack *
synthetic_beads (guint size, guint planes, gboolean aberrated, unsigned long seed, double *peak_out)
{
  g_autofree char *mask = aberrated ? mask_json (true_idx, true_c, G_N_ELEMENTS (true_idx)) : NULL;
  g_autoptr(AirySystem) truth = micro_system (size, planes, ", \"offset-x\": 0.23, \"offset-y\": -0.17, \"z\": -0.3", mask);

  return beads_of (truth, seed, peak_out);
}

static double
true_coefficient (int index)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (true_idx); i++)
    if (true_idx[i] == index)
      return true_c[i];
  return 0.0;
}

static AiryFitResult *
fit (AirySystem *system, const AiryStack *beads)
{
  AiryFitOptions options;
  g_autoptr(GError) error = NULL;
  AiryFitResult *res;

  airy_fit_options_init (&options);
  options.objective = AIRY_FIT_OBJECTIVE_POISSON;
  options.threads = 2;
  res = airy_fit_stack (system, beads, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (res);
  return res;
}

/* Every fitted term within 0.01 waves of the true one, or within its 2σ
 * when that is larger; returns the largest error. */
static double
assert_true_terms (const AiryFitResult *res)
{
  double worst = 0;
  guint i;

  for (i = 0; i < res->n_terms; i++)
    {
      double t = true_coefficient (res->indices[i]), err = fabs (res->coefficients[i] - t);

      g_test_message ("Z%d: %.4f ± %.2e (true %.3f)", res->indices[i], res->coefficients[i],
                      res->uncertainties[i], t);
      worst = MAX (worst, err);
      g_assert_cmpfloat (err, <=, MAX (0.01, 2 * res->uncertainties[i]));
    }
  return worst;
}

/* Ten known terms from a start at zero: every coefficient within 0.01
 * waves (or its 2σ), the bead within 20 nm laterally and 50 nm axially. */
static void
test_synthetic_recovery (void)
{
  g_autoptr(AirySystem) base = micro_system (64, 16, NULL, NULL);
  double amplitude;
  g_autoptr(AiryStack) beads = synthetic_beads (64, 16, TRUE, 11, &amplitude);
  g_autoptr(AiryFitResult) res = fit (base, beads);
  guint i;

  g_test_message ("%u iterations, %u evaluations, %.2f s, loss %g", res->iterations, res->evaluations,
                  res->seconds, res->loss);
  /* converged, and nothing to warn about */
  g_assert_true (res->converged);
  for (i = 0; i < res->warnings->len; i++)
    g_error ("unexpected warning: %s", (char *) g_ptr_array_index (res->warnings, i));
  g_assert_cmpuint (res->n_terms, ==, 11);
  assert_true_terms (res);
  g_test_message ("position %.4f %.4f %.4f µm", res->position[0], res->position[1], res->position[2]);
  g_assert_cmpfloat (fabs (res->position[0] - 0.23), <=, 0.02);
  g_assert_cmpfloat (fabs (res->position[1] + 0.17), <=, 0.02);
  /* the z convention (airy-fit.h, README): the truth's objective-point-source
   * has "z": -0.3, the bead's focus lies at z_b = +0.3 among the planes */
  g_assert_cmpfloat (fabs (res->position[2] - 0.3), <=, 0.05);
  g_assert_cmpfloat (fabs (res->background - 10.0), <=, 1.0);
  g_assert_cmpfloat (fabs (res->amplitude / amplitude - 1.0), <=, 0.02);
}

/* A high-NA bead (NA 1.4 in oil) fitted with the vectorial model
 * recovers its terms as well as the scalar case with the scalar model: the
 * ten known terms within 0.01 waves (or 2σ), the bead within 20 nm
 * laterally and 50 nm axially, each model for its own synthetic bead. */
static void
test_synthetic_vectorial (void)
{
  g_autofree char *mask = mask_json (true_idx, true_c, G_N_ELEMENTS (true_idx));
  double worst[2] = { 0, 0 };
  guint pass;

  for (pass = 0; pass < 2; pass++)
    {
      gboolean vectorial = pass == 1;
      g_autoptr(AirySystem) truth = oil_system (48, 12, vectorial, ", \"offset-x\": 0.13, \"offset-y\": -0.09, \"z\": -0.2",
                                                mask);
      g_autoptr(AirySystem) base = oil_system (48, 12, vectorial, NULL, NULL);
      g_autoptr(AiryStack) beads = beads_of (truth, 41, NULL);
      g_autoptr(AiryFitResult) res = fit (base, beads);

      g_test_message ("%s: %u iterations, %u evaluations, %.2f s, loss %g for %u voxels, Strehl %.3f",
                      vectorial ? "vectorial" : "scalar", res->iterations, res->evaluations, res->seconds, res->loss,
                      beads->depth * beads->height * beads->width, res->strehl);
      g_assert_cmpuint (res->n_terms, ==, 11);
      worst[pass] = assert_true_terms (res);
      g_test_message ("  position %.4f %.4f %.4f µm", res->position[0], res->position[1], res->position[2]);
      g_assert_cmpfloat (fabs (res->position[0] - 0.13), <=, 0.02);
      g_assert_cmpfloat (fabs (res->position[1] + 0.09), <=, 0.02);
      g_assert_cmpfloat (fabs (res->position[2] - 0.2), <=, 0.05);
      g_assert_cmpfloat (fabs (res->background - 10.0), <=, 1.0);
      g_assert_cmpfloat (res->strehl, >, 0.0);
      g_assert_cmpfloat (res->strehl, <, 1.0);
    }
  g_test_message ("largest error: scalar %.2e, vectorial %.2e waves", worst[0], worst[1]);
}

/* The optimiser's bounds: at most max_iterations iterations and 5
 * evaluations each; a loss that is not finite at the start (a NaN voxel,
 * past the stack's checks) ends it at once with an error instead of GSL's
 * line search trying up to 200 points per iteration. */
static void
test_minimize_bounds (void)
{
  g_autoptr(AirySystem) base = micro_system (32, 4, NULL, NULL);
  static const int idx[] = { 3, 5, 6 };
  guint K = G_N_ELEMENTS (idx), P = K + 5, it = 0, ev = 0, i;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitModel) m = _airy_fit_model_new (base, idx, K, 32, 32, 2, NULL, &error);
  gsize n = (gsize) 4 * 32 * 32;
  g_autofree float *mu = g_new (float, n);
  g_autofree float *d = g_new (float, n);
  g_autofree float *bad = g_new (float, n);
  double truth[P], p[P], loss = 0, start;

  g_assert_no_error (error);
  for (i = 0; i < P; i++)
    truth[i] = 0.0;
  truth[0] = 0.1;
  truth[K + 3] = 1e4;
  truth[K + 4] = 10.0;
  _airy_fit_model_eval (m, truth, mu);
  poisson_sample (mu, d, n, 3);
  memcpy (p, truth, sizeof p);
  p[0] = 0.0;
  start = _airy_fit_model_loss (m, d, TRUE, 1.0, p, NULL);
  g_assert_true (_airy_fit_minimize (m, d, TRUE, 1.0, p, 3, &it, &ev, &loss, &error));
  g_assert_no_error (error);
  g_test_message ("3 iterations at most: %u iterations, %u evaluations, loss %g from %g", it, ev, loss, start);
  g_assert_cmpuint (it, <=, 3);
  g_assert_cmpuint (ev, <=, 15);
  g_assert_cmpfloat (loss, <, start);

  /* (another buffer: the model keeps Poisson's constants of the last data) */
  memcpy (bad, d, n * sizeof (float));
  bad[100] = NAN;
  memcpy (p, truth, sizeof p);
  g_assert_false (_airy_fit_minimize (m, bad, TRUE, 1.0, p, 300, &it, &ev, &loss, &error));
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_test_message ("%s (%u evaluations)", error->message, ev);
  g_assert_nonnull (strstr (error->message, "the loss is nan"));
  g_assert_nonnull (strstr (error->message, "not finite"));
  g_assert_cmpuint (ev, ==, 1);

  /* the fit: max_iterations per start, its coarse and fine stages together */
  {
    g_autoptr(AirySystem) deep = micro_system (32, 16, NULL, NULL);
    g_autoptr(AiryStack) beads = synthetic_beads (32, 16, TRUE, 9, NULL);
    g_autoptr(AiryFitResult) res = NULL;
    AiryFitOptions options;

    airy_fit_options_init (&options);
    options.threads = 2;
    options.max_iterations = 4;
    options.restarts = 2;
    g_clear_error (&error);
    res = airy_fit_stack (deep, beads, &options, NULL, &error);
    g_assert_no_error (error);
    g_test_message ("2 starts of 4 iterations: %u iterations, %u evaluations, %u warnings", res->iterations_total,
                    res->evaluations, res->warnings->len);
    g_assert_cmpuint (res->restarts, ==, 2);
    g_assert_cmpuint (res->iterations_total, <=, 8);
    g_assert_cmpuint (res->evaluations, <=, 2 * 5 * 4);
  }
}

/* The 2σ intervals cover the true coefficient in ≥ 90 % of 20 seeded
 * repeats × 11 terms (nominal 95 %); and an aberration-free bead gives
 * coefficients within 3σ of zero. Smaller stacks, to stay well under a
 * minute on two cores. */
static void
test_synthetic_coverage (void)
{
  static const unsigned long seeds[20] = { 101, 202, 303, 404, 505, 606, 707, 808, 909, 1010,
                                           1111, 1212, 1313, 1414, 1515, 1616, 1717, 1818, 1919, 2020 };
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  guint covered = 0, total = 0, s, i;

  for (s = 0; s < G_N_ELEMENTS (seeds); s++)
    {
      g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, seeds[s], NULL);
      g_autoptr(AiryFitResult) res = fit (base, beads);

      for (i = 0; i < res->n_terms; i++)
        {
          double err = fabs (res->coefficients[i] - true_coefficient (res->indices[i]));
          covered += err <= 2 * res->uncertainties[i];
          total++;
        }
    }
  g_test_message ("2σ coverage %u of %u", covered, total);
  g_assert_cmpfloat ((double) covered / total, >=, 0.9);
}

static void
test_aberration_free (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, FALSE, 5, NULL);
  g_autoptr(AiryFitResult) res = fit (base, beads);
  guint i;

  for (i = 0; i < res->n_terms; i++)
    {
      g_test_message ("Z%d: %.2e ± %.2e", res->indices[i], res->coefficients[i], res->uncertainties[i]);
      g_assert_cmpfloat (res->uncertainties[i], >, 0);
      g_assert_cmpfloat (res->uncertainties[i], <, 0.01);
      g_assert_cmpfloat (fabs (res->coefficients[i]), <=, 3 * res->uncertainties[i]);
    }
  g_assert_cmpfloat (res->rms_waves, <, 0.02);
  g_assert_cmpfloat (res->strehl, >, 0.98);
}

/* Float data fitted by least squares (the automatic choice for a float
 * stack): the same terms within 0.01 waves or 2σ. */
static void
test_least_squares (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, 21, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitResult) res = NULL;
  AiryFitOptions options;
  guint i;

  airy_fit_options_init (&options);
  options.threads = 2;
  res = airy_fit_stack (base, beads, &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (res->objective, ==, AIRY_FIT_OBJECTIVE_LEAST_SQUARES);
  for (i = 0; i < res->n_terms; i++)
    g_assert_cmpfloat (res->uncertainties[i], >, 0);
  assert_true_terms (res);
  g_assert_cmpfloat (fabs (res->position[0] - 0.23), <=, 0.02);
  g_assert_cmpfloat (fabs (res->position[2] - 0.3), <=, 0.05);
}

/* micro_system's microscope with a camera: sensor keys besides the sum */
static AirySystem *
sensor_system (const char *sensor_keys)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.1},"
    " \"spectrum\": {\"wavelengths\": [0.532], \"weights\": [1.0]},"
    " \"z\": {\"start\": -2.0, \"stop\": 2.0, \"count\": 12},"
    " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0},"
    " \"elements\": [], \"sensor\": {\"reduce\": \"sum\", %s},"
    " \"sample\": {\"constant\": 1.0}}", sensor_keys);

  return test_system (json);
}

/* Counts: ADU = gain·photons + offset, with gain and offset given or from
 * the system's sensor; the fit works in photons and reports in ADU. */
static void
test_gain_offset (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AirySystem) with_sensor = sensor_system ("\"gain\": 2.0, \"offset\": 100.0");
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, 31, NULL);
  gsize n = (gsize) beads->depth * beads->height * beads->width, q;
  guint pass;

  for (q = 0; q < n; q++)
    beads->data[q] = 2.0f * beads->data[q] + 100.0f;
  for (pass = 0; pass < 2; pass++)
    {
      AiryFitOptions options;
      g_autoptr(GError) error = NULL;
      g_autoptr(AiryFitResult) res = NULL;

      airy_fit_options_init (&options);
      options.threads = 2;
      options.objective = AIRY_FIT_OBJECTIVE_POISSON;
      if (pass == 0)
        {
          options.gain = 2.0;
          options.offset = 100.0;
        }
      res = airy_fit_stack (pass == 0 ? base : with_sensor, beads, &options, NULL, &error);
      g_assert_no_error (error);
      g_test_message ("pass %u: background %g ADU, loss %g for %" G_GSIZE_FORMAT " voxels", pass, res->background,
                      res->loss, n);
      g_assert_cmpfloat (fabs (res->background - 120.0), <=, 2.0);
      /* fitted to the noise in photons: about ½ per voxel */
      g_assert_cmpfloat (res->loss, <, 0.75 * n);
      assert_true_terms (res);
    }
}

static void
expect_fit_error (AirySystem *system, const AiryStack *beads, guint crop, const char *fragment)
{
  AiryFitOptions options;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitResult) res = NULL;

  airy_fit_options_init (&options);
  options.crop = crop;
  options.threads = 2;
  res = airy_fit_stack (system, beads, &options, NULL, &error);
  g_assert_null (res);
  g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
  g_test_message ("%s", error->message);
  if (strstr (error->message, fragment) == NULL)
    g_error ("expected \"%s\" in \"%s\"", fragment, error->message);
}

static void
test_bad_input (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, FALSE, 5, NULL);
  g_autoptr(AiryStack) flat = airy_stack_copy (beads);
  g_autoptr(AiryStack) nan = airy_stack_copy (beads);
  g_autoptr(AiryStack) big = airy_stack_new (12, 64, 64);
  g_autoptr(AiryStack) thin = airy_stack_new (5, 48, 48);
  g_autoptr(AiryStack) coarse = NULL;
  gsize n = (gsize) flat->depth * flat->height * flat->width, q;
  gsl_rng *r = gsl_rng_alloc (gsl_rng_mt19937);

  /* no bead: background and its noise alone */
  for (q = 0; q < n; q++)
    flat->data[q] = (float) gsl_ran_poisson (r, 10.0);
  gsl_rng_free (r);
  expect_fit_error (base, flat, 0, "no bead");
  /* NaN: named with its voxel */
  nan->data[(gsize) 3 * 48 * 48 + 5 * 48 + 7] = NAN;
  expect_fit_error (base, nan, 0, "non-finite value (nan) at x 7, y 5, z 3");
  /* larger than the PSF plane, and a crop larger than the stack */
  big->dx = big->dy = 0.1;
  big->dz = beads->dz;
  expect_fit_error (base, big, 0, "64 × 64 pixels, larger than the system's PSF plane (48 × 48)");
  expect_fit_error (base, beads, 60, "crop: must be at most the stack's size (48 × 48 pixels), got 60");
  /* other spacing: a z range the system's planes do not fit in */
  thin->dx = thin->dy = 0.1;
  thin->dz = beads->dz;
  expect_fit_error (base, thin, 0, "spans");
  /* same number of planes at another spacing is resampled, with a warning */
  coarse = airy_stack_copy (beads);
  coarse->dz = 2 * beads->dz;
  {
    AiryFitOptions options;
    g_autoptr(GError) error = NULL;
    g_autoptr(AiryFitResult) res = NULL;
    guint i;
    gboolean warned = FALSE;

    airy_fit_options_init (&options);
    options.threads = 2;
    options.max_iterations = 5;
    res = airy_fit_stack (base, coarse, &options, NULL, &error);
    g_assert_no_error (error);
    for (i = 0; i < res->warnings->len; i++)
      warned |= strstr (g_ptr_array_index (res->warnings, i), "resampled") != NULL;
    g_assert_true (warned);
  }
  /* a highest index below 3 */
  {
    AiryFitOptions options;
    g_autoptr(GError) error = NULL;
    g_autoptr(AiryFitResult) res = NULL;

    airy_fit_options_init (&options);
    options.zernike_max = 2;
    res = airy_fit_stack (base, beads, &options, NULL, &error);
    g_assert_null (res);
    g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
    g_assert_nonnull (strstr (error->message, "[3, 65], got 2"));
  }
}

/* FITTED: the input system with the fitted mask; its PSF is the model's. */
static void
test_apply (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, 3, NULL);
  g_autoptr(AiryFitResult) res = fit (base, beads);
  g_autoptr(GError) error = NULL;
  g_autoptr(AirySystem) fitted = airy_fit_result_apply (res, base, &error);
  g_autofree char *json = NULL;
  g_autoptr(AirySystem) back = NULL;
  GPtrArray *elements;
  AiryElement *mask;
  const double *c;
  gsize nc;
  guint i;

  g_assert_no_error (error);
  json = airy_system_to_json (fitted);
  /* the indices are written as integers (3, not 3.0) */
  g_test_message ("%s", json);
  g_assert_nonnull (strstr (json, "\"zernike-indices\" : [\n"));
  {
    g_autoptr(JsonParser) parser = json_parser_new ();
    JsonArray *els, *idx;

    g_assert_true (json_parser_load_from_data (parser, json, -1, NULL));
    els = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "elements");
    idx = json_object_get_array_member (json_array_get_object_element (els, 0), "zernike-indices");
    g_assert_cmpuint (json_array_get_length (idx), ==, res->n_terms);
    for (i = 0; i < res->n_terms; i++)
      {
        JsonNode *e = json_array_get_element (idx, i);
        g_assert_cmpuint (json_node_get_value_type (e), ==, G_TYPE_INT64);
        g_assert_cmpint (json_node_get_int (e), ==, res->indices[i]);
      }
  }
  back = test_system (json);
  elements = airy_system_get_elements (back);
  g_assert_cmpuint (elements->len, ==, 1);
  mask = g_ptr_array_index (elements, 0);
  g_assert_cmpstr (airy_element_get_type_name (mask), ==, "phase-mask");
  c = airy_element_get_doubles (mask, "zernike-coefficients", &nc);
  g_assert_cmpuint (nc, ==, res->n_terms);
  for (i = 0; i < nc; i++)
    g_assert_cmpfloat (c[i], ==, res->coefficients[i]);
  /* the report holds the keys the issue lists */
  {
    g_autofree char *report = airy_fit_result_to_json (res);
    g_autoptr(JsonParser) parser = json_parser_new ();
    JsonObject *o, *z;
    static const char *const keys[] = { "rms_waves", "strehl", "position", "amplitude", "background",
                                        "iterations", "loss", "seconds", "seconds_per_iteration", NULL };

    g_assert_true (json_parser_load_from_data (parser, report, -1, NULL));
    o = json_node_get_object (json_parser_get_root (parser));
    for (i = 0; keys[i]; i++)
      g_assert_true (json_object_has_member (o, keys[i]));
    z = json_object_get_object_member (o, "zernike");
    g_assert_cmpstr (json_object_get_string_member (z, "indexing"), ==, "ansi");
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (z, "indices")), ==, res->n_terms);
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (z, "coefficients")), ==, res->n_terms);
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (z, "uncertainties")), ==, res->n_terms);
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "position")), ==, 3);
  }
}

static gboolean
has_warning (const AiryFitResult *res, const char *fragment)
{
  guint i;

  for (i = 0; i < res->warnings->len; i++)
    if (strstr (g_ptr_array_index (res->warnings, i), fragment) != NULL)
      return TRUE;
  return FALSE;
}

/* A fit stopped by its iteration limit says so: converged FALSE, a warning
 * that it did not converge, and (Poisson) that its loss per voxel is far
 * above a fit to the noise; in the report too. */
static void
test_not_converged (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, 9, NULL);
  gsize n = (gsize) beads->depth * beads->height * beads->width;
  AiryFitOptions options;
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitResult) res = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *report = NULL;
  guint i;

  airy_fit_options_init (&options);
  options.threads = 2;
  options.objective = AIRY_FIT_OBJECTIVE_POISSON;
  options.max_iterations = 3;
  res = airy_fit_stack (base, beads, &options, NULL, &error);
  g_assert_no_error (error);
  for (i = 0; i < res->warnings->len; i++)
    g_test_message ("warning: %s", (char *) g_ptr_array_index (res->warnings, i));
  g_test_message ("%u iterations of the best start, %u in all over %u starts, loss %g (%g per voxel)",
                  res->iterations, res->iterations_total, res->restarts, res->loss, res->loss / n);
  g_assert_false (res->converged);
  g_assert_cmpuint (res->iterations, ==, 3);
  g_assert_true (has_warning (res, "the fit did not converge"));
  g_assert_cmpfloat (res->loss / n, >, 1.0);
  g_assert_true (has_warning (res, "per voxel"));
  report = airy_fit_result_to_json (res);
  g_assert_true (json_parser_load_from_data (parser, report, -1, NULL));
  g_assert_true (json_object_has_member (json_node_get_object (json_parser_get_root (parser)), "converged"));
  g_assert_false (json_object_get_boolean_member (json_node_get_object (json_parser_get_root (parser)), "converged"));
}

/* An offset at or above the brightest voxel (given, or the sensor's)
 * leaves no counts: said so, with the offset and the data's maximum, not
 * "no bead". */
static void
test_offset_above_data (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AirySystem) with_sensor = sensor_system ("\"offset\": 30000.0");
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, 5, NULL);
  gsize n = (gsize) beads->depth * beads->height * beads->width, q;
  float vmax = 0;
  guint pass;

  for (q = 0; q < n; q++)
    vmax = MAX (vmax, beads->data[q]);
  for (pass = 0; pass < 3; pass++)
    {
      AiryFitOptions options;
      g_autoptr(GError) error = NULL;
      g_autoptr(AiryFitResult) res = NULL;
      g_autofree char *expect = NULL;

      airy_fit_options_init (&options);
      options.threads = 2;
      options.objective = AIRY_FIT_OBJECTIVE_POISSON;
      if (pass < 2)
        options.offset = pass == 0 ? 20000.0 : vmax;
      res = airy_fit_stack (pass < 2 ? base : with_sensor, beads, &options, NULL, &error);
      g_assert_null (res);
      g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
      g_test_message ("%s", error->message);
      expect = g_strdup_printf ("brightest voxel (%g ADU), got %g", vmax, pass == 0 ? 20000.0 : pass == 1 ? vmax : 30000.0);
      g_assert_nonnull (strstr (error->message, expect));
      g_assert_null (strstr (error->message, "no bead"));
    }
}

/* A device the backend does not have is refused, not ignored: the CPU has
 * one (device 0), for "cpu" and for "auto" on the CPU; "auto" with a CUDA
 * device names CUDA's range instead of falling back to the CPU. */
static void
test_device_range (void)
{
  g_autoptr(AirySystem) base = micro_system (32, 4, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (32, 4, FALSE, 5, NULL);
  AiryBackend *cuda = airy_backend_lookup ("cuda");
  guint pass;

  for (pass = 0; pass < 2; pass++)
    {
      AiryFitOptions options;
      g_autoptr(GError) error = NULL;
      g_autoptr(AiryFitResult) res = NULL;

      g_autofree char *expect = NULL;
      guint n_cuda = cuda != NULL && airy_backend_is_available (cuda) ? airy_backend_n_devices (cuda) : 0;

      if (pass == 1 && n_cuda > 5)
        {
          g_test_message ("auto: %u CUDA devices, device 5 exists", n_cuda);
          continue;
        }
      expect = pass == 0 ? g_strdup ("device: must be in [0, 0] for backend cpu, got 3")
             : n_cuda > 0 ? g_strdup_printf ("device: must be in [0, %u] for backend cuda, got 5", n_cuda - 1)
                          : g_strdup ("device: must be in [0, 0] for backend cpu, got 5");
      airy_fit_options_init (&options);
      options.threads = 2;
      options.max_iterations = 2;
      options.backend = pass == 0 ? "cpu" : "auto";
      options.device = pass == 0 ? 3 : 5;
      res = airy_fit_stack (base, beads, &options, NULL, &error);
      g_assert_null (res);
      g_assert_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE);
      g_assert_cmpstr (error->message, ==, expect);
      /* device 0 runs */
      g_clear_error (&error);
      options.device = 0;
      res = airy_fit_stack (base, beads, &options, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (res);
    }
}

/* airy-sim fit: writes FITTED.json, REPORT.json and the residual; bad
 * input exits 2 with the engine's message. */
static void
run_cli (const char *const *args, int *status, char **out, char **err)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  guint i;

  g_ptr_array_add (argv, (gpointer) g_getenv ("AIRY_SIM"));
  for (i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                               status, &error));
  g_assert_no_error (error);
}

static void
test_cli (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airy-fit-XXXXXX", NULL);
  g_autofree char *sys_path = g_build_filename (dir, "system.json", NULL);
  g_autofree char *beads_path = g_build_filename (dir, "beads.tif", NULL);
  g_autofree char *nan_path = g_build_filename (dir, "nan.tif", NULL);
  g_autofree char *fitted_path = g_build_filename (dir, "fitted.json", NULL);
  g_autofree char *report_path = g_build_filename (dir, "report.json", NULL);
  g_autofree char *res_path = g_build_filename (dir, "residual.tif", NULL);
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, 9, NULL);
  g_autoptr(AiryStack) nan = airy_stack_copy (beads);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(AirySystem) fitted = NULL;
  g_autoptr(AiryStack) residual = NULL;
  g_autofree char *out = NULL, *err = NULL;
  JsonObject *report, *z;
  JsonArray *idx, *coef;
  int status;
  guint i;

  if (g_getenv ("AIRY_SIM") == NULL)
    {
      g_test_skip ("AIRY_SIM is not set");
      return;
    }
  g_assert_true (airy_system_save (base, sys_path, &error));
  g_assert_no_error (error);
  g_assert_true (airy_tiff_write (beads_path, beads, &error));
  nan->data[100] = NAN;
  g_assert_true (airy_tiff_write (nan_path, nan, &error));

  {
    const char *args[] = { "fit", beads_path, "--system", sys_path, "--objective", "poisson", "-o", fitted_path,
                           "--report", report_path, "--residual", res_path, "--threads", "2", NULL };
    run_cli (args, &status, &out, &err);
  }
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "Z3"));
  g_assert_true (json_parser_load_from_file (parser, report_path, &error));
  g_assert_no_error (error);
  report = json_node_get_object (json_parser_get_root (parser));
  z = json_object_get_object_member (report, "zernike");
  idx = json_object_get_array_member (z, "indices");
  coef = json_object_get_array_member (z, "coefficients");
  g_assert_cmpuint (json_array_get_length (idx), ==, 11);
  for (i = 0; i < json_array_get_length (idx); i++)
    g_assert_cmpfloat (fabs (json_array_get_double_element (coef, i)
                             - true_coefficient ((int) json_array_get_int_element (idx, i))), <=, 0.01);
  g_assert_cmpfloat (json_object_get_double_member (report, "seconds"), >, 0);
  g_assert_cmpint (json_object_get_int_member (report, "iterations"), >, 0);
  g_assert_cmpstr (json_object_get_string_member (report, "backend"), ==, "cpu");
  g_assert_cmpstr (json_object_get_string_member (report, "device"), ==, "CPU");
  g_assert_cmpint (json_object_get_int_member (report, "threads"), ==, 2);
  g_assert_true (json_object_get_boolean_member (report, "converged"));
  g_assert_nonnull (strstr (out, "on cpu (CPU, 2 threads)"));
  g_assert_null (strstr (err, "did not converge"));
  fitted = airy_system_new_from_file (fitted_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (airy_system_get_elements (fitted)->len, ==, 1);
  residual = airy_tiff_read (res_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (residual->depth, ==, 12);
  g_assert_cmpfloat (fabs (residual->dx - 0.1), <, 1e-6);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* stopped at the iteration limit: a warning, converged false, the
   * best start's iterations and all starts' in the text */
  {
    const char *args[] = { "fit", beads_path, "--system", sys_path, "--objective", "poisson", "-o", fitted_path,
                           "--report", report_path, "--threads", "2", "--max-iterations", "3", NULL };
    g_autoptr(JsonParser) p3 = json_parser_new ();
    JsonObject *r3;
    g_autofree char *text = NULL;

    run_cli (args, &status, &out, &err);
    g_test_message ("--max-iterations 3: %s%s", out, err);
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    g_assert_nonnull (strstr (err, "airy-sim: warning: the fit did not converge"));
    g_assert_nonnull (strstr (err, "per voxel"));
    g_assert_true (json_parser_load_from_file (p3, report_path, &error));
    g_assert_no_error (error);
    r3 = json_node_get_object (json_parser_get_root (p3));
    g_assert_false (json_object_get_boolean_member (r3, "converged"));
    g_assert_cmpint (json_object_get_int_member (r3, "iterations"), ==, 3);
    text = g_strdup_printf ("3 iterations of the best start, %d over %d starts",
                            (int) json_object_get_int_member (r3, "iterations_total"),
                            (int) json_object_get_int_member (r3, "restarts"));
    g_assert_cmpint (json_object_get_int_member (r3, "restarts"), >, 1);
    g_assert_nonnull (strstr (out, text));
    g_assert_nonnull (strstr (out, ", not converged"));
  }
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* an offset above the data, a device the CPU lacks: exit 2, nothing written */
  g_assert_cmpint (g_unlink (fitted_path), ==, 0);
  {
    const char *args[] = { "fit", beads_path, "--system", sys_path, "--objective", "poisson", "-o", fitted_path,
                           "--offset", "20000", NULL };
    run_cli (args, &status, &out, &err);
  }
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 2);
  g_assert_nonnull (strstr (err, "offset: must be below the bead stack's brightest voxel ("));
  g_assert_nonnull (strstr (err, "got 20000"));
  g_assert_false (g_file_test (fitted_path, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { "fit", beads_path, "--system", sys_path, "-o", fitted_path, "--backend", "cpu",
                           "--device", "3", NULL };
    run_cli (args, &status, &out, &err);
  }
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 2);
  g_assert_nonnull (strstr (err, "device: must be in [0, 0] for backend cpu, got 3"));
  g_assert_false (g_file_test (fitted_path, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* a NaN: exit 2, the voxel named, no output written */
  {
    const char *args[] = { "fit", nan_path, "--system", sys_path, "-o", fitted_path, NULL };
    run_cli (args, &status, &out, &err);
  }
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 2);
  g_assert_nonnull (strstr (err, "non-finite value (nan) at x 4, y 2, z 0"));
  g_assert_false (g_file_test (fitted_path, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* usage */
  {
    const char *args[] = { "fit", beads_path, "-o", fitted_path, NULL };
    run_cli (args, &status, &out, &err);
  }
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 2);
  g_assert_nonnull (strstr (err, "--system SYSTEM.json"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const char *args[] = { "fit", beads_path, "--system", sys_path, "-o", fitted_path, "--zernike", "2", NULL };
    run_cli (args, &status, &out, &err);
  }
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 2);
  g_assert_nonnull (strstr (err, "--zernike: must be in [3, 65], got 2"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* the CUDA backend asked for by name without a usable device: its
   * reason, nothing written (with a device the fit runs there) */
  {
    AiryBackend *cuda = airy_backend_lookup ("cuda");
    const char *args[] = { "fit", beads_path, "--system", sys_path, "-o", fitted_path, "--backend", "cuda", NULL };

    run_cli (args, &status, &out, &err);
    g_test_message ("--backend cuda: %s%s", out, err);
    if (cuda == NULL || !airy_backend_is_available (cuda))
      {
        g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) != 0);
        g_assert_nonnull (strstr (err, "backend cuda: no CUDA device") ? err : strstr (err, "backend: no CUDA device"));
        g_assert_false (g_file_test (fitted_path, G_FILE_TEST_EXISTS));
      }
    else
      {
        g_assert_true (g_spawn_check_wait_status (status, NULL));
        g_assert_nonnull (strstr (out, "on cuda ("));
        g_unlink (fitted_path);
      }
  }

  g_unlink (sys_path);
  g_unlink (beads_path);
  g_unlink (nan_path);
  g_unlink (report_path);
  g_unlink (res_path);
  g_rmdir (dir);
}

/* A cancelled fit stops with G_IO_ERROR_CANCELLED; a single plane (the
 * sign of the even terms open) runs all four starts and keeps the best. */
static void
count_iterations (guint restart, guint iteration, double loss, gpointer user_data)
{
  guint *n = user_data;

  (*n)++;
}

static void
test_cancel_and_single_plane (void)
{
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  g_autoptr(AiryStack) beads = synthetic_beads (48, 12, TRUE, 5, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitResult) res = NULL;
  AiryFitOptions options;
  guint calls = 0;

  airy_fit_options_init (&options);
  options.threads = 2;
  options.progress = count_iterations;
  options.user_data = &calls;
  g_cancellable_cancel (cancellable);
  res = airy_fit_stack (base, beads, &options, cancellable, &error);
  g_assert_null (res);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (calls, ==, 1);
  g_clear_error (&error);

  {
    g_autoptr(AirySystem) one = test_system (
      "{\"airy\": 1, \"grid\": {\"shape\": [48, 48], \"spacing\": 0.1},"
      " \"spectrum\": {\"wavelengths\": [0.532], \"weights\": [1.0]}, \"z\": {\"values\": [0.5]},"
      " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0},"
      " \"elements\": [], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1.0}}");
    g_autoptr(AiryStack) plane = airy_stack_new (1, 48, 48);

    memcpy (plane->data, airy_stack_plane (beads, 6), 48 * 48 * sizeof (float));
    plane->dx = plane->dy = 0.1;
    options.progress = NULL;
    options.zernike_max = 8;
    res = airy_fit_stack (one, plane, &options, NULL, &error);
    g_assert_no_error (error);
    g_test_message ("single plane: %u starts, loss %g for %d voxels", res->restarts, res->loss, 48 * 48);
    g_assert_cmpuint (res->restarts, ==, 4);
    g_assert_cmpuint (res->n_terms, ==, 5);
  }
}

/* A bead whose fitted focus lies beyond the stack's planes (−2 … 2 µm):
 * the fit says so, with z and the planes' range; one inside says nothing. */
static void
test_z_outside_planes (void)
{
  g_autoptr(AirySystem) truth = micro_system (48, 12, ", \"z\": -2.8", NULL);
  g_autoptr(AirySystem) inside = micro_system (48, 12, ", \"z\": -0.3", NULL);
  g_autoptr(AirySystem) base = micro_system (48, 12, NULL, NULL);
  guint t;

  for (t = 0; t < 2; t++)
    {
      g_autoptr(AiryStack) beads = run_psf (t == 0 ? truth : inside);
      g_autoptr(GError) error = NULL;
      g_autoptr(AiryFitResult) res = NULL;
      g_autofree char *expected = NULL;
      AiryFitOptions options;
      gsize n = (gsize) beads->depth * beads->height * beads->width, q;
      double peak = 0;
      guint i, found = 0;

      for (q = 0; q < n; q++)
        peak = MAX (peak, beads->data[q]);
      for (q = 0; q < n; q++)
        beads->data[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
      airy_fit_options_init (&options);
      options.threads = 2;
      options.zernike_max = 5;
      res = airy_fit_stack (base, beads, &options, NULL, &error);
      g_assert_no_error (error);
      g_test_message ("fitted z %.3f µm", res->position[2]);
      expected = g_strdup_printf ("the bead's fitted z (%.3f µm) lies outside the stack's planes (-2.000 … 2.000 µm)",
                                  res->position[2]);
      for (i = 0; i < res->warnings->len; i++)
        {
          const char *w = g_ptr_array_index (res->warnings, i);

          g_test_message ("warning: %s", w);
          found += strstr (w, "lies outside the stack's planes") != NULL;
          if (t == 0 && strstr (w, "lies outside the stack's planes"))
            g_assert_true (g_str_has_prefix (w, expected));
        }
      if (t == 0)
        {
          g_assert_cmpfloat (res->position[2], >, 2.0);
          g_assert_cmpuint (found, ==, 1);
        }
      else
        {
          g_assert_cmpfloat (fabs (res->position[2] - 0.3), <=, 0.05);
          g_assert_cmpuint (found, ==, 0);
        }
    }
}

/* A system whose output spacing differs between wavelengths (an FF lens
 * after a point source, two wavelengths) warns of it once, though the fit
 * walks it twice (its geometry, then the model's plan). */
static void
test_warnings_once (void)
{
  g_autoptr(AirySystem) system = test_system (
    "{\"airy\": 1, \"grid\": {\"shape\": [64, 64], \"spacing\": 1.0},"
    " \"spectrum\": {\"wavelengths\": [0.5, 0.6], \"weights\": [1, 1]},"
    " \"z\": {\"start\": -1, \"stop\": 1, \"count\": 5},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 50, \"n\": 1.0, \"na\": 0.6},"
    "  {\"type\": \"ff-lens\", \"f\": 50}]}");
  g_autoptr(AiryStack) beads = run_psf (system);
  g_autoptr(GError) error = NULL;
  g_autoptr(AiryFitResult) res = NULL;
  AiryFitOptions options;
  gsize n = (gsize) beads->depth * beads->height * beads->width, q;
  double peak = 0;
  guint i, j, found = 0;

  for (q = 0; q < n; q++)
    peak = MAX (peak, beads->data[q]);
  for (q = 0; q < n; q++)
    beads->data[q] = (float) (1e4 * beads->data[q] / peak + 10.0);
  airy_fit_options_init (&options);
  options.threads = 2;
  options.zernike_max = 5;
  options.restarts = 1;
  res = airy_fit_stack (system, beads, &options, NULL, &error);
  g_assert_no_error (error);
  for (i = 0; i < res->warnings->len; i++)
    {
      g_test_message ("warning: %s", (const char *) g_ptr_array_index (res->warnings, i));
      found += strstr (g_ptr_array_index (res->warnings, i), "output spacing differs between wavelengths") != NULL;
      for (j = 0; j < i; j++)
        g_assert_cmpstr (g_ptr_array_index (res->warnings, i), !=, g_ptr_array_index (res->warnings, j));
    }
  g_assert_cmpuint (found, ==, 1);
  /* the undersampling of the FF lens once, though the model's chain numbers it otherwise */
  for (i = 0, found = 0; i < res->warnings->len; i++)
    found += strstr (g_ptr_array_index (res->warnings, i), "the PSF is undersampled") != NULL;
  g_assert_cmpuint (found, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("AIRY_FFTW_PLANNER", "estimate", FALSE);
  airy_init ();

  g_test_add_data_func ("/fit/model/matches-run/paraxial", "paraxial", test_model_matches_run);
  g_test_add_data_func ("/fit/model/matches-run/nonparaxial", "nonparaxial", test_model_matches_run);
  g_test_add_data_func ("/fit/model/gradient/poisson", GINT_TO_POINTER (TRUE), test_gradient);
  g_test_add_data_func ("/fit/model/gradient/least-squares", GINT_TO_POINTER (FALSE), test_gradient);
  g_test_add_func ("/fit/model/matches-run/vectorial", test_model_matches_run_vectorial);
  g_test_add_func ("/fit/model/pupil-radius", test_model_pupil_radius);
  g_test_add_data_func ("/fit/model/gradient/vectorial-poisson", GINT_TO_POINTER (3), test_gradient);
  g_test_add_data_func ("/fit/model/gradient/vectorial-least-squares", GINT_TO_POINTER (2), test_gradient);
  g_test_add_func ("/fit/synthetic/recovery", test_synthetic_recovery);
  g_test_add_func ("/fit/synthetic/coverage", test_synthetic_coverage);
  g_test_add_func ("/fit/synthetic/vectorial", test_synthetic_vectorial);
  g_test_add_func ("/fit/optimiser/bounds", test_minimize_bounds);
  g_test_add_func ("/fit/synthetic/aberration-free", test_aberration_free);
  g_test_add_func ("/fit/synthetic/least-squares", test_least_squares);
  g_test_add_func ("/fit/counts/gain-offset", test_gain_offset);
  g_test_add_func ("/fit/bad-input", test_bad_input);
  g_test_add_func ("/fit/not-converged", test_not_converged);
  g_test_add_func ("/fit/offset-above-data", test_offset_above_data);
  g_test_add_func ("/fit/device-range", test_device_range);
  g_test_add_func ("/fit/apply", test_apply);
  g_test_add_func ("/fit/z-outside-planes", test_z_outside_planes);
  g_test_add_func ("/fit/warnings-once", test_warnings_once);
  g_test_add_func ("/fit/cli", test_cli);
  g_test_add_func ("/fit/cancel-and-single-plane", test_cancel_and_single_plane);
  return g_test_run ();
}

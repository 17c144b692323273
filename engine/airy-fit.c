#define G_LOG_DOMAIN "airy-fit"

/* The fit (airy-fit.h): the bead stack on the system's grid, in photons,
 * its window, background and noise; the starts of GSL's BFGS on the model's
 * loss (airy-fit-model.c) with their bounds; the 1-σ uncertainties from the
 * Fisher information. The result's report and its system: airy-fit-result.c. */

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>

#include "airy-error.h"
#include "airy-fit-private.h"

#define ZERNIKE_DEFAULT_MAX 14
#define MAX_ITERATIONS      300
/* a start's evaluations (forward + adjoint passes) per iteration it may
 * take: BFGS needs one to three, GSL's line search may try up to 200 */
#define EVALUATIONS_PER_ITERATION 5

void
airy_fit_options_init (AiryFitOptions *options)
{
  memset (options, 0, sizeof *options);
  options->offset = NAN;
}

typedef struct
{
  AiryFitModel *m;
  const float  *data;
  gboolean      poisson;
  double        noise_var;
  double       *scale;        /* p_i = v_i / scale_i */
  guint         P;
  double       *p, *g;
  guint         evaluations;
  /* the last point, for f and df called apart */
  double       *last_v;
  double        last_f;
  double       *last_g;
  gboolean      have_last;
  /* the bounds of one start (run_bfgs): once stopped, every evaluation
   * returns +∞ and a zero gradient without computing, so that GSL's line
   * search ends at once */
  guint         budget;       /* evaluations left */
  gboolean      first;        /* the next evaluation is the start point */
  gboolean      stopped;
  gboolean      non_finite;   /* stopped by a non-finite loss or gradient */
  double        bad_f;        /* that loss */
  guint         bad_param;    /* the first non-finite gradient component, or P */
} Objective;

/* the optimiser's variables: the terms in waves, the position in µm,
 * amplitude and background relative to their first guesses A0, B0 */
static void
objective_init (Objective *o, AiryFitModel *m, const float *data, gboolean poisson, double noise_var,
                double A0, double B0)
{
  guint i;

  memset (o, 0, sizeof *o);
  o->m = m;
  o->data = data;
  o->poisson = poisson;
  o->noise_var = noise_var;
  o->P = _airy_fit_model_n_params (m);
  o->scale = g_new (double, o->P);
  for (i = 0; i < o->P; i++)
    o->scale[i] = 1.0;
  o->scale[o->P - 2] = 1.0 / A0;
  o->scale[o->P - 1] = 1.0 / MAX (fabs (B0), 1.0);
  o->p = g_new (double, o->P);
  o->last_g = g_new (double, o->P);
  o->last_v = g_new (double, o->P);
}

static void
objective_clear (Objective *o)
{
  g_clear_pointer (&o->scale, g_free);
  g_clear_pointer (&o->p, g_free);
  g_clear_pointer (&o->last_g, g_free);
  g_clear_pointer (&o->last_v, g_free);
}

static void
objective_params (const Objective *o, const gsl_vector *v, double *p)
{
  guint i;

  for (i = 0; i < o->P; i++)
    p[i] = gsl_vector_get (v, i) / o->scale[i];
}

static void
objective_eval (Objective *o, const gsl_vector *v)
{
  guint i;

  if (o->have_last)
    {
      for (i = 0; i < o->P; i++)
        if (gsl_vector_get (v, i) != o->last_v[i])
          break;
      if (i == o->P)
        return;
    }
  for (i = 0; i < o->P; i++)
    o->last_v[i] = gsl_vector_get (v, i);
  o->have_last = TRUE;
  if (!o->stopped && o->budget == 0)
    o->stopped = TRUE;
  if (o->stopped)
    {
      o->last_f = GSL_POSINF;
      memset (o->last_g, 0, o->P * sizeof (double));
      return;
    }
  objective_params (o, v, o->p);
  o->last_f = _airy_fit_model_loss (o->m, o->data, o->poisson, o->noise_var, o->p, o->last_g);
  o->evaluations++;
  o->budget--;
  if (o->m->dev_error != NULL)
    {
      /* the device failed: nothing more is computed (run_bfgs reports it) */
      o->stopped = TRUE;
      o->last_f = GSL_POSINF;
      memset (o->last_g, 0, o->P * sizeof (double));
      return;
    }
  for (i = 0; i < o->P; i++)
    o->last_g[i] /= o->scale[i];
  /* a non-finite loss at a trial point of the line search is +∞ (the
   * search steps back); at the start, or a non-finite gradient where the
   * loss is finite, the fit cannot go on */
  for (i = 0; i < o->P && isfinite (o->last_g[i]); i++)
    ;
  if ((o->first && !isfinite (o->last_f)) || (isfinite (o->last_f) && i < o->P))
    {
      o->stopped = o->non_finite = TRUE;
      o->bad_f = o->last_f;
      o->bad_param = i;
      o->last_f = GSL_POSINF;
      memset (o->last_g, 0, o->P * sizeof (double));
    }
  o->first = FALSE;
}

static double
objective_f (const gsl_vector *v, void *data)
{
  Objective *o = data;
  objective_eval (o, v);
  return isfinite (o->last_f) ? o->last_f : GSL_POSINF;
}

static void
objective_df (const gsl_vector *v, void *data, gsl_vector *g)
{
  Objective *o = data;
  guint i;

  objective_eval (o, v);
  for (i = 0; i < o->P; i++)
    gsl_vector_set (g, i, o->last_g[i]);
}

static void
objective_fdf (const gsl_vector *v, void *data, double *f, gsl_vector *g)
{
  *f = objective_f (v, data);
  objective_df (v, data, g);
}

static void
objective_params_array (const Objective *o, const double *v, double *p)
{
  guint i;

  for (i = 0; i < o->P; i++)
    p[i] = v[i] / o->scale[i];
}

/* GSL's BFGS (vector_bfgs2) from v until the loss moves by less than
 * 10⁻⁴ (in units of the log-likelihood, where one σ is ½) three times
 * running, for at most max iterations and o->budget evaluations (which it
 * uses up); v is the end point. *converged: it met that test (or the
 * gradient's, or GSL found no step that lowers the loss), not a limit.
 * FALSE with an error when cancelled or the loss or its gradient is not
 * finite. */
static gboolean
run_bfgs (Objective            *o,
          double               *v,
          const AiryFitOptions *options,
          guint                 restart,
          guint                 max,
          guint                *iterations,
          double               *loss,
          gboolean             *converged,
          GCancellable         *cancellable,
          GError              **error)
{
  gsl_multimin_function_fdf fdf = { objective_f, objective_df, objective_fdf, o->P, o };
  gsl_multimin_fdfminimizer *min = gsl_multimin_fdfminimizer_alloc (gsl_multimin_fdfminimizer_vector_bfgs2, o->P);
  gsl_vector *x = gsl_vector_alloc (o->P);
  guint it, still = 0, i;
  double prev = INFINITY;
  gboolean ok = TRUE, met = FALSE;

  for (i = 0; i < o->P; i++)
    gsl_vector_set (x, i, v[i]);
  o->have_last = FALSE;
  o->first = TRUE;
  o->stopped = o->non_finite = FALSE;
  gsl_multimin_fdfminimizer_set (min, &fdf, x, 0.02, 0.1);
  for (it = 0; it < max && !o->stopped; it++)
    {
      int status = gsl_multimin_fdfminimizer_iterate (min);
      double f = gsl_multimin_fdfminimizer_minimum (min);

      if (o->stopped)
        break;    /* the iteration ran on values that were not computed */
      if (options->progress)
        options->progress (restart, it + 1, f, options->user_data);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }
      if (status)
        {
          it++;   /* an iteration that made no progress counts: it was evaluated */
          met = TRUE;
          break;
        }
      still = prev - f < 1e-4 ? still + 1 : 0;
      prev = f;
      if (still >= 3 || gsl_multimin_test_gradient (gsl_multimin_fdfminimizer_gradient (min), 1e-6) == GSL_SUCCESS)
        {
          it++;
          met = TRUE;
          break;
        }
    }
  *iterations = it;
  if (converged)
    *converged = met && !o->stopped;
  *loss = gsl_multimin_fdfminimizer_minimum (min);
  for (i = 0; i < o->P; i++)
    v[i] = gsl_vector_get (gsl_multimin_fdfminimizer_x (min), i);
  if (ok && !_airy_fit_model_check (o->m, error))
    ok = FALSE;
  if (ok && o->non_finite)
    {
      if (o->bad_param < o->P)
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("the fit cannot go on: at start %u, iteration %u, the gradient in parameter %u is not "
                       "finite (the model or the data hold values that are not finite)"),
                     restart + 1, it + 1, o->bad_param);
      else
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("the fit cannot go on: at start %u, iteration %u, the loss is %g (the model or the "
                       "data hold values that are not finite)"),
                     restart + 1, it + 1, o->bad_f);
      ok = FALSE;
    }
  gsl_multimin_fdfminimizer_free (min);
  gsl_vector_free (x);
  return ok;
}

gboolean
_airy_fit_minimize (AiryFitModel  *model,
                    const float   *data,
                    gboolean       poisson,
                    double         noise_var,
                    double        *params,
                    guint          max_iterations,
                    guint         *iterations,
                    guint         *evaluations,
                    double        *loss,
                    GError       **error)
{
  AiryFitOptions options;
  Objective o;
  guint P = _airy_fit_model_n_params (model), i;
  double v[P];
  gboolean ok;

  airy_fit_options_init (&options);
  gsl_set_error_handler_off ();
  objective_init (&o, model, data, poisson, noise_var, params[P - 2], params[P - 1]);
  o.budget = EVALUATIONS_PER_ITERATION * max_iterations;
  for (i = 0; i < P; i++)
    v[i] = params[i] * o.scale[i];
  ok = run_bfgs (&o, v, &options, 0, max_iterations, iterations, loss, NULL, NULL, error);
  objective_params_array (&o, v, params);
  *evaluations = o.evaluations;
  objective_clear (&o);
  return ok;
}

/* Where the passes run (options->backend): NULL or "auto" takes a device
 * of a backend that can fit (CUDA), and the CPU, with a warning, when
 * that device fails to set up; a backend asked for by name must work. */
static gboolean
fit_device (AiryFitModel *m, const AiryFitOptions *options, AiryFitResult *res, GError **error)
{
  gboolean asked = options->backend != NULL && !g_str_equal (options->backend, "auto");
  AiryBackend *backend = airy_backend_choose (options->backend, error);
  g_autoptr(GError) local = NULL;
  AiryDeviceInfo info = { 0 };

  if (backend == NULL)
    return FALSE;
  if (!g_str_equal (airy_backend_get_name (backend), "cpu"))
    {
      guint n = airy_backend_n_devices (backend);

      /* a device the backend lacks is the caller's mistake, also for
       * "auto": refused, not a reason to fall back to the CPU */
      if (n > 0 && options->device >= n)
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("device: must be in [0, %u] for backend %s, got %u"), n - 1, airy_backend_get_name (backend),
                       options->device);
          return FALSE;
        }
      if (_airy_fit_model_set_device (m, backend, options->device, &local))
        {
          res->backend = g_strdup (airy_backend_get_name (backend));
          airy_backend_device_info (backend, options->device, &info);
          res->device = g_strdup (info.name ? info.name : "?");
          airy_device_info_clear (&info);
          return TRUE;
        }
      if (asked)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_ptr_array_add (res->warnings, g_strdup_printf (_("the fit runs on the CPU: %s"), local->message));
    }
  /* the CPU's devices (airy_backend_n_devices: 1, or AIRY_CPU_DEVICES):
   * a device it does not have is refused, not ignored */
  {
    AiryBackend *cpu = airy_backend_lookup ("cpu");
    guint n = cpu ? airy_backend_n_devices (cpu) : 1;

    if (options->device >= n)
      {
        g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                     _("device: must be in [0, %u] for backend %s, got %u"), n ? n - 1 : 0, "cpu", options->device);
        return FALSE;
      }
  }
  res->backend = g_strdup ("cpu");
  res->device = g_strdup ("CPU");
  res->threads = m->threads;
  return TRUE;
}

/* Poisson's loss (NLL minus its saturated value, ½ the deviance) of a fit
 * to the noise is about ½ per voxel (the deviance, χ²-like, about 1 per
 * voxel for counts ≳ 1, less for fewer), with a spread of about √(N/2)
 * over N voxels. Twice that, 1 per voxel, is hundreds of σ above it for
 * any window of the fit (N ≥ 10³) and yet lets a fit of real beads whose
 * model is not quite exact (0.75 per voxel ends the restarts as "fits to
 * the noise") pass: above it the model does not describe the data. */
#define POISSON_LOSS_PER_VOXEL_LIMIT 1.0

/* a warning without its "elements[i]: " (the model's chain has the fitted
 * mask in it: the same element has another index there) */
static const char *
without_element (const char *warning)
{
  const char *p = warning;

  if (!g_str_has_prefix (p, "elements["))
    return warning;
  p += strlen ("elements[");
  while (g_ascii_isdigit (*p))
    p++;
  return g_str_has_prefix (p, "]: ") ? p + 3 : warning;
}

/* The warnings of a fit whose uncertainties (which assume a converged fit
 * of a model that describes the data) cannot be trusted: the best start
 * ended at its iteration or evaluation limit, or Poisson's loss is far
 * above a fit to the noise. */
static void
fit_quality_warnings (AiryFitResult *res, guint best_start, guint max_it, gboolean poisson, gsize n_voxels)
{
  double per_voxel = n_voxels > 0 ? res->loss / (double) n_voxels : 0.0;

  if (!res->converged)
    g_ptr_array_add (res->warnings,
                     g_strdup_printf (_("the fit did not converge: its best start (%u of %u) stopped after %u "
                                        "iterations at its limit (%u iterations, %u evaluations) before the loss "
                                        "settled; the coefficients may be far off, and their uncertainties assume "
                                        "a converged fit (raise the iteration limit)"),
                                      best_start + 1, res->restarts, res->iterations, max_it,
                                      EVALUATIONS_PER_ITERATION * max_it));
  if (poisson && isfinite (res->loss) && per_voxel > POISSON_LOSS_PER_VOXEL_LIMIT)
    g_ptr_array_add (res->warnings,
                     g_strdup_printf (_("the loss is %.3g per voxel (%.6g over %.0f voxels), more "
                                        "than twice the ½ per voxel of a fit to the noise: the fit has not "
                                        "converged or the model does not describe the data (the offset or gain, "
                                        "another bead in the window); the uncertainties assume a converged fit of "
                                        "a model that does"),
                                      per_voxel, res->loss, (double) n_voxels));
}

/* the model of the window (it plans the system again: its warnings once,
 * not twice) */
static AiryFitModel *
fit_model_new (AirySystem *system, const int *indices, guint K, const AiryFitData *d, guint threads,
               AiryFitResult *res, GError **error)
{
  g_autoptr(GPtrArray) more = g_ptr_array_new_with_free_func (g_free);
  AiryFitModel *m = _airy_fit_model_new (system, indices, K, d->wh, d->ww, threads, more, error);
  guint a, b;

  for (a = 0; a < more->len; a++)
    {
      gboolean seen = FALSE;

      for (b = 0; b < res->warnings->len && !seen; b++)
        seen = g_strcmp0 (without_element (g_ptr_array_index (more, a)),
                          without_element (g_ptr_array_index (res->warnings, b))) == 0;
      if (!seen)
        g_ptr_array_add (res->warnings, g_strdup (g_ptr_array_index (more, a)));
    }
  return m;
}

/* the start: zero aberration, the bead at the centroid of the brightest
 * 5 × 5 pixels of the projection and in its brightest plane; the depths
 * the starts begin at (z_starts) and the amplitude A0 */
static void
fit_start (AiryFitModel *m, const AiryFitData *d, guint K, double noise_var, double *p, double *A0,
           double z_starts[4])
{
  double sx = 0, sy = 0, sw = 0, pk = -INFINITY;
  int wbx = (int) d->bx - (int) d->cx, wby = (int) d->by - (int) d->cy, di, dj;
  guint kmax = 0, k;
  g_autofree float *mu = g_new (float, d->win * m->depth);
  double sd = 0, sm = 0;
  gsize q;

  for (di = -2; di <= 2; di++)
    for (dj = -2; dj <= 2; dj++)
      {
        int yy = wby + di, xx = wbx + dj;
        double v = 0;
        if (yy < 0 || xx < 0 || yy >= (int) d->wh || xx >= (int) d->ww)
          continue;
        for (k = 0; k < m->depth; k++)
          v += d->data[(gsize) k * d->win + (gsize) yy * d->ww + xx] - d->B0;
        v = MAX (v, 0.0);
        sx += v * xx;
        sy += v * yy;
        sw += v;
      }
  if (sw > 0)
    {
      p[K] = (sx / sw - (double) (d->ww / 2)) * m->du_x;
      p[K + 1] = (sy / sw - (double) (d->wh / 2)) * m->du_y;
    }
  for (k = 0; k < m->depth; k++)
    for (q = 0; q < d->win; q++)
      if (d->data[(gsize) k * d->win + q] > pk)
        pk = d->data[(gsize) k * d->win + q], kmax = k;
  p[K + 3] = 1.0;
  p[K + 4] = 0.0;
  for (q = 0; q < d->win * m->depth; q++)
    sd += d->data[q] - d->B0;
  /* z: the brightest plane is a poor guess under strong aberrations;
   * the best of up to 9 depths over the planes' range (at zero
   * aberration, the amplitude matching the data's sum) */
  {
    guint nc = m->depth > 1 ? MIN (m->depth, 9) : 1, ci;
    double best_z = m->z[kmax], best_f = INFINITY;

    for (ci = 0; ci <= nc; ci++)
      {
        double zc = ci == nc ? m->z[kmax]
                             : nc > 1 ? m->z[0] + (m->z[m->depth - 1] - m->z[0]) * ci / (nc - 1) : m->z[0];
        double f, A;

        p[K + 2] = zc;
        p[K + 3] = 1.0;
        p[K + 4] = 0.0;
        _airy_fit_model_eval (m, p, mu);
        sm = 0;
        for (q = 0; q < d->win * m->depth; q++)
          sm += mu[q];
        A = sd > 0 && sm > 0 ? sd / sm : 1.0;
        p[K + 3] = A;
        p[K + 4] = d->B0;
        f = _airy_fit_model_loss (m, d->data, d->poisson, noise_var, p, NULL);
        if (f < best_f)
          {
            best_f = f;
            best_z = zc;
            *A0 = A;
          }
      }
    z_starts[0] = m->depth > 1 ? 0.5 * (m->z[0] + m->z[m->depth - 1]) : m->z[0];
    z_starts[1] = best_z;
    z_starts[2] = m->depth > 1 ? 0.75 * m->z[0] + 0.25 * m->z[m->depth - 1] : m->z[0];
    z_starts[3] = m->depth > 1 ? 0.25 * m->z[0] + 0.75 * m->z[m->depth - 1] : m->z[0];
  }
}

/* Starts: at zero aberration from the middle of the planes, the best
 * depth of the scan and the quartiles (the loss has a second basin
 * where a strong aberration trades against the depth); for a single
 * plane, random terms of ±0.1 waves (it leaves the sign of the even
 * terms open, so all of them run and the best is kept). A stack stops at
 * the first start that fits to the noise: a loss of at most 0.75 per
 * voxel (½ expected), unless a number of starts was asked for. The best
 * start's parameters in best, its index in best_start; res gets the
 * counts, the loss and the starts' warnings. */
static gboolean
fit_restarts (AiryFitModel *m, const AiryFitData *d, const AiryFitOptions *options, guint K, double noise_var,
              double A0, const double z_starts[4], double *p, double *best, guint max_it, guint *best_start,
              AiryFitResult *res, GCancellable *cancellable, GError **error)
{
  guint P = K + 5, i, restart, n_starts, coarse;
  double best_loss = INFINITY;
  GError *local_error = NULL;
  Objective o = { 0 };

  objective_init (&o, m, d->data, d->poisson, noise_var, A0, d->B0);
  p[K + 3] = A0;
  p[K + 4] = d->B0;
  /* four starts at most by default; every one of them for a single plane */
  n_starts = options->restarts ? options->restarts : 4;
  coarse = m->depth >= 16 ? m->depth / 8 : 1;
  for (restart = 0; restart < n_starts; restart++)
    {
      g_autoptr(GRand) rand = g_rand_new_with_seed (options->seed + restart);
      double v[P], f = INFINITY;
      guint it = 0, it2 = 0;
      gboolean converged = FALSE;

      if (!options->restarts && m->depth > 1 && best_loss <= 0.75 * d->win * m->depth)
        break;
      res->restarts++;
      for (i = 0; i < P; i++)
        v[i] = p[i] * o.scale[i];
      v[K + 2] = z_starts[restart % 4] * o.scale[K + 2];
      if (restart > 0 && (m->depth <= 1 || restart >= 4))
        for (i = 0; i < K; i++)
          v[i] = g_rand_double_range (rand, -0.1, 0.1) * o.scale[i];
      /* every coarse-th plane first (the path to the basin costs a
       * fraction), then all of them: at most max_it iterations and
       * EVALUATIONS_PER_ITERATION·max_it evaluations in all, the coarse
       * stage at most half of each */
      if (coarse > 1)
        {
          _airy_fit_model_set_stride (m, coarse);
          o.budget = EVALUATIONS_PER_ITERATION * max_it / 2;
          if (!run_bfgs (&o, v, options, restart, max_it / 2, &it, &f, NULL, cancellable, &local_error))
            break;
          _airy_fit_model_set_stride (m, 1);
          o.budget += EVALUATIONS_PER_ITERATION * (max_it - max_it / 2);
        }
      else
        o.budget = EVALUATIONS_PER_ITERATION * max_it;
      if (!run_bfgs (&o, v, options, restart, max_it - it, &it2, &f, &converged, cancellable, &local_error))
        break;
      if (o.stopped)
        g_ptr_array_add (res->warnings,
                         g_strdup_printf (_("start %u stopped at its limit of %u evaluations (%u per iteration)"),
                                          restart + 1, EVALUATIONS_PER_ITERATION * max_it,
                                          EVALUATIONS_PER_ITERATION));
      res->iterations_total += it + it2;
      if (f < best_loss)
        {
          best_loss = f;
          objective_params_array (&o, v, best);
          res->iterations = it + it2;
          res->converged = converged;
          *best_start = restart;
        }
    }
  _airy_fit_model_set_stride (m, 1);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      objective_clear (&o);
      return FALSE;
    }
  res->evaluations = o.evaluations;
  objective_clear (&o);
  res->loss = best_loss;
  return TRUE;
}

/* 1-σ uncertainties: the diagonal of the inverse Fisher information;
 * least squares with the noise of the residuals */
static void
fit_uncertainties (AiryFitModel *m, const AiryFitData *d, guint K, double noise_var, const double *best,
                   AiryFitResult *res)
{
  guint P = K + 5, i;
  g_autofree double *fisher = g_new0 (double, (gsize) P * P);
  gsl_matrix_view F = gsl_matrix_view_array (fisher, P, P);
  double sig[P];
  int status;

  if (!d->poisson)
    {
      double rss = _airy_fit_model_loss (m, d->data, FALSE, 1.0, best, NULL) * 2.0;
      gsize N = d->win * m->depth;
      noise_var = N > P ? rss / (N - P) : noise_var;
    }
  _airy_fit_model_fisher (m, d->poisson, noise_var, best, fisher);
  res->uncertainties = g_new (double, K);
  status = gsl_linalg_cholesky_decomp1 (&F.matrix);
  if (status == 0)
    status = gsl_linalg_cholesky_invert (&F.matrix);
  for (i = 0; i < P; i++)
    sig[i] = status == 0 ? sqrt (gsl_matrix_get (&F.matrix, i, i)) : NAN;
  if (status != 0)
    g_ptr_array_add (res->warnings, g_strdup (_("the Fisher information is singular: no uncertainties")));
  memcpy (res->uncertainties, sig, sizeof (double) * K);
  for (i = 0; i < 3; i++)
    res->position_uncertainties[i] = sig[K + i];
  res->amplitude_uncertainty = sig[K + 3] * d->gain;
  res->background_uncertainty = sig[K + 4] * d->gain;
}

/* the bead's position, amplitude and background in the stack's units,
 * the window, RMS and Strehl, the model and the residual in data units */
static void
fit_result_fill (AiryFitModel *m, const AiryFitData *d, guint K, const double *best, AiryFitResult *res)
{
  double s2 = 0;
  guint i;
  gsize q;

  res->position[0] = ((double) d->cx + d->ww / 2 - (double) (d->grid_w / 2)) * m->du_x + best[K];
  res->position[1] = ((double) d->cy + d->wh / 2 - (double) (d->grid_h / 2)) * m->du_y + best[K + 1];
  res->position[2] = best[K + 2];
  if (m->depth > 1)
    {
      double z0 = MIN (m->z[0], m->z[m->depth - 1]), z1 = MAX (m->z[0], m->z[m->depth - 1]);
      double tol = 1e-6 * MAX (1.0, z1 - z0);

      /* the focus of the model is then extrapolated, not measured */
      if (res->position[2] < z0 - tol || res->position[2] > z1 + tol)
        g_ptr_array_add (res->warnings,
                         g_strdup_printf (_("the bead's fitted z (%.3f µm) lies outside the stack's planes "
                                            "(%.3f … %.3f µm): its focus is not in the stack"),
                                          res->position[2], z0, z1));
    }
  res->amplitude = best[K + 3] * d->gain;
  res->background = best[K + 4] * d->gain + d->offset;
  res->window[0] = d->cx;
  res->window[1] = d->cy;
  res->window[2] = d->ww;
  res->window[3] = d->wh;

  /* RMS and Strehl over the pupil at the first wavelength */
  for (i = 0; i < K; i++)
    s2 += best[i] * best[i];
  res->rms_waves = sqrt (s2);
  res->strehl = _airy_fit_model_strehl (m, best);

  res->model = airy_stack_new (m->depth, d->wh, d->ww);
  res->residual = airy_stack_new (m->depth, d->wh, d->ww);
  _airy_fit_model_eval (m, best, res->model->data);
  for (q = 0; q < d->win * m->depth; q++)
    {
      res->model->data[q] = (float) (res->model->data[q] * d->gain + d->offset);
      res->residual->data[q] = (float) (d->data[q] * d->gain + d->offset) - res->model->data[q];
    }
  for (i = 0; i < 2; i++)
    {
      AiryStack *s = i == 0 ? res->model : res->residual;
      s->dx = m->du_x;
      s->dy = m->du_y;
      s->dz = m->depth > 1 ? (m->z[m->depth - 1] - m->z[0]) / (m->depth - 1) : 0.0;
      airy_stack_set_z (s, m->z);
    }
}

static void
fit_data_free (AiryFitData *d)
{
  _airy_fit_data_clear (d);
  g_free (d);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryFitData, fit_data_free)

AiryFitResult *
airy_fit_stack (AirySystem           *system,
                const AiryStack      *beads,
                const AiryFitOptions *options_in,
                GCancellable         *cancellable,
                GError              **error)
{
  g_autoptr(AiryFitResult) res = g_new0 (AiryFitResult, 1);
  g_autoptr(AiryFitData) d = g_new0 (AiryFitData, 1);
  g_autoptr(AiryFitModel) m = NULL;
  g_autofree int *indices = NULL;
  g_autofree double *p = NULL, *best = NULL;
  AiryFitOptions options;
  double noise_var, A0 = 1.0, z_starts[4];
  gint64 t0 = g_get_monotonic_time ();
  guint zmax, K = 0, P, i, threads, max_it, best_start = 0;

  g_return_val_if_fail (AIRY_IS_SYSTEM (system), NULL);
  g_return_val_if_fail (beads != NULL && beads->data != NULL, NULL);
  if (options_in)
    options = *options_in;
  else
    airy_fit_options_init (&options);
  /* GSL's default handler aborts; its status codes are checked here */
  gsl_set_error_handler_off ();
  res->warnings = g_ptr_array_new_with_free_func (g_free);

  zmax = options.zernike_max ? options.zernike_max : ZERNIKE_DEFAULT_MAX;
  if (zmax < 3 || zmax > 65)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("zernike: the highest ANSI index must be in [3, 65], got %u"), zmax);
      return NULL;
    }
  indices = g_new (int, zmax);
  for (i = 3; i <= zmax; i++)
    if (i != 4)
      indices[K++] = (int) i;
  P = K + 5;

  if (!_airy_fit_data_prepare (d, system, beads, &options, res->warnings, error))
    return NULL;
  res->objective = d->poisson ? AIRY_FIT_OBJECTIVE_POISSON : AIRY_FIT_OBJECTIVE_LEAST_SQUARES;
  noise_var = d->sigma > 0 ? d->sigma * d->sigma : 1.0;

  threads = options.threads ? options.threads : g_get_num_processors ();
  m = fit_model_new (system, indices, K, d, threads, res, error);
  if (m == NULL || !fit_device (m, &options, res, error))
    return NULL;

  p = g_new0 (double, P);
  best = g_new0 (double, P);
  fit_start (m, d, K, noise_var, p, &A0, z_starts);
  if (!_airy_fit_model_check (m, error))
    return NULL;

  max_it = options.max_iterations ? options.max_iterations : MAX_ITERATIONS;
  if (!fit_restarts (m, d, &options, K, noise_var, A0, z_starts, p, best, max_it, &best_start, res, cancellable,
                     error))
    return NULL;
  fit_quality_warnings (res, best_start, max_it, d->poisson, d->win * m->depth);

  res->n_terms = K;
  res->indices = g_memdup2 (indices, sizeof (int) * K);
  res->coefficients = g_memdup2 (best, sizeof (double) * K);
  fit_uncertainties (m, d, K, noise_var, best, res);
  fit_result_fill (m, d, K, best, res);
  if (!_airy_fit_model_check (m, error))
    return NULL;
  res->seconds = (g_get_monotonic_time () - t0) / 1e6;
  res->seconds_per_iteration = res->iterations_total > 0 ? res->seconds / res->iterations_total : 0.0;
  return g_steal_pointer (&res);
}

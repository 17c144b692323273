/* Helpers of the fit's tests (test-fit.c, test-fit-device.c, test-cuda.c):
 * the systems, the true terms, the Poisson sampling, and the comparison
 * of a model's passes on a device with the CPU's. */
#pragma once

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "airy-fit-private.h"
#include "airy-test-util.h"

/* A small microscope: 0.1 µm camera pixels, NA 0.8 in water, planes over ±2 µm. */
static inline AirySystem *
micro_system (guint size, guint planes, const char *objective_extra, const char *elements)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": 0.1},"
    " \"spectrum\": {\"wavelengths\": [0.532], \"weights\": [1.0]},"
    " \"z\": {\"start\": -2.0, \"stop\": 2.0, \"count\": %u},"
    " \"microscope\": {\"f\": 100.0, \"n\": 1.33, \"na\": 0.8, \"f-tube\": 100.0%s},"
    " \"elements\": [%s], \"sensor\": {\"reduce\": \"sum\"}, \"sample\": {\"constant\": 1.0}}",
    size, size, planes, objective_extra ? objective_extra : "", elements ? elements : "");
  return test_system (json);
}

/* High NA: the oil-vectorial preset (NA 1.4 in oil, n 1.518, λ 0.6 µm,
 * aplanatic, nonparaxial) on size² pixels of 0.0858 µm at the camera, planes
 * over ±1 µm; vectorial unpolarized or scalar, with source keys and the
 * elements between the source and the lens. */
static inline AirySystem *
oil_system (guint size, guint planes, gboolean vectorial, const char *source_extra, const char *elements)
{
  g_autofree char *json = g_strdup_printf (
    "{\"airy\": 1, \"grid\": {\"shape\": [%u, %u], \"spacing\": %.17g},"
    " \"spectrum\": {\"wavelengths\": [0.6], \"weights\": [1.0]},"
    " \"z\": {\"start\": -1.0, \"stop\": 1.0, \"count\": %u},"
    " \"elements\": [{\"type\": \"objective-point-source\", \"f\": 100.0, \"n\": 1.518, \"na\": 1.4,"
    "   \"defocus-model\": \"nonparaxial\", \"apodisation\": \"aplanatic\"%s%s}, %s%s"
    "  {\"type\": \"ff-lens\", \"f\": 100.0, \"n\": 1.518}]}",
    size, size, 512 * 0.9 / size, planes,
    vectorial ? ", \"field\": \"vectorial\", \"polarization\": \"unpolarized\"" : "",
    source_extra ? source_extra : "", elements ? elements : "", elements ? ", " : "");
  return test_system (json);
}

/* the ten true terms: ANSI 3, 5 … 13 (±0.15 waves) */
static const int true_idx[] = { 3, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
static const double true_c[] = { 0.12, -0.15, 0.08, -0.10, 0.15, -0.05, 0.10, -0.12, 0.06, 0.14 };

static inline char *
mask_json (const int *idx, const double *c, guint n)
{
  GString *s = g_string_new ("{\"type\": \"phase-mask\", \"source\": \"zernike\", \"zernike-indices\": [");
  guint i;

  for (i = 0; i < n; i++)
    g_string_append_printf (s, "%s%d", i ? ", " : "", idx[i]);
  g_string_append (s, "], \"zernike-coefficients\": [");
  for (i = 0; i < n; i++)
    g_string_append_printf (s, "%s%.17g", i ? ", " : "", c[i]);
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}

static inline void
poisson_sample (const float *mu, float *out, gsize n, unsigned long seed)
{
  gsl_rng *r = gsl_rng_alloc (gsl_rng_mt19937);
  gsize q;

  gsl_rng_set (r, seed);
  for (q = 0; q < n; q++)
    out[q] = (float) gsl_ran_poisson (r, mu[q]);
  gsl_rng_free (r);
}

/* Data d (Poisson, seed) drawn from the model at fixed true parameters,
 * and a point p away from them where every gradient component is large. */
static inline void
test_fit_data_and_point (AiryFitModel *m, unsigned long seed, float *d, double *p)
{
  guint K = m->K, P = K + 5, i;
  gsize n = (gsize) m->depth * m->win_h * m->win_w;
  g_autofree float *mu = g_new (float, n);
  double truth[P];

  for (i = 0; i < K; i++)
    truth[i] = 0.1 * sin (1.0 + i);
  truth[K] = 0.05;
  truth[K + 1] = -0.08;
  truth[K + 2] = 0.2;
  truth[K + 3] = 2e4;
  truth[K + 4] = 10.0;
  _airy_fit_model_eval (m, truth, mu);
  poisson_sample (mu, d, n, seed);
  for (i = 0; i < P; i++)
    p[i] = truth[i];
  for (i = 0; i < K; i++)
    p[i] += i % 2 ? 0.04 : -0.04;
  p[K] += 0.04;
  p[K + 1] -= 0.03;
  p[K + 2] += 0.15;
  p[K + 3] *= 1.1;
  p[K + 4] = 12.0;
}

/* A model's loss, gradient and μ on its device against the CPU's, at a
 * point away from the optimum of data drawn at truth (both models of the
 * same system, window and terms; cpu has no device): *loss_rel, the
 * largest gradient difference over the largest component (*grad_rel) and
 * the largest μ difference over the peak (*mu_rel), for every plane and
 * for every stride-th. */
static inline void
test_fit_compare_device (AiryFitModel *cpu, AiryFitModel *dev, gboolean poisson, guint stride,
                         double *loss_rel, double *grad_rel, double *mu_rel)
{
  guint K = cpu->K, P = K + 5, i, s;
  gsize n = (gsize) cpu->depth * cpu->win_h * cpu->win_w, q;
  g_autofree float *mu = g_new (float, n), *mu2 = g_new (float, n), *d = g_new (float, n);
  double p[P], g1[P], g2[P], gmax = 0, gd = 0, peak = 0, md = 0, lr = 0;

  test_fit_data_and_point (cpu, 11, d, p);
  _airy_fit_model_eval (dev, p, mu2);
  _airy_fit_model_eval (cpu, p, mu);
  for (q = 0; q < n; q++)
    {
      peak = MAX (peak, fabs (mu[q]));
      md = MAX (md, fabs (mu[q] - mu2[q]));
    }
  for (s = 1; s <= stride; s += MAX (stride - 1, 1))
    {
      double l1, l2;

      _airy_fit_model_set_stride (cpu, s);
      _airy_fit_model_set_stride (dev, s);
      l1 = _airy_fit_model_loss (cpu, d, poisson, 4.0, p, g1);
      l2 = _airy_fit_model_loss (dev, d, poisson, 4.0, p, g2);
      g_test_message ("stride %u: loss %.12g (CPU) %.12g (device)", s, l1, l2);
      lr = MAX (lr, fabs (l1 - l2) / fabs (l1));
      for (i = 0; i < P; i++)
        {
          g_test_message ("  parameter %u: %.9g (CPU) %.9g (device)", i, g1[i], g2[i]);
          gmax = MAX (gmax, fabs (g1[i]));
        }
      for (i = 0; i < P; i++)
        gd = MAX (gd, fabs (g1[i] - g2[i]));
    }
  _airy_fit_model_set_stride (cpu, 1);
  _airy_fit_model_set_stride (dev, 1);
  *loss_rel = lr;
  *grad_rel = gd / gmax;
  *mu_rel = md / peak;
  g_test_message ("loss %.2g, gradient %.2g of its largest component, μ %.2g of the peak", *loss_rel, *grad_rel,
                  *mu_rel);
}

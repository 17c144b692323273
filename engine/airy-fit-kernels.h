/* airy-fit-kernels.h: the fit's per-voxel and per-pixel steps, one formula
 * for two compilers (airy-physics.h's rule). airy-fit-model.c evaluates the
 * loss and the adjoint's pixel map with them on the CPU; the CUDA module's
 * fit kernels (engine/cuda/airy-cuda-fit.c) are these bodies, one thread
 * per index, with cuFFT for the transforms; tests/test-fit.c runs the same
 * bodies on the host with FFTW for cuFFT and checks them against the CPU
 * model. Plain C, no GLib: complex values are interleaved float pairs.
 *
 * A device pass over nb planes (DESIGN §3 for the model, airy-fit-model.c
 * for the adjoint):
 *   field   X[b][l] (h × w) = base_l · e^{i zt_b G_l} on the pupil's rows
 *           y0 … y0 + rows − 1, zero elsewhere
 *   (forward 2-D DFT of every X[b][l])
 *   loss    per pixel of plane b: on the window, I = Σ_l s_l |X[b][l]|²,
 *           μ = A·I + B, the voxel's loss and w = ∂L/∂μ, and (gradient)
 *           X[b][l] ← A·s_l·w·X[b][l]; off the window X[b][l] ← 0
 *   (unnormalised backward 2-D DFT of every X[b][l]: V = DFTᴴ(Y))
 *   adjoint M_l (pupil's rows) += Σ_b −2 Im(conj(V[b][l])·u[b][l]) */
#pragma once

#include <stddef.h>

#include "airy-physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fitted window and the loss's constants for one pass. */
typedef struct
{
  unsigned     L, h, w;          /* entries (wavelengths × components), plane size */
  unsigned     y0, rows;         /* the pupil's band */
  unsigned     win_y0, win_x0, win_h, win_w;
  const float *scale;            /* L: the op's s_l */
  double       A, B;             /* amplitude, background */
  double       logB;             /* log B (0 when B ≤ 0) */
  int          poisson;
  double       inv_var;          /* least squares: 1 / noise variance */
  const float  *dpos;            /* Poisson: d⁺ = max(d, 0), depth × window */
  const double *dconst;          /* Poisson: d⁺·log d⁺ − d */
  const float  *data;            /* least squares: d */
  int           grad;            /* scale X for the backward pass */
} AiryFitLossArgs;

/* μ never reaches 0 in a logarithm or a division */
AIRY_HD double
airy_fit_mu_floor (double mu)
{
  return mu > 1e-12 ? mu : 1e-12;
}

/* One voxel's Poisson loss μ − d⁺·log μ + c (the NLL minus its saturated
 * value, c = d⁺·log d⁺ − d precomputed) and *w = ∂/∂μ, with x = A·I the
 * PSF's part of μ = x + B and logB = log B. log μ = log B + log1p(x/B) by its series where
 * x < B/100 (error below 2·10⁻¹³): the far wings cost no logarithm. */
AIRY_HD double
airy_fit_voxel_poisson (double x, double B, double logB, double dpos, double dconst, double *w)
{
  double mu = airy_fit_mu_floor (x + B), lg;

  if (B > 0 && x >= 0.0 && x < 0.01 * B)
    {
      double t = x / B;
      lg = logB + t * (1.0 - t * (0.5 - t * (1.0 / 3 - t * (0.25 - t * 0.2))));
    }
  else
    lg = log (mu);
  *w = 1.0 - dpos / mu;
  return mu - dpos * lg + dconst;
}

/* One voxel's ½ (μ − d)²·inv_var and *w = ∂/∂μ */
AIRY_HD double
airy_fit_voxel_lsq (double mu, double d, double inv_var, double *w)
{
  double e = mu - d;

  *w = e * inv_var;
  return 0.5 * e * *w;
}

/* −2 Im(conj(v)·u): a pixel's term of the adjoint's map M */
AIRY_HD double
airy_fit_adjoint_term (float vr, float vi, float ur, float ui)
{
  return -2.0 * ((double) vr * ui - (double) vi * ur);
}

/* u = base·e^{i·zt·g} */
AIRY_HD void
airy_fit_defocus (const float *base, double zt, double g, float *u)
{
  float s, c;

  airy_defocus_cis (zt, g, &s, &c);
  u[0] = base[0] * c - base[1] * s;
  u[1] = base[0] * s + base[1] * c;
}

/* field, index i < nb·L·h·w of X[b][l][y][x]; base and G: L × rows × w */
AIRY_HD void
airy_fit_field_at (size_t i, const AiryFitLossArgs *a, const float *base, const double *G, const double *zt,
                   float *X)
{
  size_t np = (size_t) a->h * a->w, p = i % np, bl = i / np;
  unsigned l = (unsigned) (bl % a->L), b = (unsigned) (bl / a->L);
  unsigned y = (unsigned) (p / a->w), x = (unsigned) (p % a->w);

  if (y >= a->y0 && y < a->y0 + a->rows)
    {
      size_t k = ((size_t) l * a->rows + (y - a->y0)) * a->w + x;
      airy_fit_defocus (base + 2 * k, zt[b], G[k], X + 2 * i);
    }
  else
    X[2 * i] = X[2 * i + 1] = 0.0f;
}

/* loss, index i < nb·h·w of plane b's pixels (plane k[b] of the data):
 * sums[0 … 2] += loss, ∂L/∂A, ∂L/∂B of the voxel; mu (nb × window, or
 * NULL) gets μ; X as the header says */
AIRY_HD void
airy_fit_loss_at (size_t i, const AiryFitLossArgs *a, const unsigned *k, float *X, float *mu, double sums[3])
{
  size_t np = (size_t) a->h * a->w, p = i % np, win = (size_t) a->win_h * a->win_w;
  unsigned b = (unsigned) (i / np), y = (unsigned) (p / a->w), x = (unsigned) (p % a->w), l;
  float *Xb = X + 2 * (size_t) b * a->L * np;

  sums[0] = sums[1] = sums[2] = 0.0;
  if (y >= a->win_y0 && y < a->win_y0 + a->win_h && x >= a->win_x0 && x < a->win_x0 + a->win_w)
    {
      size_t q = (size_t) (y - a->win_y0) * a->win_w + (x - a->win_x0), v = (size_t) k[b] * win + q;
      double inten = 0.0, w;

      for (l = 0; l < a->L; l++)
        {
          const float *c = Xb + 2 * ((size_t) l * np + p);
          inten += a->scale[l] * ((double) c[0] * c[0] + (double) c[1] * c[1]);
        }
      if (mu)
        mu[(size_t) b * win + q] = (float) (a->A * inten + a->B);
      if (a->poisson)
        sums[0] = airy_fit_voxel_poisson (a->A * inten, a->B, a->logB, a->dpos[v], a->dconst[v], &w);
      else if (a->data)
        sums[0] = airy_fit_voxel_lsq (a->A * inten + a->B, a->data[v], a->inv_var, &w);
      else
        w = 0.0;
      sums[1] = w * inten;
      sums[2] = w;
      if (a->grad)
        for (l = 0; l < a->L; l++)
          {
            float *c = Xb + 2 * ((size_t) l * np + p), f = (float) (a->A * a->scale[l] * w);
            c[0] *= f;
            c[1] *= f;
          }
    }
  else if (a->grad)
    for (l = 0; l < a->L; l++)
      {
        float *c = Xb + 2 * ((size_t) l * np + p);
        c[0] = c[1] = 0.0f;
      }
}

/* adjoint, index i < L·rows·w of M: the backward transforms V in X */
AIRY_HD void
airy_fit_adjoint_at (size_t i, const AiryFitLossArgs *a, unsigned nb, const float *base, const double *G,
                     const double *zt, const float *X, double *M)
{
  size_t nband = (size_t) a->rows * a->w, np = (size_t) a->h * a->w, r = (i % nband) / a->w;
  unsigned l = (unsigned) (i / nband), x = (unsigned) (i % a->w), b;
  size_t p = (a->y0 + r) * a->w + x;
  double m = 0.0;

  for (b = 0; b < nb; b++)
    {
      const float *v = X + 2 * (((size_t) b * a->L + l) * np + p);
      float u[2];

      airy_fit_defocus (base + 2 * i, zt[b], G[i], u);
      m += airy_fit_adjoint_term (v[0], v[1], u[0], u[1]);
    }
  M[i] += m;
}

#ifdef __cplusplus
}
#endif

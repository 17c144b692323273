#define G_LOG_DOMAIN "airy-grad"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-error.h"
#include "airy-grad-private.h"

/* The 3-D localization Cramér–Rao bound as a loss of the PSF stack
 * (airy-grad-private.h, AIRY_LOSS_CRLB). For each plane p whose z lies in
 * [zmin, zmax] (with a plane either side), the expected photons per pixel
 * are μ = N·I/s + b (s: the plane's sum, N photons, b background), and the
 * emitter's position derivatives are those of the stack itself: a lateral
 * shift moves the image (∂I/∂x by central differences over the pixel, 0 on
 * the border), a shift in z moves through the planes (∂I/∂z between the
 * neighbouring planes), each scaled by N/s. The Poisson Fisher information
 * F_ij = Σ_k D_i D_j / μ gives CRLB_i = (F⁻¹)_ii, and the loss is the mean
 * over the planes and x, y, z (or the axes the spec names) of √CRLB_i
 * (µm), F with a ridge of
 * 1e-9·tr(F)/3 on its diagonal. Its gradient with respect to
 * the stack follows the same steps back, so the bound is differentiable
 * with respect to the pupil. */

#define RIDGE 1e-9

gboolean
_airy_loss_crlb_parse (AiryLoss *loss, const char *args, GError **error)
{
  g_auto(GStrv) parts = g_strsplit (args, ":", -1);
  const char *axes = "xyz", *c;
  double v[4];
  guint i;

  for (i = 0; parts[i] && i < 4; i++)
    {
      char *end = NULL;

      v[i] = g_ascii_strtod (parts[i], &end);
      if (end == parts[i] || *end != '\0' || !isfinite (v[i]))
        break;
    }
  if (i == 4 && parts[4] != NULL)
    axes = parts[4];
  loss->axes = 0;
  for (c = axes; *c; c++)
    loss->axes |= *c == 'x' ? 1 : *c == 'y' ? 2 : *c == 'z' ? 4 : 8;
  if (i != 4 || (parts[4] && parts[5]) || loss->axes == 0 || loss->axes > 7 || !(v[0] < v[1]) || !(v[2] > 0)
      || !(v[3] >= 0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("--loss crlb:%s: must be crlb:ZMIN:ZMAX:PHOTONS:BACKGROUND[:AXES] (µm, ZMIN < ZMAX; photons > 0; "
                     "background ≥ 0 per pixel; AXES of x, y, z, all three by default)"), args);
      return FALSE;
    }
  loss->zmin = v[0];
  loss->zmax = v[1];
  loss->photons = v[2];
  loss->background = v[3];
  return TRUE;
}

static double
plane_z (const AiryStack *s, guint p)
{
  return s->z ? s->z[p] : s->z0 + p * s->dz;
}

static gboolean
plane_used (const AiryLoss *loss, const AiryStack *s, guint p)
{
  double z = plane_z (s, p);

  return p > 0 && p + 1 < s->depth && z >= loss->zmin - 1e-9 && z <= loss->zmax + 1e-9;
}

gboolean
_airy_loss_crlb_check (const AiryLoss *loss, const AiryStack *result, GError **error)
{
  guint p, n = 0;

  for (p = 0; p < result->depth; p++)
    n += plane_used (loss, result, p);
  if (n > 0 && result->dx > 0 && result->dy > 0)
    return TRUE;
  g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
               _("--loss crlb: no plane of the system lies in [%g, %g] µm with a plane either side (the system gives "
                 "%u planes from %g to %g µm)"), loss->zmin, loss->zmax, result->depth, plane_z (result, 0),
               plane_z (result, result->depth ? result->depth - 1 : 0));
  return FALSE;
}

/* D_i (i = x, y, z) of plane p into d[i·np …], μ into mu; its sum */
static double
plane_derivatives (const AiryLoss *loss, const AiryStack *r, guint p, double *d, double *mu)
{
  guint H = r->height, W = r->width, x, y;
  gsize np = (gsize) H * W, k;
  const float *in = r->data + p * np, *Im = in - np, *Ip = in + np;
  double s = 0, dz = plane_z (r, p + 1) - plane_z (r, p - 1), c;

  for (k = 0; k < np; k++)
    s += in[k];
  c = loss->photons / s;
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      {
        k = (gsize) y * W + x;
        mu[k] = c * in[k] + loss->background;
        d[k] = x > 0 && x + 1 < W ? c * (in[k + 1] - in[k - 1]) / (2 * r->dx) : 0.0;
        d[np + k] = y > 0 && y + 1 < H ? c * (in[k + W] - in[k - W]) / (2 * r->dy) : 0.0;
        d[2 * np + k] = c * (Ip[k] - Im[k]) / dz;
      }
  return s;
}

/* the inverse of a symmetric positive definite 3 × 3 matrix; FALSE if singular */
static gboolean
invert3 (const double F[3][3], double C[3][3])
{
  double det;
  guint i, j;

  C[0][0] = F[1][1] * F[2][2] - F[1][2] * F[2][1];
  C[0][1] = F[0][2] * F[2][1] - F[0][1] * F[2][2];
  C[0][2] = F[0][1] * F[1][2] - F[0][2] * F[1][1];
  C[1][1] = F[0][0] * F[2][2] - F[0][2] * F[2][0];
  C[1][2] = F[0][2] * F[1][0] - F[0][0] * F[1][2];
  C[2][2] = F[0][0] * F[1][1] - F[0][1] * F[1][0];
  det = F[0][0] * C[0][0] + F[0][1] * (F[1][2] * F[2][0] - F[1][0] * F[2][2]) + F[0][2] * (F[1][0] * F[2][1] - F[1][1] * F[2][0]);
  if (!(det > 0))
    return FALSE;
  C[1][0] = C[0][1];
  C[2][0] = C[0][2];
  C[2][1] = C[1][2];
  for (i = 0; i < 3; i++)
    for (j = 0; j < 3; j++)
      C[i][j] /= det;
  return TRUE;
}

/* plane p's cotangents from Hb = ∂L/∂F (symmetric): back through F, μ,
 * the derivatives and the plane's sum into bar */
static void
plane_backward (const AiryLoss *loss, const AiryStack *r, guint p, const double *d, const double *mu, double s,
                const double Hb[3][3], float *bar)
{
  guint H = r->height, W = r->width, x, y, i, j;
  gsize np = (gsize) H * W, k;
  const float *in = r->data + p * np;
  float *b = bar + p * np;
  double c = loss->photons / s, dz = plane_z (r, p + 1) - plane_z (r, p - 1), sbar = 0;

  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      {
        double D[3], abar[3], mbar = 0;

        k = (gsize) y * W + x;
        for (i = 0; i < 3; i++)
          D[i] = d[i * np + k];
        for (i = 0; i < 3; i++)
          {
            abar[i] = 0;
            for (j = 0; j < 3; j++)
              {
                abar[i] += 2 * Hb[i][j] * D[j] / mu[k];
                mbar -= Hb[i][j] * D[i] * D[j] / (mu[k] * mu[k]);
              }
          }
        /* μ = c·I + b, c = N/s */
        b[k] += (float) (c * mbar);
        sbar -= mbar * c * in[k] / s;
        /* D_i = c·d_i */
        for (i = 0; i < 3; i++)
          sbar -= abar[i] * D[i] / s;
        if (x > 0 && x + 1 < W)
          {
            b[k + 1] += (float) (c * abar[0] / (2 * r->dx));
            b[k - 1] -= (float) (c * abar[0] / (2 * r->dx));
          }
        if (y > 0 && y + 1 < H)
          {
            b[k + W] += (float) (c * abar[1] / (2 * r->dy));
            b[k - W] -= (float) (c * abar[1] / (2 * r->dy));
          }
        b[k + np] += (float) (c * abar[2] / dz);
        b[(gssize) k - (gssize) np] -= (float) (c * abar[2] / dz);
      }
  for (k = 0; k < np; k++)
    b[k] += (float) sbar;
}

double
_airy_loss_crlb_eval (const AiryLoss *loss, const AiryStack *r, float *bar)
{
  gsize np = (gsize) r->height * r->width;
  g_autofree double *d = g_new (double, 3 * np), *mu = g_new (double, np);
  double total = 0;
  guint p, n = 0, i, j, a, n_axes = 0;
  gsize k;

  for (p = 0; p < r->depth; p++)
    n += plane_used (loss, r, p);
  for (i = 0; i < 3; i++)
    n_axes += (loss->axes >> i) & 1;
  if (bar)
    memset (bar, 0, r->depth * np * sizeof (float));
  for (p = 0; p < r->depth; p++)
    {
      double F[3][3] = { { 0 } }, C[3][3], Hb[3][3], g[3], s, ridge, trace;

      if (!plane_used (loss, r, p))
        continue;
      s = plane_derivatives (loss, r, p, d, mu);
      for (i = 0; i < 3; i++)
        for (j = i; j < 3; j++)
          {
            for (k = 0; k < np; k++)
              F[i][j] += d[i * np + k] * d[j * np + k] / mu[k];
            F[j][i] = F[i][j];
          }
      /* a ridge of RIDGE·tr(F)/3: a plane the emitter's position does
       * not change in some direction (z at the focus of a symmetric PSF)
       * has a huge bound there, not an infinite one */
      ridge = RIDGE * (F[0][0] + F[1][1] + F[2][2]) / 3.0;
      for (i = 0; i < 3; i++)
        F[i][i] += ridge;
      if (!invert3 (F, C))
        return NAN;
      for (i = 0; i < 3; i++)
        {
          gboolean on = (loss->axes >> i) & 1;

          total += on ? sqrt (C[i][i]) / ((double) n_axes * n) : 0.0;
          g[i] = on ? 1.0 / (2.0 * sqrt (C[i][i]) * n_axes * n) : 0.0;
        }
      if (bar == NULL)
        continue;
      /* ∂L/∂F = −C·diag(g)·C */
      for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++)
          {
            Hb[i][j] = 0;
            for (a = 0; a < 3; a++)
              Hb[i][j] -= C[i][a] * g[a] * C[a][j];
          }
      /* and through the ridge's trace */
      trace = Hb[0][0] + Hb[1][1] + Hb[2][2];
      for (i = 0; i < 3; i++)
        Hb[i][i] += RIDGE / 3.0 * trace;
      plane_backward (loss, r, p, d, mu, s, Hb, bar);
    }
  return total;
}

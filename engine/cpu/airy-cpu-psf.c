#define G_LOG_DOMAIN "airy-cpu"

#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-cpu-private.h"
#include "airy-elements-private.h"
#include "airy-fft-private.h"

/* The CPU's FUSED_PSF (airy-ops-private.h). Why this is faster than
 * generate → FFT → |u|²:
 *  - u(x, y; z) = F(x, y) · exp(i·z·G): the source amplitude, apodisation,
 *    tilt, every mask and the centring modulation live in F, made once by
 *    the engine's fusion pass; each plane only advances exp(i z G) (a
 *    complex multiply when the planes are evenly spaced, or two short phase
 *    vectors when G is separable) on the pupil's pixels;
 *  - the centring modulation in F makes the plain DFT the centred one up
 *    to a phase per output pixel that |·|² removes: no shifts;
 *  - only the pupil's rows get the first 1-D pass; the second pass works on
 *    blocks of 32 columns that stay in cache, and |u|² is taken there. */

#define BLOCK 32

struct _AiryPsfShared
{
  guint   h, w, n_lambda;
  guint   n_components;    /* entries per wavelength (1: scalar) */
  guint   y0, nb;          /* band of rows holding the pupil */
  guint  *x0, *x1;         /* span of each band row, [x0, x1) */
  guint  *off;             /* compact index of each band row (nb + 1) */
  guint   npix;
  fftwf_complex **F;       /* per wavelength, compact */
  double **G;              /* per wavelength, compact: defocus phase per µm */
  guint   *same_phase;     /* per entry: the first entry with the same G (the
                            * components of a vectorial field share their
                            * wavelength's defocus: its phase turns once) */
  float  *scale;           /* per wavelength: w_l·|c_l|² */
  double  z0;              /* the objective's extra z */
  gboolean separable;      /* paraxial: exp(i z G) = exp(i z a x²)·exp(i z a y²) */
  double **ax;             /* per wavelength: a·x² per column, a·y² per band row */
  double **ay;
  gboolean uniform;        /* z planes evenly spaced */
  double  zstart, dz;
};

struct _AiryPsfWorker
{
  AiryPsfShared  *shared;
  double complex **rot;    /* exp(i z G) per wavelength, compact */
  double complex **step;   /* exp(i dz G) */
  fftwf_complex   *rx;     /* separable phase: per column */
  fftwf_complex   *ry;     /* per band row */
  int             last_b;
  guint           since_sync;
  fftwf_complex  *band;    /* nb × w: the pupil rows after the first pass */
  fftwf_complex  *col_in;  /* BLOCK × h: columns, zero outside the band */
  fftwf_complex  *col_out; /* BLOCK × h */
  guint           ld;      /* distance between columns: h padded off 4 KiB multiples */
  guint           bw;      /* distance between band rows: w rounded up to 4 (32-byte aligned rows) */
  fftwf_plan      row_plan;
  fftwf_plan      col_plan;
  fftwf_plan      col_plan_rest;
};

void
_airy_psf_shared_free (AiryPsfShared *s)
{
  guint l;

  if (s == NULL)
    return;
  for (l = 0; l < s->n_lambda; l++)
    {
      if (s->F) fftwf_free (s->F[l]);
      if (s->G) g_free (s->G[l]);
    }
  for (l = 0; s->ax && l < s->n_lambda; l++)
    {
      g_free (s->ax[l]);
      g_free (s->ay[l]);
    }
  g_free (s->ax);
  g_free (s->ay);
  g_free (s->F);
  g_free (s->G);
  g_free (s->scale);
  g_free (s->same_phase);
  g_free (s->x0);
  g_free (s->x1);
  g_free (s->off);
  g_free (s);
}

AiryPsfShared *
_airy_psf_shared_new (const AiryOp *op,
                      const double *z,
                      guint         n_planes)
{
  const AiryFusedPsf *psf = op->psf;
  AiryPsfShared *s = g_new0 (AiryPsfShared, 1);
  gsize nband;
  guint l, x, b;

  s->h = op->height;
  s->w = op->width;
  s->n_lambda = op->n_lambda;
  s->n_components = MAX (psf->n_components, 1);
  s->z0 = psf->z0;
  s->y0 = psf->y0;
  s->nb = psf->rows;
  nband = (gsize) s->nb * s->w;

  /* each band row's span of non-zero pixels over all wavelengths */
  s->x0 = g_new (guint, s->nb);
  s->x1 = g_new (guint, s->nb);
  s->off = g_new (guint, s->nb + 1);
  for (b = 0; b < s->nb; b++)
    {
      guint lo = s->w, hi = 0;

      for (l = 0; l < s->n_lambda; l++)
        for (x = 0; x < s->w; x++)
          if (psf->F[l * nband + (gsize) b * s->w + x] != 0.0f)
            {
              lo = MIN (lo, x);
              hi = MAX (hi, x + 1);
            }
      if (lo >= hi)
        lo = hi = 0;
      s->x0[b] = lo;
      s->x1[b] = hi;
      s->off[b] = s->npix;
      s->npix += hi - lo;
    }
  s->off[s->nb] = s->npix;

  /* compact F and G per wavelength */
  s->F = g_new0 (fftwf_complex *, s->n_lambda);
  s->G = g_new0 (double *, s->n_lambda);
  s->scale = g_memdup2 (psf->scale, s->n_lambda * sizeof (float));
  for (l = 0; l < s->n_lambda; l++)
    {
      s->F[l] = fftwf_alloc_complex (MAX (s->npix, 1));
      s->G[l] = g_new (double, MAX (s->npix, 1));
      for (b = 0; b < s->nb; b++)
        {
          gsize from = l * nband + (gsize) b * s->w + s->x0[b];

          memcpy (s->F[l] + s->off[b], psf->F + from, (s->x1[b] - s->x0[b]) * sizeof (fftwf_complex));
          memcpy (s->G[l] + s->off[b], psf->G + from, (s->x1[b] - s->x0[b]) * sizeof (double));
        }
    }

  /* a separable phase (paraxial: G = a·x² + a·y²) turns with two vectors */
  s->separable = psf->gx != NULL && psf->gy != NULL;
  if (s->separable)
    {
      s->ax = g_new0 (double *, s->n_lambda);
      s->ay = g_new0 (double *, s->n_lambda);
      for (l = 0; l < s->n_lambda; l++)
        {
          s->ax[l] = g_memdup2 (psf->gx + (gsize) l * s->w, s->w * sizeof (double));
          s->ay[l] = g_memdup2 (psf->gy + (gsize) l * s->nb, s->nb * sizeof (double));
        }
    }

  /* entries whose phase is the same as an earlier one's, bit for bit */
  s->same_phase = g_new (guint, MAX (s->n_lambda, 1));
  for (l = 0; l < s->n_lambda; l++)
    {
      guint m;

      s->same_phase[l] = l;
      for (m = 0; m < l && s->same_phase[l] == l; m++)
        if (s->same_phase[m] == m
            && memcmp (s->G[m], s->G[l], s->npix * sizeof (double)) == 0
            && (!s->separable
                || (memcmp (s->ax[m], s->ax[l], s->w * sizeof (double)) == 0
                    && memcmp (s->ay[m], s->ay[l], s->nb * sizeof (double)) == 0)))
          s->same_phase[l] = m;
    }

  /* evenly spaced planes let each plane advance the phase by one multiply */
  s->zstart = z[0];
  s->dz = n_planes > 1 ? (z[n_planes - 1] - z[0]) / (n_planes - 1) : 0.0;
  s->uniform = n_planes > 1;
  for (b = 0; b < n_planes && s->uniform; b++)
    if (fabs (z[b] - (s->zstart + b * s->dz)) > 1e-9 * MAX (1.0, fabs (z[b])))
      s->uniform = FALSE;
  return s;
}

AiryPsfWorker *
_airy_psf_worker_new (AiryPsfShared *s)
{
  AiryPsfWorker *w = g_new0 (AiryPsfWorker, 1);
  guint l, rest = s->w % BLOCK;

  w->shared = s;
  w->last_b = -2;
  w->rot = g_new0 (double complex *, s->n_lambda);
  w->step = g_new0 (double complex *, s->n_lambda);
  w->rx = fftwf_alloc_complex (s->w);
  w->ry = fftwf_alloc_complex (MAX (s->nb, 1));
  for (l = 0; l < s->n_lambda && !s->separable; l++)
    {
      guint k;

      if (s->same_phase[l] != l)
        continue;   /* turns with the entry it shares its phase with */
      w->rot[l] = g_new (double complex, MAX (s->npix, 1));
      w->step[l] = g_new (double complex, MAX (s->npix, 1));
      for (k = 0; k < s->npix; k++)
        w->step[l][k] = cexp (I * s->dz * s->G[l][k]);
    }
  /* columns h apart would alias in the caches whenever h·8 is a multiple
   * of 4 KiB (512, 1536, …): pad them */
  w->ld = ((s->h + 3) & ~3u) + 8;
  w->bw = (s->w + 3) & ~3u;
  w->band = fftwf_alloc_complex ((gsize) s->nb * w->bw);
  w->col_in = fftwf_alloc_complex ((gsize) BLOCK * w->ld);
  w->col_out = fftwf_alloc_complex ((gsize) BLOCK * w->ld);
  memset (w->col_in, 0, sizeof (fftwf_complex) * BLOCK * w->ld);
  /* rows and columns both as contiguous transforms: BLOCK columns are
   * transposed into col_in, transformed out of place (the zeros outside the
   * band stay) and squared back while in cache */
  w->row_plan = _airy_fft_plan_many (s->w, 1, 1, s->w, TRUE, AIRY_FFT_FORWARD, 1);
  w->col_plan = _airy_fft_plan_many (s->h, BLOCK, 1, w->ld, FALSE, AIRY_FFT_FORWARD, 1);
  if (rest)
    w->col_plan_rest = _airy_fft_plan_many (s->h, rest, 1, w->ld, FALSE, AIRY_FFT_FORWARD, 1);
  return w;
}

void
_airy_psf_worker_free (AiryPsfWorker *w)
{
  guint l;

  if (w == NULL)
    return;
  for (l = 0; l < w->shared->n_lambda; l++)
    {
      g_free (w->rot[l]);
      g_free (w->step[l]);
    }
  g_free (w->rot);
  g_free (w->step);
  fftwf_free (w->rx);
  fftwf_free (w->ry);
  fftwf_free (w->band);
  fftwf_free (w->col_in);
  fftwf_free (w->col_out);
  g_free (w);
}

/* exp(i z G) for plane b: a multiply from the previous plane when the planes
 * are evenly spaced, recomputed every 16 planes to keep the error at the
 * double-precision level. */
static void
advance_phase (AiryPsfWorker *w, guint l, guint b, double z)
{
  AiryPsfShared *s = w->shared;
  double complex *rot = w->rot[l], *step = w->step[l];
  guint k;

  if (s->uniform && w->last_b == (int) b - 1 && w->since_sync < 16)
    {
      for (k = 0; k < s->npix; k++)
        rot[k] *= step[k];
      return;
    }
  for (k = 0; k < s->npix; k++)
    rot[k] = cexp (I * z * s->G[l][k]);
}

/* The intensity of plane b into outs[0] (every entry summed), or with
 * split into outs[e / C] (one plane per wavelength, its components summed). */
static void
worker_plane (AiryPsfWorker *w,
              guint          b,
              double         z,
              float *const  *outs,
              gboolean       split)
{
  AiryPsfShared *s = w->shared;
  guint l, r, y, x0, bb;
  gboolean synced = !(s->uniform && w->last_b == (int) b - 1 && w->since_sync < 16);

  for (l = 0; l < s->n_lambda; l++)
    {
      float scale = s->scale[l];
      float *out = outs[split ? l / s->n_components : 0];
      gboolean first = split ? l % s->n_components == 0 : l == 0;

      if (s->separable && (l == 0 || s->same_phase[l] != s->same_phase[l - 1]))
        {
          /* two short phase vectors per plane instead of a phase per pixel
           * (an entry that shares the last one's phase finds them set) */
          double zz = z + s->z0;
          guint x;

          for (x = 0; x < s->w; x++)
            w->rx[x] = _airy_cis (zz * s->ax[l][x]);
          for (r = 0; r < s->nb; r++)
            w->ry[r] = _airy_cis (zz * s->ay[l][r]);
        }
      else if (!s->separable && s->same_phase[l] == l)
        advance_phase (w, l, b, z + s->z0);
      /* first pass: generate each pupil row and transform it in cache */
      for (r = 0; r < s->nb; r++)
        {
          fftwf_complex *row = w->band + (gsize) r * w->bw;
          const fftwf_complex *F = s->F[l] + s->off[r];
          guint x, n = s->x1[r] - s->x0[r];

          memset (row, 0, s->x0[r] * sizeof (fftwf_complex));
          if (s->separable)
            {
              const fftwf_complex *rx = w->rx + s->x0[r];
              fftwf_complex ry = w->ry[r];
              fftwf_complex *dst = row + s->x0[r];

              for (x = 0; x < n; x++)
                dst[x] = F[x] * ry * rx[x];
            }
          else
            {
              const double complex *rot = w->rot[s->same_phase[l]] + s->off[r];

              for (x = 0; x < n; x++)
                {
                  double complex v = F[x] * rot[x];
                  row[s->x0[r] + x] = (float) creal (v) + I * (float) cimag (v);
                }
            }
          memset (row + s->x1[r], 0, (s->w - s->x1[r]) * sizeof (fftwf_complex));
          if (n > 0)
            fftwf_execute_dft (w->row_plan, row, row);
        }
      /* second pass: blocks of columns, |u|² while they are in cache */
      for (x0 = 0; x0 < s->w; x0 += BLOCK)
        {
          guint nbk = MIN (BLOCK, s->w - x0);

          /* tiled transpose: 8 rows at a time, each column's 8 values one line */
          for (r = 0; r < s->nb; r += 8)
            {
              guint r1 = MIN (r + 8, s->nb), rr;

              for (bb = 0; bb < nbk; bb++)
                {
                  fftwf_complex *dst = w->col_in + (gsize) bb * w->ld + s->y0;
                  for (rr = r; rr < r1; rr++)
                    dst[rr] = w->band[(gsize) rr * w->bw + x0 + bb];
                }
            }
          fftwf_execute_dft (nbk == BLOCK ? w->col_plan : w->col_plan_rest, w->col_in, w->col_out);
          for (y = 0; y < s->h; y++)
            {
              float *dst = out + (gsize) y * s->w + x0;
              const float *v = (const float *) (w->col_out + y);

              if (first)
                for (bb = 0; bb < nbk; bb++)
                  {
                    float re = v[2 * (gsize) bb * w->ld], im = v[2 * (gsize) bb * w->ld + 1];
                    dst[bb] = airy_intensity_term (scale, re, im);
                  }
              else
                for (bb = 0; bb < nbk; bb++)
                  {
                    float re = v[2 * (gsize) bb * w->ld], im = v[2 * (gsize) bb * w->ld + 1];
                    dst[bb] += airy_intensity_term (scale, re, im);
                  }
            }
        }
    }
  w->since_sync = synced ? 1 : w->since_sync + 1;
  w->last_b = (int) b;
}

void
_airy_psf_worker_plane (AiryPsfWorker *w,
                        guint          b,
                        double         z,
                        float         *out)
{
  worker_plane (w, b, z, &out, FALSE);
}

guint
_airy_psf_shared_n_wavelengths (const AiryPsfShared *s)
{
  return s->n_lambda / s->n_components;
}

void
_airy_psf_worker_plane_split (AiryPsfWorker *w,
                              guint          b,
                              double         z,
                              float *const  *outs)
{
  worker_plane (w, b, z, outs, TRUE);
}

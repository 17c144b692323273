#define G_LOG_DOMAIN "airy-cpu"

#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-cpu-fast-private.h"
#include "airy-elements-private.h"
#include "airy-fft-private.h"

/* Why this is faster than generate → FFT → |u|²:
 *  - u(x, y; z) = F(x, y) · exp(i·z·G(r²)): the source amplitude, apodisation,
 *    tilt, every mask and the centring modulation live in F, computed once;
 *    each plane only advances exp(i z G) (a complex multiply when the planes
 *    are evenly spaced) on the pupil's pixels;
 *  - the centred transform fftshift(DFT(ifftshift(u))) equals, up to a phase
 *    per output pixel that |·|² removes, DFT(u · e^{2πi(x·cx/W + y·cy/H)}):
 *    no shifts;
 *  - only the pupil's rows get the first 1-D pass; the second pass works on
 *    blocks of 16 columns that stay in cache, and |u|² is taken there. */

#define BLOCK 32

struct _AiryPsfShared
{
  guint   h, w, n_lambda;
  guint   y0, nb;          /* band of rows holding the pupil */
  guint  *x0, *x1;         /* span of each band row, [x0, x1) */
  guint  *off;             /* compact index of each band row (nb + 1) */
  guint   npix;
  fftwf_complex **F;       /* per wavelength, compact */
  double **G;              /* per wavelength, compact: defocus phase per µm */
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

gboolean
_airy_psf_fast_supported (AiryPlan *plan)
{
  GPtrArray *chain = plan->chain;
  AiryElement *last;
  guint i;

  if (g_getenv ("AIRY_NO_FAST_PATH") != NULL || chain->len < 2)
    return FALSE;
  if (!g_str_equal (airy_element_get_type_name (g_ptr_array_index (chain, 0)), "objective-point-source"))
    return FALSE;
  last = g_ptr_array_index (chain, chain->len - 1);
  if (!g_str_equal (airy_element_get_type_name (last), "ff-lens")
      || airy_element_get_boolean (last, "inverse"))
    return FALSE;
  for (i = 1; i + 1 < chain->len; i++)
    if (!AIRY_ELEMENT_GET_CLASS (g_ptr_array_index (chain, i))->elementwise)
      return FALSE;
  return TRUE;
}

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
  g_free (s->x0);
  g_free (s->x1);
  g_free (s->off);
  g_free (s);
}

static gboolean
apply_element (AiryElement *e, const AiryContext *ctx, AiryField *field, const AiryPlane *plane,
               GError **error)
{
  AiryElementClass *klass = AIRY_ELEMENT_GET_CLASS (e);
  gpointer state = NULL;
  AiryContext copy = *ctx;
  gboolean ok;

  copy.path = "fast-path";
  if (klass->prepare && (state = klass->prepare (e, &copy, error)) == NULL)
    return FALSE;
  ok = klass->apply (e, state, field, plane, error);
  if (state && klass->free_state)
    klass->free_state (state);
  return ok;
}

AiryPsfShared *
_airy_psf_shared_new (AiryPlan *plan,
                      GError  **error)
{
  AiryPsfShared *s = g_new0 (AiryPsfShared, 1);
  AiryElement *objective = g_ptr_array_index (plan->chain, 0);
  AiryElement *lens = g_ptr_array_index (plan->chain, plan->chain->len - 1);
  double f = airy_element_get_double (objective, "f");
  double n = airy_element_get_double (objective, "n");
  int model = airy_element_get_enum (objective, "defocus-model");
  double lens_f = airy_element_get_double (lens, "f");
  double lens_n = airy_element_get_double (lens, "n");
  double lens_na = airy_element_get_double (lens, "na");
  g_autoptr(AiryField) field = NULL;
  AiryPlane plane = { 0, 0.0, 1 };
  gsize np;
  guint l, y, x, i, b;
  int ylo = -1, yhi = -1;

  s->h = plan->in_height;
  s->w = plan->in_width;
  s->n_lambda = plan->spectrum->n;
  s->z0 = airy_element_get_double (objective, "z");
  np = (gsize) s->h * s->w;

  /* the pupil field at z = 0 through every mask: F without the modulation */
  field = airy_field_new (plan->spectrum, s->h, s->w, 1.0);
  for (l = 0; l < s->n_lambda; l++)
    {
      field->dy[l] = plan->in_dy[l];
      field->dx[l] = plan->in_dx[l];
    }
  plane.z = -s->z0;
  for (i = 0; i + 1 < plan->chain->len; i++)
    if (!apply_element (g_ptr_array_index (plan->chain, i), &plan->contexts[i], field, &plane, error))
      {
        _airy_psf_shared_free (s);
        return NULL;
      }
  if (lens_na > 0.0)
    {
      double r = lens_f * lens_na / lens_n;
      for (l = 0; l < s->n_lambda; l++)
        for (y = 0; y < s->h; y++)
          for (x = 0; x < s->w; x++)
            {
              double xx = airy_grid_coord (x, s->w, field->dx[l]), yy = airy_grid_coord (y, s->h, field->dy[l]);
              if (!airy_inside_circle (xx * xx + yy * yy, r))
                field->data[l * np + (gsize) y * s->w + x] = 0.0f;
            }
    }

  /* the band of non-zero rows and each row's span, over all wavelengths */
  for (y = 0; y < s->h; y++)
    for (l = 0; l < s->n_lambda; l++)
      for (x = 0; x < s->w; x++)
        if (field->data[l * np + (gsize) y * s->w + x] != 0.0f)
          {
            if (ylo < 0)
              ylo = (int) y;
            yhi = (int) y;
            l = s->n_lambda;
            break;
          }
  if (ylo < 0)
    ylo = yhi = (int) s->h / 2;   /* a fully blocked pupil: one zero row */
  s->y0 = (guint) ylo;
  s->nb = (guint) (yhi - ylo + 1);
  s->x0 = g_new (guint, s->nb);
  s->x1 = g_new (guint, s->nb);
  s->off = g_new (guint, s->nb + 1);
  for (b = 0; b < s->nb; b++)
    {
      guint lo = s->w, hi = 0;

      y = s->y0 + b;
      for (l = 0; l < s->n_lambda; l++)
        for (x = 0; x < s->w; x++)
          if (field->data[l * np + (gsize) y * s->w + x] != 0.0f)
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

  /* compact F (with the centring modulation) and G per wavelength */
  s->F = g_new0 (fftwf_complex *, s->n_lambda);
  s->G = g_new0 (double *, s->n_lambda);
  s->scale = g_new (float, s->n_lambda);
  for (l = 0; l < s->n_lambda; l++)
    {
      double lambda = plan->spectrum->wavelengths[l];
      double c = field->dx[l] * field->dy[l] * lens_n / (lambda * lens_f);

      s->F[l] = fftwf_alloc_complex (MAX (s->npix, 1));
      s->G[l] = g_new (double, MAX (s->npix, 1));
      s->scale[l] = (float) (plan->spectrum->weights[l] * c * c);
      for (b = 0; b < s->nb; b++)
        {
          y = s->y0 + b;
          for (x = s->x0[b]; x < s->x1[b]; x++)
            {
              guint k = s->off[b] + x - s->x0[b];
              double xx = airy_grid_coord (x, s->w, field->dx[l]);
              double yy = airy_grid_coord (y, s->h, field->dy[l]);
              double r2 = xx * xx + yy * yy;
              double mod = 2.0 * AIRY_PI * ((double) y * (s->h / 2) / s->h + (double) x * (s->w / 2) / s->w);

              s->F[l][k] = field->data[l * np + (gsize) y * s->w + x] * _airy_cis (mod);
              s->G[l][k] = model == AIRY_DEFOCUS_NONPARAXIAL
                           ? airy_defocus_nonparaxial (r2, 1.0, n, lambda, f)
                           : airy_defocus_paraxial (r2, 1.0, n, lambda, f);
            }
        }
    }

  /* the paraxial defocus −π z n r²/(λ f²) splits into x and y factors */
  s->separable = model != AIRY_DEFOCUS_NONPARAXIAL;
  if (s->separable)
    {
      s->ax = g_new0 (double *, s->n_lambda);
      s->ay = g_new0 (double *, s->n_lambda);
      for (l = 0; l < s->n_lambda; l++)
        {
          double lambda = plan->spectrum->wavelengths[l];

          s->ax[l] = g_new (double, s->w);
          s->ay[l] = g_new (double, s->nb);
          for (x = 0; x < s->w; x++)
            {
              double xx = airy_grid_coord (x, s->w, field->dx[l]);
              s->ax[l][x] = airy_defocus_paraxial (xx * xx, 1.0, n, lambda, f);
            }
          for (b = 0; b < s->nb; b++)
            {
              double yy = airy_grid_coord (s->y0 + b, s->h, field->dy[l]);
              s->ay[l][b] = airy_defocus_paraxial (yy * yy, 1.0, n, lambda, f);
            }
        }
    }

  /* evenly spaced planes let each plane advance the phase by one multiply */
  s->zstart = plan->z[0];
  s->dz = plan->n_planes > 1 ? (plan->z[plan->n_planes - 1] - plan->z[0]) / (plan->n_planes - 1) : 0.0;
  s->uniform = plan->n_planes > 1;
  for (b = 0; b < plan->n_planes && s->uniform; b++)
    if (fabs (plan->z[b] - (s->zstart + b * s->dz)) > 1e-9 * MAX (1.0, fabs (plan->z[b])))
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

void
_airy_psf_worker_plane (AiryPsfWorker *w,
                        guint          b,
                        double         z,
                        float         *out)
{
  AiryPsfShared *s = w->shared;
  guint l, r, y, x0, bb;
  gboolean synced = !(s->uniform && w->last_b == (int) b - 1 && w->since_sync < 16);

  for (l = 0; l < s->n_lambda; l++)
    {
      float scale = s->scale[l];

      if (s->separable)
        {
          /* two short phase vectors per plane instead of a phase per pixel */
          double zz = z + s->z0;
          guint x;

          for (x = 0; x < s->w; x++)
            w->rx[x] = _airy_cis (zz * s->ax[l][x]);
          for (r = 0; r < s->nb; r++)
            w->ry[r] = _airy_cis (zz * s->ay[l][r]);
        }
      else
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
              const double complex *rot = w->rot[l] + s->off[r];

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

              if (l == 0)
                for (bb = 0; bb < nbk; bb++)
                  {
                    float re = v[2 * (gsize) bb * w->ld], im = v[2 * (gsize) bb * w->ld + 1];
                    dst[bb] = scale * (re * re + im * im);
                  }
              else
                for (bb = 0; bb < nbk; bb++)
                  {
                    float re = v[2 * (gsize) bb * w->ld], im = v[2 * (gsize) bb * w->ld + 1];
                    dst[bb] += scale * (re * re + im * im);
                  }
            }
        }
    }
  w->since_sync = synced ? 1 : w->since_sync + 1;
  w->last_b = (int) b;
}

/* Blocks of the convolution's second pass: 16 columns × ph × 8 bytes =
 * 393 KB each for the transform, the accumulator and the sample, so the
 * three stay in L2 while every plane of a batch passes through. */
#define CONV_BLOCK 16

struct _AiryConvWorker
{
  guint           h, w, ph, pw, nh, ld, bs, batch;
  float          *rowbuf;   /* pw, zero beyond w */
  fftwf_complex **band;     /* batch × (h × nh): rows after the first pass */
  fftwf_complex  *col_in;   /* CONV_BLOCK × ld, zero from row h on */
  fftwf_complex  *col_out;
  fftwf_plan      row_plan;
  fftwf_plan      col_plan;
  fftwf_plan      col_plan_rest;
};

AiryConvWorker *
_airy_conv_worker_new (guint h, guint w, guint ph, guint pw, guint batch)
{
  AiryConvWorker *c = g_new0 (AiryConvWorker, 1);
  guint rest, k;

  c->h = h;
  c->w = w;
  c->ph = ph;
  c->pw = pw;
  c->nh = pw / 2 + 1;
  c->ld = ((ph + 3) & ~3u) + 8;   /* aligned, and off 4 KiB multiples as above */
  c->bs = (c->nh + 3) & ~3u;      /* band rows 32-byte aligned for the row plan */
  c->batch = MAX (batch, 1);
  rest = c->nh % CONV_BLOCK;
  c->rowbuf = fftwf_alloc_real (pw);
  memset (c->rowbuf, 0, pw * sizeof (float));
  c->band = g_new0 (fftwf_complex *, c->batch);
  for (k = 0; k < c->batch; k++)
    c->band[k] = fftwf_alloc_complex ((gsize) h * c->bs);
  c->col_in = fftwf_alloc_complex ((gsize) CONV_BLOCK * c->ld);
  c->col_out = fftwf_alloc_complex ((gsize) CONV_BLOCK * c->ld);
  memset (c->col_in, 0, sizeof (fftwf_complex) * CONV_BLOCK * c->ld);
  c->row_plan = _airy_fft_plan_r2c_1d (pw, 1);
  c->col_plan = _airy_fft_plan_many (ph, CONV_BLOCK, 1, c->ld, FALSE, AIRY_FFT_FORWARD, 1);
  if (rest)
    c->col_plan_rest = _airy_fft_plan_many (ph, rest, 1, c->ld, FALSE, AIRY_FFT_FORWARD, 1);
  return c;
}

void
_airy_conv_worker_free (AiryConvWorker *c)
{
  guint k;

  if (c == NULL)
    return;
  for (k = 0; k < c->batch; k++)
    fftwf_free (c->band[k]);
  g_free (c->band);
  fftwf_free (c->rowbuf);
  fftwf_free (c->col_in);
  fftwf_free (c->col_out);
  g_free (c);
}

guint
_airy_conv_worker_batch (AiryConvWorker *c)
{
  return c->batch;
}

void
_airy_conv_rows (AiryConvWorker *c,
                 guint           slot,
                 const float    *in)
{
  fftwf_complex *band = c->band[slot];
  guint y, x;

  /* real rows zero padded to pw; an all-zero row transforms to zeros */
  for (y = 0; y < c->h; y++)
    {
      const float *src = in + (gsize) y * c->w;
      fftwf_complex *dst = band + (gsize) y * c->bs;
      gboolean zero = TRUE;

      for (x = 0; x < c->w && zero; x++)
        zero = src[x] == 0.0f;
      if (zero)
        {
          memset (dst, 0, c->nh * sizeof (fftwf_complex));
          continue;
        }
      memcpy (c->rowbuf, src, c->w * sizeof (float));
      fftwf_execute_dft_r2c (c->row_plan, c->rowbuf, dst);
    }
}

/* The second pass of one block of columns of band `slot` into c->col_out
 * (column j of the block at col_out + j·ld). */
static void
conv_block (AiryConvWorker *c, guint slot, guint x0, guint nbk)
{
  const fftwf_complex *band = c->band[slot];
  guint y, yy, bb, y1;

  /* tiled transpose: 8 rows at a time, each column's 8 values one line */
  for (y = 0; y < c->h; y += 8)
    {
      y1 = MIN (y + 8, c->h);
      for (bb = 0; bb < nbk; bb++)
        {
          fftwf_complex *dst = c->col_in + (gsize) bb * c->ld;
          for (yy = y; yy < y1; yy++)
            dst[yy] = band[(gsize) yy * c->bs + x0 + bb];
        }
    }
  fftwf_execute_dft (nbk == CONV_BLOCK ? c->col_plan : c->col_plan_rest, c->col_in, c->col_out);
}

void
_airy_conv_columns (AiryConvWorker             *psf,
                    AiryConvWorker             *vol,
                    guint                       n,
                    fftwf_complex              *out_t,
                    fftwf_complex              *acc_t,
                    const fftwf_complex *const *mul_t,
                    fftwf_complex *const       *vol_out_t)
{
  guint x0, bb, k, slot;

  for (x0 = 0; x0 < psf->nh; x0 += CONV_BLOCK)
    {
      guint nbk = MIN (CONV_BLOCK, psf->nh - x0);

      for (slot = 0; slot < n; slot++)
        {
          conv_block (psf, slot, x0, nbk);
          if (vol != NULL)
            conv_block (vol, slot, x0, nbk);
          for (bb = 0; bb < nbk; bb++)
            {
              const fftwf_complex *p = psf->col_out + (gsize) bb * psf->ld;
              gsize row = (gsize) (x0 + bb) * psf->ph;

              if (acc_t == NULL)
                memcpy (out_t + row, p, psf->ph * sizeof (fftwf_complex));
              else
                {
                  fftwf_complex *a = acc_t + row;
                  const fftwf_complex *m = vol ? vol->col_out + (gsize) bb * vol->ld : mul_t[slot] + row;

                  for (k = 0; k < psf->ph; k++)
                    a[k] += p[k] * m[k];
                  if (vol != NULL && vol_out_t != NULL && vol_out_t[slot] != NULL)
                    memcpy (vol_out_t[slot] + row, m, psf->ph * sizeof (fftwf_complex));
                }
            }
        }
    }
}

/* The shared pupil data in full-grid form, for backends that generate the
 * field on their own device (CUDA): F (with the centring modulation) and
 * the defocus phase per µm G, zero outside the pupil's rows and spans. */
void
_airy_psf_shared_full (AiryPsfShared *s,
                       guint          l,
                       fftwf_complex *F,
                       double        *G)
{
  guint b, x;

  memset (F, 0, (gsize) s->h * s->w * sizeof (fftwf_complex));
  memset (G, 0, (gsize) s->h * s->w * sizeof (double));
  for (b = 0; b < s->nb; b++)
    for (x = s->x0[b]; x < s->x1[b]; x++)
      {
        gsize i = (gsize) (s->y0 + b) * s->w + x;
        guint k = s->off[b] + x - s->x0[b];

        F[i] = s->F[l][k];
        G[i] = s->G[l][k];
      }
}

float
_airy_psf_shared_scale (AiryPsfShared *s,
                        guint          l)
{
  return s->scale[l];
}

void
_airy_psf_shared_band (AiryPsfShared *s,
                       guint         *y0,
                       guint         *rows)
{
  *y0 = s->y0;
  *rows = s->nb;
}

double
_airy_psf_shared_z0 (AiryPsfShared *s)
{
  return s->z0;
}

#define G_LOG_DOMAIN "airy-cpu"

#include "config.h"

#include <string.h>

#include "airy-cpu-private.h"
#include "airy-fft-private.h"

/* The microscope's convolution on the CPU (the CONVOLVE op): intensity and
 * sample transformed real-to-complex on the padded grid in two passes, the
 * spectrum products accumulated a batch of planes at a time while they are
 * in cache (see airy-cpu-private.h). */

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

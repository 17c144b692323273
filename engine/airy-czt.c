#define G_LOG_DOMAIN "airy-czt"

#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-czt-private.h"
#include "airy-fft-private.h"

/* Bluestein: J·K = (J² + K² − (K − J)²)/2, so with d = k − j and
 * K − J = d − (⌊m/2⌋ − ⌊n/2⌋) the sum is a linear convolution,
 *
 *   out[k] = e^{−iσK²/2} Σ_j a[j] h[k − j],
 *   a[j] = in[j] e^{−i(σJ²/2 + τJ)},   h[d] = e^{iσ(K − J)²/2},
 *
 * done as a circular one of length L ≥ n + m − 1 (FFTW's fast sizes). */
typedef struct
{
  guint          n, m, L;
  fftwf_complex *pre;     /* n: a[j] / in[j] */
  fftwf_complex *post;    /* m: e^{−iσK²/2} / L */
  fftwf_complex *kernel;  /* L: DFT(h) */
  fftwf_complex *buf;     /* L */
  fftwf_plan     forward, backward;
} Chirp;

static fftwf_complex
cis (double phase)
{
  phase = fmod (phase, 2.0 * G_PI);
  return (float) cos (phase) + I * (float) sin (phase);
}

static void
chirp_init (Chirp *c, const AiryCztAxis *axis)
{
  int j0 = (int) (axis->n / 2), k0 = (int) (axis->m / 2), shift = k0 - j0;
  int d;
  guint j, k;

  c->n = axis->n;
  c->m = axis->m;
  c->L = _airy_fft_good_size (axis->n + axis->m - 1);
  c->pre = fftwf_alloc_complex (c->n);
  c->post = fftwf_alloc_complex (c->m);
  c->kernel = fftwf_alloc_complex (c->L);
  c->buf = fftwf_alloc_complex (c->L);
  c->forward = _airy_fft_plan_many (c->L, 1, 1, c->L, TRUE, AIRY_FFT_FORWARD, 1);
  c->backward = _airy_fft_plan_many (c->L, 1, 1, c->L, TRUE, AIRY_FFT_BACKWARD, 1);
  for (j = 0; j < c->n; j++)
    {
      double J = (double) j - j0;
      c->pre[j] = cis (-(axis->sigma * J * J / 2.0 + axis->tau * J));
    }
  for (k = 0; k < c->m; k++)
    {
      double K = (double) k - k0;
      c->post[k] = cis (-axis->sigma * K * K / 2.0) / (float) c->L;
    }
  memset (c->kernel, 0, c->L * sizeof (fftwf_complex));
  for (d = -(int) c->n + 1; d < (int) c->m; d++)
    {
      double e = (double) (d - shift);
      c->kernel[(d + (int) c->L) % (int) c->L] = cis (axis->sigma * e * e / 2.0);
    }
  fftwf_execute_dft (c->forward, c->kernel, c->kernel);
}

static void
chirp_clear (Chirp *c)
{
  fftwf_free (c->pre);
  fftwf_free (c->post);
  fftwf_free (c->kernel);
  fftwf_free (c->buf);
}

/* one line: n values `in_step` apart into m values `out_step` apart */
static void
chirp_line (Chirp *c, const fftwf_complex *in, gsize in_step, fftwf_complex *out, gsize out_step)
{
  guint j, k;

  for (j = 0; j < c->n; j++)
    c->buf[j] = in[j * in_step] * c->pre[j];
  memset (c->buf + c->n, 0, (c->L - c->n) * sizeof (fftwf_complex));
  fftwf_execute_dft (c->forward, c->buf, c->buf);
  for (j = 0; j < c->L; j++)
    c->buf[j] *= c->kernel[j];
  fftwf_execute_dft (c->backward, c->buf, c->buf);
  for (k = 0; k < c->m; k++)
    out[k * out_step] = c->buf[k] * c->post[k];
}

void
_airy_czt_2d (const fftwf_complex *in,
              fftwf_complex       *out,
              const AiryCztAxis   *y,
              const AiryCztAxis   *x)
{
  fftwf_complex *rows = fftwf_alloc_complex ((gsize) y->n * x->m);
  Chirp cx, cy;
  guint r, col;

  chirp_init (&cx, x);
  chirp_init (&cy, y);
  for (r = 0; r < y->n; r++)
    chirp_line (&cx, in + (gsize) r * x->n, 1, rows + (gsize) r * x->m, 1);
  for (col = 0; col < x->m; col++)
    chirp_line (&cy, rows + col, x->m, out + col, x->m);
  chirp_clear (&cx);
  chirp_clear (&cy);
  fftwf_free (rows);
}

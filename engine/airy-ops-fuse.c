#define G_LOG_DOMAIN "airy-ops"

#include "config.h"

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-ops-private.h"

/* The engine pass over a compiled field stage (airy-ops-private.h). It
 * looks at ops only, never at element types, so an element whose compile()
 * emits the ops below takes part whatever its name:
 *
 *  1. a MULTIPLY right after a source that is a factor (SET, OBJECTIVE) is
 *     multiplied into it: the pupil-plane masks cost nothing per plane;
 *  2. neighbouring MULTIPLY ops become one;
 *  3. OBJECTIVE → FFT (centred, forward, same shape) → INTENSITY becomes
 *     FUSED_PSF: u(z) = F·e^{i(z + z0)G} is a pupil field whose phase is
 *     linear in z, one centred transform and |u|². The fused op keeps F on
 *     the band of rows that holds the pupil (the rest is zero, which the
 *     backends' pruned transforms skip), with the centring modulation
 *     e^{2πi(y·⌊H/2⌋/H + x·⌊W/2⌋/W)} folded in (so a plain forward DFT gives
 *     the centred one up to a phase per output pixel), G there in double,
 *     and scale_l = w_l·|c_l|² from the transform's constant. A vectorial
 *     source's components become batch entries beside the wavelengths
 *     (entry l·C + c: F times the component's polarisation factor, the
 *     wavelength's G, scale times the component's weight), on the same
 *     band, so every backend runs them as it runs wavelengths. */

static gboolean
is_source_factor (const AiryOp *op)
{
  return op->kind == AIRY_OP_SET || op->kind == AIRY_OP_OBJECTIVE;
}

static void
multiply_into (AiryOp *into, const AiryOp *by)
{
  gsize n = (gsize) into->n_lambda * into->height * into->width, k;

  for (k = 0; k < n; k++)
    into->factor[k] *= by->factor[k];
}

/* passes 1 and 2 */
static void
fold_multiplies (GPtrArray *ops)
{
  guint i = 0;

  while (i + 1 < ops->len)
    {
      AiryOp *a = g_ptr_array_index (ops, i);
      AiryOp *b = g_ptr_array_index (ops, i + 1);

      if (b->kind == AIRY_OP_MULTIPLY && (is_source_factor (a) || a->kind == AIRY_OP_MULTIPLY)
          && a->height == b->height && a->width == b->width && a->n_lambda == b->n_lambda)
        {
          multiply_into (a, b);
          /* the masks' bases go with their factors */
          if (b->bases && a->bases == NULL)
            a->bases = g_ptr_array_new_with_free_func (_airy_zernike_basis_free);
          while (b->bases && b->bases->len > 0)
            g_ptr_array_add (a->bases, g_ptr_array_steal_index (b->bases, 0));
          g_ptr_array_remove_index (ops, i + 1);
          continue;
        }
      i++;
    }
}

static AiryOp *
fused_psf_new (const AiryOp *src, const AiryOp *fft, const AiryOp *intensity, guint64 hash)
{
  guint h = src->height, w = src->width, L = src->n_lambda, C = MAX (src->n_components, 1), l, c, y, x, r;
  gsize np = (gsize) h * w, nband;
  AiryOp *op = g_new0 (AiryOp, 1);
  AiryFusedPsf *psf = g_new0 (AiryFusedPsf, 1);
  int ylo = -1, yhi = -1;
  g_autofree double complex *mod_y = NULL;
  g_autofree double complex *mod_x = NULL;

  op->ref = 1;
  op->kind = AIRY_OP_FUSED_PSF;
  op->n_lambda = L * C;       /* the batch entries: wavelength × component */
  op->height = h;
  op->width = w;
  op->psf = psf;
  op->bases = src->bases ? g_ptr_array_ref (src->bases) : NULL;
  psf->z0 = src->z;
  psf->hash = hash;
  psf->n_components = C;

  /* the band of rows with a non-zero pixel at any wavelength */
  for (y = 0; y < h && ylo < 0; y++)
    for (l = 0; l < L && ylo < 0; l++)
      for (x = 0; x < w; x++)
        if (src->factor[l * np + (gsize) y * w + x] != 0.0f)
          {
            ylo = (int) y;
            break;
          }
  for (y = h; y-- > 0 && yhi < 0;)
    for (l = 0; l < L && yhi < 0; l++)
      for (x = 0; x < w; x++)
        if (src->factor[l * np + (gsize) y * w + x] != 0.0f)
          {
            yhi = (int) y;
            break;
          }
  if (ylo < 0)
    ylo = yhi = (int) h / 2;   /* a fully blocked pupil: one zero row */
  psf->y0 = (guint) ylo;
  psf->rows = (guint) (yhi - ylo + 1);
  nband = (gsize) psf->rows * w;

  psf->F = fftwf_alloc_complex ((gsize) L * C * nband);
  psf->G = g_new (double, (gsize) L * C * nband);
  psf->scale = g_new (float, L * C);
  /* the centring modulation exp(2πi (y·⌊h/2⌋/h + x·⌊w/2⌋/w)), one factor
   * per row and one per column */
  mod_y = g_new (double complex, psf->rows);
  mod_x = g_new (double complex, w);
  for (r = 0; r < psf->rows; r++)
    mod_y[r] = cexp (2.0 * AIRY_PI * I * ((double) (psf->y0 + r) * (h / 2) / h));
  for (x = 0; x < w; x++)
    mod_x[x] = cexp (2.0 * AIRY_PI * I * ((double) x * (w / 2) / w));
  for (l = 0; l < L; l++)
    for (c = 0; c < C; c++)
      {
        /* |c_l|² of the transform's constant; 1 without one */
        double cr = fft->scale ? crealf (fft->scale[l]) : 1.0, ci = fft->scale ? cimagf (fft->scale[l]) : 0.0;
        guint e = l * C + c;
        const fftwf_complex *pol = src->n_components ? src->components + ((gsize) c * L + l) * np : NULL;

        psf->scale[e] = (float) (intensity->weights[l] * (cr * cr + ci * ci)
                                 * (src->n_components ? src->component_weights[c] : 1.0));
        for (r = 0; r < psf->rows; r++)
          {
            y = psf->y0 + r;
            for (x = 0; x < w; x++)
              {
                gsize i = l * np + (gsize) y * w + x, k = e * nband + (gsize) r * w + x;
                fftwf_complex v = src->factor[i] == 0.0f ? 0.0f
                                  : src->factor[i] * (fftwf_complex) (mod_y[r] * mod_x[x]);

                psf->F[k] = pol ? v * pol[(gsize) y * w + x] : v;
                psf->G[k] = src->phase[i];
              }
          }
      }
  if (src->phase_x && src->phase_y)
    {
      psf->gx = g_new (double, (gsize) L * C * w);
      psf->gy = g_new (double, (gsize) L * C * psf->rows);
      for (l = 0; l < L; l++)
        for (c = 0; c < C; c++)
          {
            memcpy (psf->gx + (gsize) (l * C + c) * w, src->phase_x + (gsize) l * w, w * sizeof (double));
            memcpy (psf->gy + (gsize) (l * C + c) * psf->rows, src->phase_y + (gsize) l * h + psf->y0,
                    psf->rows * sizeof (double));
          }
    }
  return op;
}

/* pass 3 */
static void
fuse_psf (GPtrArray *ops, guint64 hash)
{
  AiryOp *src, *fft, *intensity;

  if (ops->len < 3)
    return;
  src = g_ptr_array_index (ops, 0);
  fft = g_ptr_array_index (ops, 1);
  intensity = g_ptr_array_index (ops, 2);
  if (src->kind != AIRY_OP_OBJECTIVE || fft->kind != AIRY_OP_FFT || intensity->kind != AIRY_OP_INTENSITY
      || !fft->centred || fft->sign != AIRY_FFT_FORWARD
      || fft->height != src->height || fft->width != src->width)
    return;
  g_ptr_array_insert (ops, 0, fused_psf_new (src, fft, intensity, hash));
  g_ptr_array_remove_range (ops, 1, 3);
}

void
_airy_ops_fuse (AiryOpList *list)
{
  /* a Jones matrix folded into a source or a factor lets the next fold */
  do
    fold_multiplies (list->ops);
  while (_airy_ops_fold_jones (list->ops));
  fuse_psf (list->ops, list->hash);
}

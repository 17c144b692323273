#define G_LOG_DOMAIN "airy-ops"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-ops-private.h"

/* Each op kind's forward map and its adjoint, side by side: what the
 * reference interpreter (airy-ops.c) runs, and the vector–Jacobian
 * products the gradient builds on (tests/test-adjoint.c checks each by the
 * dot-product test ⟨J v, w⟩ = ⟨v, Jᵀ w⟩).
 *
 * Conventions: a complex cotangent is x̄ = ∂L/∂Re x + i ∂L/∂Im x, so that
 * δL = Re Σ conj(x̄)·δx; the adjoint of u' = a·u is ū = conj(a)·ū' (and
 * ā = conj(u)·ū'). A source overwrites the field: the input's cotangent is
 * zero. Parameters' cotangents are added to the AiryOpGrad given (a NULL
 * array is not wanted). */

/* ---- field ops ---- */

static gboolean
set_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error)
{
  memcpy (field->data, op->factor, (gsize) op->n_lambda * op->height * op->width * sizeof (fftwf_complex));
  return TRUE;
}

static void
zero_bar (const AiryOp *op, const AiryField *in, AiryField *bar)
{
  if (bar->height != in->height || bar->width != in->width)
    airy_field_resize (bar, in->height, in->width);
  else
    memset (bar->data, 0, (gsize) bar->n_lambda * bar->height * bar->width * sizeof (fftwf_complex));
}

static gboolean
set_adjoint (const AiryOp *op, const AiryField *in, AiryField *bar, const AiryPlane *plane, AiryOpGrad *grad,
             GError **error)
{
  gsize n = (gsize) op->n_lambda * op->height * op->width, k;

  for (k = 0; grad && grad->factor && k < n; k++)
    grad->factor[k] += bar->data[k];
  zero_bar (op, in, bar);
  return TRUE;
}

static gboolean
objective_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error)
{
  gsize n = (gsize) op->n_lambda * op->height * op->width, k;

  /* a field of one scalar plane per wavelength has no room for
   * components: a vectorial source runs fused only (the plan says so) */
  g_return_val_if_fail (op->n_components == 0, FALSE);
  /* outside the pupil (F = 0) the field is 0 without its phase */
  for (k = 0; k < n; k++)
    field->data[k] = op->factor[k] != 0.0f ? op->factor[k] * _airy_cis ((plane->z + op->z) * op->phase[k]) : 0.0f;
  return TRUE;
}

/* u = F·e^{itG}, t = z + z0: F̄ = e^{−itG}·ū, Ḡ = t·Im(conj(u)·ū) */
static gboolean
objective_adjoint (const AiryOp *op, const AiryField *in, AiryField *bar, const AiryPlane *plane, AiryOpGrad *grad,
                   GError **error)
{
  gsize n = (gsize) op->n_lambda * op->height * op->width, k;
  double t = plane->z + op->z;

  g_return_val_if_fail (op->n_components == 0, FALSE);
  for (k = 0; grad && k < n; k++)
    {
      double complex e = cexp (I * t * op->phase[k]);
      double complex ub = bar->data[k];

      if (grad->factor)
        grad->factor[k] += (fftwf_complex) (conj (e) * ub);
      if (grad->phase)
        grad->phase[k] += t * cimag (conj (op->factor[k] * e) * ub);
    }
  zero_bar (op, in, bar);
  return TRUE;
}

static gboolean
generated_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error)
{
  /* from the op's data: its grid, medium, distance and power */
  memcpy (field->lambda, op->lambda, op->n_lambda * sizeof (double));
  memcpy (field->dy, op->dy, op->n_lambda * sizeof (double));
  memcpy (field->dx, op->dx, op->n_lambda * sizeof (double));
  if (op->kind == AIRY_OP_GAUSS)
    _airy_gaussian_beam_fill (field, op->n, op->waist, plane->z + op->z, op->power);
  else if (!_airy_point_source_fill (field, op->n, plane->z + op->z, op->power, plane->index, error))
    return FALSE;
  return TRUE;
}

/* u ∝ √power: ∂u/∂power = u/(2·power). The point source's |u| is the
 * same at every pixel, so its normalisation does not depend on z:
 * ∂u/∂z = u·(−iπ n r²/(λ z²)), z the plane's and the op's distance. */
static gboolean
generated_adjoint (const AiryOp *op, const AiryField *in, AiryField *bar, const AiryPlane *plane, AiryOpGrad *grad,
                   GError **error)
{
  if (grad)
    {
      g_autoptr(AiryField) u = _airy_field_copy (in);
      gsize np = (gsize) op->height * op->width, k;
      double s = 0.0, sz = 0.0, z = plane->z + op->z;
      guint l;

      if (!generated_forward (op, u, plane, error))
        return FALSE;
      for (l = 0; l < op->n_lambda; l++)
        for (k = 0; k < np; k++)
          {
            fftwf_complex c = conjf (u->data[l * np + k]) * bar->data[l * np + k];
            double x = airy_grid_coord ((int) (k % op->width), (int) op->width, op->dx[l]);
            double y = airy_grid_coord ((int) (k / op->width), (int) op->height, op->dy[l]);

            s += crealf (c);
            /* Re(conj(−i a u)·ū) = −a·Im(conj(u)·ū), a = π n r²/(λ z²) */
            sz -= AIRY_PI * op->n * (x * x + y * y) / (op->lambda[l] * z * z) * cimagf (c);
          }
      grad->power += s / (2.0 * op->power);
      if (op->kind == AIRY_OP_POINT)
        grad->z += sz;
    }
  zero_bar (op, in, bar);
  return TRUE;
}

static gboolean
apply_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error)
{
  /* the element reads the grid entering it */
  memcpy (field->dy, op->dy, op->n_lambda * sizeof (double));
  memcpy (field->dx, op->dx, op->n_lambda * sizeof (double));
  return AIRY_ELEMENT_GET_CLASS (op->element)->apply (op->element, op->state, field, plane, error);
}

static gboolean
multiply_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error)
{
  gsize n = (gsize) op->n_lambda * op->height * op->width, k;

  for (k = 0; k < n; k++)
    field->data[k] *= op->factor[k];
  return TRUE;
}

/* u' = f·u: ū = conj(f)·ū', f̄ = conj(u)·ū' */
static gboolean
multiply_adjoint (const AiryOp *op, const AiryField *in, AiryField *bar, const AiryPlane *plane, AiryOpGrad *grad,
                  GError **error)
{
  gsize n = (gsize) op->n_lambda * op->height * op->width, k;

  for (k = 0; k < n; k++)
    {
      if (grad && grad->factor)
        grad->factor[k] += conjf (in->data[k]) * bar->data[k];
      bar->data[k] *= conjf (op->factor[k]);
    }
  return TRUE;
}

static void
fft_run (const AiryOp *op, AiryField *field, AiryFftSign sign, gboolean conj_scale, guint threads)
{
  gsize np = (gsize) op->height * op->width, k;
  guint l;

  if (op->centred)
    _airy_fft_centred (field, sign, threads);
  else
    for (l = 0; l < op->n_lambda; l++)
      _airy_fft_c2c_execute (op->height, op->width, sign, threads, field->data + l * np, field->data + l * np);
  for (l = 0; op->scale && l < op->n_lambda; l++)
    {
      fftwf_complex s = conj_scale ? conjf (op->scale[l]) : op->scale[l];

      for (k = 0; k < np; k++)
        field->data[l * np + k] *= s;
    }
}

static gboolean
fft_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error)
{
  fft_run (op, field, op->sign, FALSE, plane->threads);
  return TRUE;
}

/* The unnormalised DFT's adjoint is the DFT of the other sign; the centred
 * one's, fftshift ∘ DFT ∘ ifftshift, is the centred one of the other sign;
 * the constant goes conjugated. */
static gboolean
fft_adjoint (const AiryOp *op, const AiryField *in, AiryField *bar, const AiryPlane *plane, AiryOpGrad *grad,
             GError **error)
{
  gsize np = (gsize) op->height * op->width, k;
  guint l;

  /* the constant first (it multiplies after the transform) */
  for (l = 0; op->scale && l < op->n_lambda; l++)
    for (k = 0; k < np; k++)
      bar->data[l * np + k] *= conjf (op->scale[l]);
  if (op->centred)
    _airy_fft_centred (bar, op->sign == AIRY_FFT_FORWARD ? AIRY_FFT_BACKWARD : AIRY_FFT_FORWARD, plane->threads);
  else
    for (l = 0; l < op->n_lambda; l++)
      _airy_fft_c2c_execute (op->height, op->width, op->sign == AIRY_FFT_FORWARD ? AIRY_FFT_BACKWARD : AIRY_FFT_FORWARD,
                             plane->threads, bar->data + l * np, bar->data + l * np);
  return TRUE;
}

static gboolean
resize_forward (const AiryOp *op, AiryField *field, const AiryPlane *plane, GError **error)
{
  airy_field_resize_centred (field, op->height, op->width);
  return TRUE;
}

/* padding and cropping about ⌊N/2⌋ select pixels: the adjoint resizes back */
static gboolean
resize_adjoint (const AiryOp *op, const AiryField *in, AiryField *bar, const AiryPlane *plane, AiryOpGrad *grad,
                GError **error)
{
  airy_field_resize_centred (bar, in->height, in->width);
  return TRUE;
}

/* ---- INTENSITY: the field's end ---- */

void
_airy_op_intensity_forward (const AiryOp *op, const AiryField *field, float *out)
{
  gsize n = airy_field_plane_size (field), i;
  guint l;

  g_return_if_fail (op->n_lambda == field->n_lambda);
  memset (out, 0, n * sizeof (float));
  for (l = 0; l < field->n_lambda; l++)
    {
      const fftwf_complex *u = field->data + l * n;
      float w = (float) op->weights[l];

      for (i = 0; i < n; i++)
        {
          out[i] += airy_intensity_term (w, crealf (u[i]), cimagf (u[i]));
        }
    }
}

/* I = Σ_l w_l |u_l|²: ū_l = 2 w_l Ī u_l */
void
_airy_op_intensity_adjoint (const AiryOp *op, const AiryField *in, const float *ibar, AiryField *bar)
{
  gsize n = airy_field_plane_size (in), i;
  guint l;

  if (bar->height != in->height || bar->width != in->width)
    airy_field_resize (bar, in->height, in->width);
  for (l = 0; l < in->n_lambda; l++)
    for (i = 0; i < n; i++)
      bar->data[l * n + i] = (float) (2.0 * op->weights[l] * ibar[i]) * in->data[l * n + i];
}

/* ---- FUSED_PSF ---- */

/* I = Σ_e s_e |DFT(E_e)|², E_e = F_e·e^{itG_e} on the band: X̄ = 2 s Ī X,
 * Ē = DFT⁻(X̄) on the band, F̄ = e^{−itG}·Ē, Ḡ = t·Im(conj(E)·Ē). */
void
_airy_fused_psf_adjoint (const AiryOp *op, double z, guint threads, const float *ibar, AiryOpGrad *grad)
{
  const AiryFusedPsf *psf = op->psf;
  guint h = op->height, w = op->width, e, r, x;
  gsize n = (gsize) h * w, nband = (gsize) psf->rows * w, k;
  fftwf_complex *u = fftwf_alloc_complex (n);
  double t = z + psf->z0;

  for (e = 0; e < op->n_lambda; e++)
    {
      memset (u, 0, n * sizeof (fftwf_complex));
      for (r = 0; r < psf->rows; r++)
        for (x = 0; x < w; x++)
          {
            gsize i = e * nband + (gsize) r * w + x;
            u[(gsize) (psf->y0 + r) * w + x] = psf->F[i] * _airy_cis (t * psf->G[i]);
          }
      _airy_fft_c2c_execute (h, w, AIRY_FFT_FORWARD, threads, u, u);
      for (k = 0; k < n; k++)
        u[k] *= 2.0f * psf->scale[e] * ibar[k];
      _airy_fft_c2c_execute (h, w, AIRY_FFT_BACKWARD, threads, u, u);
      for (r = 0; r < psf->rows; r++)
        for (x = 0; x < w; x++)
          {
            gsize i = e * nband + (gsize) r * w + x;
            double complex c = cexp (I * t * psf->G[i]);
            double complex eb = u[(gsize) (psf->y0 + r) * w + x];

            if (grad->factor)
              grad->factor[i] += (fftwf_complex) (conj (c) * eb);
            if (grad->phase)
              grad->phase[i] += t * cimag (conj (psf->F[i] * c) * eb);
          }
    }
  fftwf_free (u);
}

/* ---- the intensity stage: images ---- */

static gboolean
sum_forward (const AiryOp *op, const float *in, guint n_in, guint first, float *out, GError **error)
{
  gsize n = (gsize) op->height * op->width, k;
  guint b;

  memset (out, 0, n * sizeof (float));
  for (b = 0; b < n_in; b++)
    for (k = 0; k < n; k++)
      out[k] += in[b * n + k];
  return TRUE;
}

static gboolean
sum_adjoint (const AiryOp *op, const float *in, guint n_in, guint first, const float *out_bar, float *in_bar,
             AiryOpGrad *grad, GError **error)
{
  gsize n = (gsize) op->height * op->width;
  guint b;

  for (b = 0; b < n_in; b++)
    memcpy (in_bar + b * n, out_bar, n * sizeof (float));
  return TRUE;
}

/* The padded spectra of the convolution: a plane (h × w) at the corner of
 * ph × pw, transformed. */
static fftwf_complex *
padded_spectrum (const float *plane, guint h, guint w, guint ph, guint pw, guint oy, guint ox)
{
  fftwf_complex *p = fftwf_alloc_complex ((gsize) ph * pw);
  guint y, x;

  memset (p, 0, (gsize) ph * pw * sizeof (fftwf_complex));
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      p[(gsize) (y + oy) * pw + x + ox] = plane[(gsize) y * w + x];
  _airy_fft_c2c_execute (ph, pw, AIRY_FFT_FORWARD, 1, p, p);
  return p;
}

/* The PSF planes' padded spectra, n × pad_height × pad_width, for
 * _airy_convolve_forward_with to reuse over many samples (SIM's raw
 * images). */
fftwf_complex *
_airy_convolve_psf_spectra (const AiryConvolveOp *c, const float *psf, guint n)
{
  gsize np = (gsize) c->pad_height * c->pad_width, npsf = (gsize) c->psf_height * c->psf_width;
  fftwf_complex *all = fftwf_alloc_complex (np * MAX (n, 1));
  guint b;

  for (b = 0; b < n; b++)
    {
      fftwf_complex *P = padded_spectrum (psf + b * npsf, c->psf_height, c->psf_width, c->pad_height, c->pad_width,
                                          0, 0);

      memcpy (all + b * np, P, np * sizeof (fftwf_complex));
      fftwf_free (P);
    }
  return all;
}

/* CONVOLVE by its definition: Σ_b P̂_b·V̂_b, one inverse transform, the
 * "same" crop that keeps the PSF's centre; the PSF's spectra from
 * `spectra` (_airy_convolve_psf_spectra) where given, else transformed
 * here. */
void
_airy_convolve_forward_with (const AiryConvolveOp *c, const float *in, const fftwf_complex *spectra, guint n_in,
                             guint first, float *out)
{
  guint ph = c->pad_height, pw = c->pad_width, b, y, x;
  gsize np = (gsize) ph * pw, k, npsf = (gsize) c->psf_height * c->psf_width;
  fftwf_complex *acc = fftwf_alloc_complex (np);
  g_autofree float *vol = g_new (float, (gsize) c->vol_height * c->vol_width);
  g_autofree float *full = g_new (float, np);

  memset (acc, 0, np * sizeof (fftwf_complex));
  for (b = 0; b < n_in; b++)
    {
      fftwf_complex *own = spectra ? NULL : padded_spectrum (in + b * npsf, c->psf_height, c->psf_width, ph, pw, 0, 0);
      const fftwf_complex *P = spectra ? spectra + b * np : own;
      fftwf_complex *V;

      _airy_convolve_volume_plane (c, first + b, vol);
      V = padded_spectrum (vol, c->vol_height, c->vol_width, ph, pw, 0, 0);
      for (k = 0; k < np; k++)
        acc[k] += P[k] * V[k];
      fftwf_free (own);
      fftwf_free (V);
    }
  _airy_fft_c2c_execute (ph, pw, AIRY_FFT_BACKWARD, 1, acc, acc);
  for (k = 0; k < np; k++)
    full[k] = crealf (acc[k]);
  for (y = 0; y < c->vol_height; y++)
    for (x = 0; x < c->vol_width; x++)
      out[(gsize) y * c->vol_width + x] = airy_conv_crop_at (full, pw, c->psf_height / 2, c->psf_width / 2, y, x,
                                                             1.0f / ((float) ph * pw));
  fftwf_free (acc);
}

static gboolean
convolve_forward (const AiryOp *op, const float *in, guint n_in, guint first, float *out, GError **error)
{
  _airy_convolve_forward_with (op->convolve, in, NULL, n_in, first, out);
  return TRUE;
}

/* The image is a correlation's adjoint: Ī placed where the crop took it,
 * correlated with each V_z gives Ī_z, with each I_z the sample's V̄_z. */
static gboolean
convolve_adjoint (const AiryOp *op, const float *in, guint n_in, guint first, const float *out_bar, float *in_bar,
                  AiryOpGrad *grad, GError **error)
{
  const AiryConvolveOp *c = op->convolve;
  guint ph = c->pad_height, pw = c->pad_width, b, y, x;
  gsize np = (gsize) ph * pw, k, npsf = (gsize) c->psf_height * c->psf_width;
  gsize nvol = (gsize) c->vol_height * c->vol_width;
  fftwf_complex *B = padded_spectrum (out_bar, c->vol_height, c->vol_width, ph, pw, c->psf_height / 2,
                                      c->psf_width / 2);
  fftwf_complex *t = fftwf_alloc_complex (np);
  g_autofree float *vol = g_new (float, nvol);
  float norm = 1.0f / ((float) ph * pw);

  for (b = 0; b < n_in; b++)
    {
      fftwf_complex *V, *P;

      _airy_convolve_volume_plane (c, first + b, vol);
      V = padded_spectrum (vol, c->vol_height, c->vol_width, ph, pw, 0, 0);
      for (k = 0; k < np; k++)
        t[k] = B[k] * conjf (V[k]);
      _airy_fft_c2c_execute (ph, pw, AIRY_FFT_BACKWARD, 1, t, t);
      for (y = 0; y < c->psf_height; y++)
        for (x = 0; x < c->psf_width; x++)
          in_bar[b * npsf + (gsize) y * c->psf_width + x] = crealf (t[(gsize) y * pw + x]) * norm;
      if (grad && grad->sample)
        {
          P = padded_spectrum (in + b * npsf, c->psf_height, c->psf_width, ph, pw, 0, 0);
          for (k = 0; k < np; k++)
            t[k] = B[k] * conjf (P[k]);
          _airy_fft_c2c_execute (ph, pw, AIRY_FFT_BACKWARD, 1, t, t);
          for (y = 0; y < c->vol_height; y++)
            for (x = 0; x < c->vol_width; x++)
              grad->sample[b * nvol + (gsize) y * c->vol_width + x] += crealf (t[(gsize) y * pw + x]) * norm;
          fftwf_free (P);
        }
      fftwf_free (V);
    }
  fftwf_free (B);
  fftwf_free (t);
  return TRUE;
}

static gboolean
sensor_forward (const AiryOp *op, const float *in, guint n_in, guint first, float *out, GError **error)
{
  const AirySensorOp *s = op->sensor;
  gsize ni = (gsize) s->in_height * s->in_width, no = (gsize) s->out_height * s->out_width;
  guint b;

  for (b = 0; b < n_in; b++)
    {
      g_autofree float *img = _airy_op_sensor_process (op, in + b * ni, first + b);

      memcpy (out + b * no, img, no * sizeof (float));
    }
  return TRUE;
}

/* The deterministic sensor (no noise, saturation or rounding) is affine:
 * gain·exposure·R(I) + offset; R's transpose spreads each output pixel
 * back over the pixels it was made of, with their weights. */
static gboolean
sensor_adjoint (const AiryOp *op, const float *in, guint n_in, guint first, const float *out_bar, float *in_bar,
                AiryOpGrad *grad, GError **error)
{
  const AirySensorOp *s = op->sensor;
  const AiryNoiseParams *p = &s->noise;
  gsize ni = (gsize) s->in_height * s->in_width, no = (gsize) s->out_height * s->out_width;
  double g = p->gain * p->exposure;
  guint b, y, x, i, j;
  gsize k;

  if (p->noise != 0 || p->full_well > 0.0 || p->bits > 0 || p->read_noise > 0.0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("sensor: noise, saturation and rounding have no derivative; the adjoint needs a sensor "
                     "without them"));
      return FALSE;
    }
  if (grad)
    {
      /* y = gain·exposure·R(I) + offset: R(I) is the sensor of unit
       * gain and exposure without offset */
      g_autofree float *r = g_new (float, (gsize) n_in * no);
      AirySensorOp unit = *s;
      AiryOp unit_op = *op;

      unit.noise.gain = unit.noise.exposure = 1.0;
      unit.noise.offset = 0.0;
      unit_op.sensor = &unit;
      if (!sensor_forward (&unit_op, in, n_in, first, r, error))
        return FALSE;
      for (k = 0; k < (gsize) n_in * no; k++)
        {
          grad->gain += (double) out_bar[k] * p->exposure * r[k];
          grad->exposure += (double) out_bar[k] * p->gain * r[k];
          grad->offset += out_bar[k];
        }
    }
  for (b = 0; b < n_in; b++)
    {
      const float *ob = out_bar + b * no;
      float *ib = in_bar + b * ni;

      memset (ib, 0, ni * sizeof (float));
      for (y = 0; y < s->out_height; y++)
        for (x = 0; x < s->out_width; x++)
          {
            double v = g * ob[(gsize) y * s->out_width + x];

            if (s->resample == AIRY_SENSOR_BLOCK_SUM)
              for (j = 0; j < s->factor; j++)
                for (i = 0; i < s->factor; i++)
                  ib[(gsize) (y * s->factor + j) * s->in_width + x * s->factor + i] += (float) v;
            else if (s->resample == AIRY_SENSOR_LINEAR)
              {
                double sy = airy_grid_coord (y, s->out_height, s->out_dy) / s->in_dy + s->in_height / 2;
                double sx = airy_grid_coord (x, s->out_width, s->out_dx) / s->in_dx + s->in_width / 2;
                int y0 = (int) floor (sy), x0 = (int) floor (sx);
                double fy = sy - y0, fx = sx - x0;

                for (j = 0; j < 2; j++)
                  for (i = 0; i < 2; i++)
                    {
                      int yy = y0 + (int) j, xx = x0 + (int) i;
                      double wgt = (j ? fy : 1 - fy) * (i ? fx : 1 - fx);

                      if (yy >= 0 && yy < (int) s->in_height && xx >= 0 && xx < (int) s->in_width)
                        ib[(gsize) yy * s->in_width + xx] += (float) (s->scale * wgt * v);
                    }
              }
            else
              ib[(gsize) y * s->in_width + x] = (float) v;
          }
    }
  return TRUE;
}

/* ---- the table ---- */

static const AiryOpKindInfo kinds[AIRY_N_OP_KINDS] = {
  [AIRY_OP_SET] = { set_forward, set_adjoint, NULL, NULL },
  [AIRY_OP_OBJECTIVE] = { objective_forward, objective_adjoint, NULL, NULL },
  [AIRY_OP_POINT] = { generated_forward, generated_adjoint, NULL, NULL },
  [AIRY_OP_GAUSS] = { generated_forward, generated_adjoint, NULL, NULL },
  [AIRY_OP_MULTIPLY] = { multiply_forward, multiply_adjoint, NULL, NULL },
  [AIRY_OP_JONES] = { _airy_op_jones_forward, _airy_op_jones_adjoint, NULL, NULL },
  [AIRY_OP_FFT] = { fft_forward, fft_adjoint, NULL, NULL },
  [AIRY_OP_RESIZE] = { resize_forward, resize_adjoint, NULL, NULL },
  /* an element's own apply() on the host: no adjoint known */
  [AIRY_OP_APPLY] = { apply_forward, NULL, NULL, NULL },
  /* INTENSITY and FUSED_PSF end the field stage: _airy_op_intensity_*,
   * _airy_fused_psf_reference and _airy_fused_psf_adjoint */
  [AIRY_OP_INTENSITY] = { NULL, NULL, NULL, NULL },
  [AIRY_OP_FUSED_PSF] = { NULL, NULL, NULL, NULL },
  [AIRY_OP_CONVOLVE] = { NULL, NULL, convolve_forward, convolve_adjoint },
  [AIRY_OP_SUM] = { NULL, NULL, sum_forward, sum_adjoint },
  [AIRY_OP_SENSOR] = { NULL, NULL, sensor_forward, sensor_adjoint },
};

const AiryOpKindInfo *
_airy_op_kind_info (AiryOpKind kind)
{
  g_return_val_if_fail (kind < AIRY_N_OP_KINDS, NULL);
  return &kinds[kind];
}

AiryField *
_airy_field_copy (const AiryField *field)
{
  AiryField *c = g_new0 (AiryField, 1);
  gsize n = (gsize) field->n_lambda * field->height * field->width;

  c->n_lambda = field->n_lambda;
  c->lambda = g_memdup2 (field->lambda, field->n_lambda * sizeof (double));
  c->weight = g_memdup2 (field->weight, field->n_lambda * sizeof (double));
  c->dy = g_memdup2 (field->dy, field->n_lambda * sizeof (double));
  c->dx = g_memdup2 (field->dx, field->n_lambda * sizeof (double));
  airy_field_resize (c, field->height, field->width);
  memcpy (c->data, field->data, n * sizeof (fftwf_complex));
  return c;
}

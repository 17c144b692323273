#define G_LOG_DOMAIN "airy-propagate"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-ops-private.h"

/* Free-space propagation by z in a medium n:
 *  - transfer: Fresnel transfer function H = e^{ikz} exp(−iπ λ z f²/n);
 *  - angular-spectrum: H = exp(i2πz√((n/λ)² − f²)), evanescent waves removed
 *    or decaying, optional Matsushima band limit;
 *  - single-fft: one-transform Fresnel, output spacing λz/(n·N·dx).
 * Zero padding of `pad` pixels per side; `same` crops back to the input shape. */

typedef struct { AiryElement parent; } AiryPropagate;
typedef struct { AiryElementClass parent_class; } AiryPropagateClass;
G_DEFINE_FINAL_TYPE (AiryPropagate, _airy_propagate, AIRY_TYPE_ELEMENT)

/* chromatix's padding rules (compute_padding_transfer/transform/exact):
 * M pixels of spacing dx, Fresnel number N_F = (M·dx/2)²/(λ|z|) (the
 * largest over the wavelengths), pad ratio Q = 2·max(1, M/(4 N_F)), for the
 * angular spectrum over √(1 − (λ/(2dx))²) (the largest λ/dx), the padded
 * size ⌈Q·M/2⌉·2 and N − M pixels on each side. */
static int
auto_pad (int method, guint m, guint n_lambda, const double *lambda, const double *d, double z)
{
  double nf = 0.0, scale = 0.0, q;
  guint l;

  for (l = 0; l < n_lambda; l++)
    {
      double half = 0.5 * m * d[l];

      nf = MAX (nf, z == 0.0 ? INFINITY : half * half / (lambda[l] * fabs (z)));
      scale = MAX (scale, lambda[l] / (2.0 * d[l]));
    }
  q = 2.0 * MAX (1.0, m / (4.0 * nf));
  if (method == AIRY_PROPAGATE_ANGULAR_SPECTRUM)
    q /= sqrt (MAX (1e-12, 1.0 - scale * scale));
  return MIN ((int) (ceil (q * m / 2.0) * 2.0) - (int) m, 32768);
}

static int
pad_for_context (AiryElement *self, const AiryContext *ctx)
{
  if (airy_element_get_enum (self, "method") == AIRY_PROPAGATE_SAS)
    return ctx->height / 2;
  if (!airy_element_get_boolean (self, "auto-pad"))
    return airy_element_get_int (self, "pad");
  return auto_pad (airy_element_get_enum (self, "method"), ctx->height, ctx->spectrum->n,
                   ctx->spectrum->wavelengths, ctx->dy, airy_element_get_double (self, "z"));
}

static int
pad_for_field (AiryElement *self, const AiryField *field)
{
  if (airy_element_get_enum (self, "method") == AIRY_PROPAGATE_SAS)
    return field->height / 2;
  if (!airy_element_get_boolean (self, "auto-pad"))
    return airy_element_get_int (self, "pad");
  return auto_pad (airy_element_get_enum (self, "method"), field->height, field->n_lambda, field->lambda,
                   field->dy, airy_element_get_double (self, "z"));
}

static gboolean
propagate_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  int method = airy_element_get_enum (self, "method");
  int pad = pad_for_context (self, ctx);
  double z = airy_element_get_double (self, "z");
  double n = airy_element_get_double (self, "n");
  guint ph = ctx->height + 2 * pad, pw = ctx->width + 2 * pad, l;

  if (ph > 65536 || pw > 65536)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.pad: the padded grid must be at most 65536 pixels wide, got %u × %u"),
                   ctx->path, ph, pw);
      return FALSE;
    }
  if ((method == AIRY_PROPAGATE_SINGLE_FFT || method == AIRY_PROPAGATE_SAS) && z == 0.0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   method == AIRY_PROPAGATE_SAS ? _("%s.z: must not be 0 for the scalable angular spectrum")
                                                : _("%s.z: must not be 0 for the single-FFT method"), ctx->path);
      return FALSE;
    }
  if (method == AIRY_PROPAGATE_SAS && ctx->height != ctx->width)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.method: the scalable angular spectrum needs a square field, got %u × %u"),
                   ctx->path, ctx->height, ctx->width);
      return FALSE;
    }
  if (airy_element_get_enum (self, "output") == AIRY_OUTPUT_FULL)
    {
      ctx->height = ph;
      ctx->width = pw;
    }
  if (method == AIRY_PROPAGATE_SINGLE_FFT || method == AIRY_PROPAGATE_SAS)
    for (l = 0; l < ctx->spectrum->n; l++)
      {
        double lambda = ctx->spectrum->wavelengths[l];
        ctx->dx[l] = lambda * fabs (z) / (n * pw * ctx->dx[l]);
        ctx->dy[l] = lambda * fabs (z) / (n * ph * ctx->dy[l]);
      }
  ctx->n = n;
  return TRUE;
}

/* single-fft, before the transform: the input chirp exp(iπ n x²/(λ z)) */
static void
single_fft_chirp_in (AiryField *field, double n, double z)
{
  gsize np = airy_field_plane_size (field);
  guint h = field->height, w = field->width, l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      double c = AIRY_PI * n / (field->lambda[l] * z);
      fftwf_complex *u = field->data + l * np;

      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          {
            double xx = airy_grid_coord (x, w, field->dx[l]);
            double yy = airy_grid_coord (y, h, field->dy[l]);
            u[(gsize) y * w + x] *= _airy_cis (c * (xx * xx + yy * yy));
          }
    }
}

/* single-fft, after the centred transform: prefactor and output chirp on
 * the output grid, which becomes the field's */
static void
single_fft_chirp_out (AiryField *field, double n, double z)
{
  gsize np = airy_field_plane_size (field);
  guint h = field->height, w = field->width, l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      double lambda = field->lambda[l];
      double k = 2.0 * AIRY_PI * n / lambda;
      double dx = field->dx[l], dy = field->dy[l];
      double ndx = lambda * fabs (z) / (n * w * dx), ndy = lambda * fabs (z) / (n * h * dy);
      double c = AIRY_PI * n / (lambda * z);
      /* prefactor e^{ikz} / (iλz/n) · dx·dy */
      double complex pre = cexp (I * k * z) / (I * lambda * z / n) * dx * dy;
      fftwf_complex *u = field->data + l * np;

      if (z < 0)
        {
          /* a negative distance mirrors the output grid */
          ndx = -ndx;
          ndy = -ndy;
        }
      for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
          {
            double xx = airy_grid_coord (x, w, ndx), yy = airy_grid_coord (y, h, ndy);
            double complex v = pre * cexp (I * c * (xx * xx + yy * yy));
            u[(gsize) y * w + x] *= (float) creal (v) + I * (float) cimag (v);
          }
      field->dx[l] = fabs (ndx);
      field->dy[l] = fabs (ndy);
    }
}

void
_airy_field_multiply_spectrum (AiryField *field, guint l, AirySpectrumFunc fn, gpointer user_data)
{
  guint h = field->height, w = field->width, y, x;
  gsize np = (gsize) h * w;
  float scale = 1.0f / (float) np;
  fftwf_complex *u = field->data + l * np;

  for (y = 0; y < h; y++)
    {
      double fy = airy_fft_freq (y, h, field->dy[l]);

      for (x = 0; x < w; x++)
        u[(gsize) y * w + x] *= fn (airy_fft_freq (x, w, field->dx[l]), fy, user_data) * scale;
    }
}

/* an angular spectrum kernel's parameters (airy_angular_spectrum_kernel) */
void
_airy_angular_spectrum_init (AiryAngularSpectrum *k, const AiryField *field, guint l, double z, double n,
                             gboolean band_limit, gboolean remove_evanescent)
{
  k->z = z;
  k->n = n;
  k->lambda = field->lambda[l];
  k->remove_evanescent = remove_evanescent;
  k->limit_x = band_limit ? airy_angular_spectrum_band_limit (z, n, k->lambda, 1.0 / (field->width * field->dx[l]))
                          : -1.0;
  k->limit_y = band_limit ? airy_angular_spectrum_band_limit (z, n, k->lambda, 1.0 / (field->height * field->dy[l]))
                          : -1.0;
}

fftwf_complex
_airy_angular_spectrum_at (const AiryAngularSpectrum *k, double fx, double fy)
{
  double hk[2];

  airy_angular_spectrum_kernel (fx, fy, k->z, k->n, k->lambda, k->remove_evanescent, k->limit_x, k->limit_y, hk);
  return (float) hk[0] + I * (float) hk[1];
}

typedef struct
{
  gboolean            transfer;
  double              k, z, n, lambda;  /* transfer */
  AiryAngularSpectrum as;               /* angular spectrum */
} TransferState;

static fftwf_complex
transfer_at (double fx, double fy, gpointer user_data)
{
  const TransferState *t = user_data;

  if (t->transfer)
    return _airy_cis (t->k * t->z + airy_fresnel_tf_phase (fx * fx + fy * fy, t->z, t->n, t->lambda));
  return _airy_angular_spectrum_at (&t->as, fx, fy);
}

/* transfer and angular spectrum: plane l (its uncentred spectrum) times
 * H/N, N for the unnormalised backward transform */
static void
multiply_transfer (AiryElement *self, AiryField *field, guint l)
{
  TransferState t;

  t.transfer = airy_element_get_enum (self, "method") == AIRY_PROPAGATE_TRANSFER;
  t.z = airy_element_get_double (self, "z");
  t.n = airy_element_get_double (self, "n");
  t.lambda = field->lambda[l];
  t.k = 2.0 * AIRY_PI * t.n / t.lambda;
  _airy_angular_spectrum_init (&t.as, field, l, t.z, t.n, airy_element_get_boolean (self, "band-limit"),
                               airy_element_get_boolean (self, "remove-evanescent"));
  _airy_field_multiply_spectrum (field, l, transfer_at, &t);
}

/* The scalable angular spectrum's precompensation (chromatix's
 * compute_sas_precompensation; Heintzmann, Loetgering and Wechsler, Optica
 * 10, 1407 (2023)): ΔH = W·exp(ikz(√(1 − s²) − (1 − s²/2))), s = λf/n, on
 * the padded grid of extent L per axis, band limit W: s_a²(2 + 1/t_a²) ≤ 1
 * with t_a = L_a/|z| + |s_a| on both axes. */
typedef struct { double k, z, lambda, n, lx, ly; } SasState;

static fftwf_complex
sas_at (double fx, double fy, gpointer user_data)
{
  const SasState *t = user_data;
  double sx = t->lambda * fx / t->n, sy = t->lambda * fy / t->n, s2 = sx * sx + sy * sy;
  double tx = t->lx / fabs (t->z) + fabs (sx), ty = t->ly / fabs (t->z) + fabs (sy);

  if (sx * sx * (2.0 + 1.0 / (tx * tx)) > 1.0 || sy * sy * (2.0 + 1.0 / (ty * ty)) > 1.0)
    return 0.0f;
  return _airy_cis (t->k * t->z * (sqrt (MAX (0.0, 1.0 - s2)) - (1.0 - 0.5 * s2)));
}

/* plane l's uncentred spectrum times ΔH/N */
static void
sas_precompensate (AiryElement *self, AiryField *field, guint l)
{
  SasState t;

  t.z = airy_element_get_double (self, "z");
  t.n = airy_element_get_double (self, "n");
  t.lambda = field->lambda[l];
  t.k = 2.0 * AIRY_PI * t.n / t.lambda;
  t.lx = field->width * field->dx[l];
  t.ly = field->height * field->dy[l];
  _airy_field_multiply_spectrum (field, l, sas_at, &t);
}

static void
sas_apply_precompensation (AiryElement *self, AiryField *field, guint threads)
{
  gsize np = airy_field_plane_size (field);
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;

      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_FORWARD, threads, u, u);
      sas_precompensate (self, field, l);
      _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_BACKWARD, threads, u, u);
    }
}

static guint
padded (AiryElement *self, const AiryField *field, guint n)
{
  return n + 2 * (guint) pad_for_field (self, field);
}

static gboolean
propagate_apply (AiryElement *self, gpointer state, AiryField *field,
                 const AiryPlane *plane, GError **error)
{
  double z = airy_element_get_double (self, "z");
  double n = airy_element_get_double (self, "n");
  guint h0 = field->height, w0 = field->width, l;
  gsize np;

  {
    guint ph = padded (self, field, h0), pw = padded (self, field, w0);

    airy_field_resize_centred (field, ph, pw);
  }
  np = airy_field_plane_size (field);
  if (airy_element_get_enum (self, "method") == AIRY_PROPAGATE_SINGLE_FFT
      || airy_element_get_enum (self, "method") == AIRY_PROPAGATE_SAS)
    {
      gboolean sas = airy_element_get_enum (self, "method") == AIRY_PROPAGATE_SAS;

      /* SAS: the precompensation before the Fresnel transform, after it
       * backwards (on the output grid) */
      if (sas && z >= 0)
        sas_apply_precompensation (self, field, plane->threads);
      single_fft_chirp_in (field, n, z);
      _airy_fft_centred (field, AIRY_FFT_FORWARD, plane->threads);
      single_fft_chirp_out (field, n, z);
      if (sas && z < 0)
        sas_apply_precompensation (self, field, plane->threads);
    }
  else
    for (l = 0; l < field->n_lambda; l++)
      {
        fftwf_complex *u = field->data + l * np;

        /* The field is centred at ⌊N/2⌋ and H is even in f, so an uncentred
         * transform pair leaves the result in place. */
        _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_FORWARD, plane->threads, u, u);
        multiply_transfer (self, field, l);
        _airy_fft_c2c_execute (field->height, field->width, AIRY_FFT_BACKWARD, plane->threads, u, u);
      }
  if (airy_element_get_enum (self, "output") == AIRY_OUTPUT_SAME)
    airy_field_resize_centred (field, h0, w0);
  return TRUE;
}

/* the one-FFT Fresnel step as ops: input chirp, centred FFT, output chirp */
static void
single_fft_compile (AiryField *field, double n, double z, GPtrArray *ops)
{
  AiryOp *op;

  _airy_field_fill_ones (field);
  single_fft_chirp_in (field, n, z);
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
  op = _airy_op_new (AIRY_OP_FFT, field);
  op->centred = TRUE;
  op->sign = AIRY_FFT_FORWARD;
  g_ptr_array_add (ops, op);
  _airy_field_fill_ones (field);
  single_fft_chirp_out (field, n, z);
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
}

/* SAS as device operations: pad, [FFT, ΔH, FFT⁻¹], input chirp, centred
 * FFT, output chirp, [FFT, ΔH, FFT⁻¹] (the bracket before for z ≥ 0, after
 * for z < 0), crop */
static void
sas_compile_precompensation (AiryElement *self, AiryField *field, GPtrArray *ops)
{
  AiryOp *op = _airy_op_new (AIRY_OP_FFT, field);
  guint l;

  op->sign = AIRY_FFT_FORWARD;
  g_ptr_array_add (ops, op);
  _airy_field_fill_ones (field);
  for (l = 0; l < field->n_lambda; l++)
    sas_precompensate (self, field, l);
  g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
  op = _airy_op_new (AIRY_OP_FFT, field);
  op->sign = AIRY_FFT_BACKWARD;
  g_ptr_array_add (ops, op);
}

static gboolean
sas_compile (AiryElement *self, AiryField *field, GPtrArray *ops, guint h0, guint w0)
{
  double z = airy_element_get_double (self, "z");
  double n = airy_element_get_double (self, "n");
  AiryOp *op;

  if (z >= 0)
    sas_compile_precompensation (self, field, ops);
  single_fft_compile (field, n, z, ops);
  if (z < 0)
    sas_compile_precompensation (self, field, ops);
  if (airy_element_get_enum (self, "output") == AIRY_OUTPUT_SAME)
    {
      airy_field_resize (field, h0, w0);
      g_ptr_array_add (ops, _airy_op_new (AIRY_OP_RESIZE, field));
    }
  return TRUE;
}

/* The same steps as device operations. */
static gboolean
propagate_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  double z = airy_element_get_double (self, "z");
  double n = airy_element_get_double (self, "n");
  guint h0 = field->height, w0 = field->width, l;
  AiryOp *op;

  guint ph = padded (self, field, h0), pw = padded (self, field, w0);

  if (ph != h0 || pw != w0)
    {
      airy_field_resize (field, ph, pw);
      g_ptr_array_add (ops, _airy_op_new (AIRY_OP_RESIZE, field));
    }
  if (airy_element_get_enum (self, "method") == AIRY_PROPAGATE_SAS)
    return sas_compile (self, field, ops, h0, w0);
  if (airy_element_get_enum (self, "method") == AIRY_PROPAGATE_SINGLE_FFT)
    {
      single_fft_compile (field, n, z, ops);
    }
  else
    {
      op = _airy_op_new (AIRY_OP_FFT, field);
      op->sign = AIRY_FFT_FORWARD;
      g_ptr_array_add (ops, op);
      _airy_field_fill_ones (field);
      for (l = 0; l < field->n_lambda; l++)
        multiply_transfer (self, field, l);
      g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
      op = _airy_op_new (AIRY_OP_FFT, field);
      op->sign = AIRY_FFT_BACKWARD;
      g_ptr_array_add (ops, op);
    }
  if (airy_element_get_enum (self, "output") == AIRY_OUTPUT_SAME
      && (field->height != h0 || field->width != w0))
    {
      airy_field_resize (field, h0, w0);
      g_ptr_array_add (ops, _airy_op_new (AIRY_OP_RESIZE, field));
    }
  return TRUE;
}

static void
_airy_propagate_class_init (AiryPropagateClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "propagate", N_("Free-space propagation"),
                                   AIRY_CATEGORY_PROPAGATION);
  element_class->check = propagate_check;
  element_class->apply = propagate_apply;
  element_class->compile = propagate_compile;
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("z", N_("Distance"), N_("Propagation distance"), "µm", -1e7, 1e7, 100.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Medium index"), NULL, 1.0, 4.0, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("method", N_("Method"), N_("Transfer function, angular spectrum or single FFT"),
                          _airy_propagate_method_get_type (), AIRY_PROPAGATE_TRANSFER, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_int ("pad", N_("Padding"), N_("Zero padding on each side (pixels)"), 0, 32768, 0,
                         AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("auto-pad", N_("Automatic padding"),
                             N_("Pad by chromatix's rule for the method (from the Fresnel number) instead of pad"),
                             FALSE));
  airy_element_class_install_property (object_class,
    airy_param_spec_enum ("output", N_("Output"), N_("Crop back to the input shape, or keep the padding"),
                          _airy_output_mode_get_type (), AIRY_OUTPUT_SAME, AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("band-limit", N_("Band limit"), N_("Band-limited angular spectrum (Matsushima)"), FALSE));
  airy_element_class_install_property (object_class,
    airy_param_spec_boolean ("remove-evanescent", N_("Remove evanescent"),
                             N_("Drop evanescent waves instead of letting them decay"), TRUE));
}

static void
_airy_propagate_init (AiryPropagate *self)
{
}

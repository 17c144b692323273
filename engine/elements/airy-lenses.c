#define G_LOG_DOMAIN "airy-lenses"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-fft-private.h"
#include "airy-ops-private.h"

/* Lens helpers shared by the three lens types. */

gboolean
_airy_lens_check_na (AiryElement *self, AiryContext *ctx, GError **error)
{
  double na = airy_element_get_double (self, "na"), n = airy_element_get_double (self, "n");

  if (na > n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.na: must be in [0, n=%g] (0: no pupil), got %g"), ctx->path, n, na);
      if (error)
        airy_error_set_range (*error, &(AiryErrorRange) { .minimum = 0.0, .maximum = n, .value = na, .maximum_name = "n" });
      return FALSE;
    }
  return TRUE;
}

static double
circle_mask (double x, double y, guint l, gpointer user_data)
{
  double r = *(double *) user_data;
  return airy_inside_circle (x * x + y * y, r) ? 1.0 : 0.0;
}

void
_airy_lens_apply_pupil (AiryElement *self, AiryField *field)
{
  double na = airy_element_get_double (self, "na");
  double r;

  if (na <= 0.0)
    return;
  r = airy_element_get_double (self, "f") * na / airy_element_get_double (self, "n");
  _airy_field_multiply_real (field, circle_mask, &r);
}

/* Multiplies plane l by exp(i·c·r²) on its own grid. */
void
_airy_field_multiply_quadratic_phase (AiryField *field, guint l, double c)
{
  gsize np = airy_field_plane_size (field);
  fftwf_complex *u = field->data + l * np;
  guint y, x;

  for (y = 0; y < field->height; y++)
    {
      double yy = airy_grid_coord (y, field->height, field->dy[l]);
      for (x = 0; x < field->width; x++)
        {
          double xx = airy_grid_coord (x, field->width, field->dx[l]);
          u[(gsize) y * field->width + x] *= _airy_cis (c * (xx * xx + yy * yy));
        }
    }
}

/* FF lens: u' = (∓i·dx·dy·n/(λf)) · centred DFT^{±1}(u), du = fλ/(n·N·dx).
 * The inverse uses the unnormalised backward DFT and +i, so that forward
 * then inverse is the identity (Σ|u'|²du² = Σ|u|²dx² both ways). */
static fftwf_complex
ff_factor (const AiryField *field, guint l, double f, double n, gboolean inverse)
{
  double a = field->dx[l] * field->dy[l] * n / (field->lambda[l] * f);

  return inverse ? (float) a * I : -(float) a * I;
}

/* the output grid becomes the field's */
static void
ff_advance (AiryField *field, double f, double n)
{
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    {
      field->dx[l] = f * field->lambda[l] / (n * field->width * field->dx[l]);
      field->dy[l] = f * field->lambda[l] / (n * field->height * field->dy[l]);
    }
}

void
_airy_ff_transform (AiryField *field,
                    double     f,
                    double     n,
                    gboolean   inverse,
                    guint      threads)
{
  gsize np = airy_field_plane_size (field), i;
  guint l;

  _airy_fft_centred (field, inverse ? AIRY_FFT_BACKWARD : AIRY_FFT_FORWARD, threads);
  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;
      fftwf_complex c = ff_factor (field, l, f, n, inverse);

      for (i = 0; i < np; i++)
        u[i] *= c;
    }
  ff_advance (field, f, n);
}

static void
lens_advance_context (AiryElement *self, AiryContext *ctx)
{
  double f = airy_element_get_double (self, "f");
  double n = airy_element_get_double (self, "n");
  guint l;

  for (l = 0; l < ctx->spectrum->n; l++)
    {
      double lambda = ctx->spectrum->wavelengths[l];
      ctx->dx[l] = f * lambda / (n * ctx->width * ctx->dx[l]);
      ctx->dy[l] = f * lambda / (n * ctx->height * ctx->dy[l]);
    }
  ctx->n = n;
}

/* After the FF lens of an objective: is the PSF sampled finely enough? */
static void
check_nyquist (AiryContext *ctx)
{
  guint l;

  if (ctx->na <= 0.0)
    return;
  for (l = 0; l < ctx->spectrum->n; l++)
    {
      double limit = ctx->spectrum->wavelengths[l] / (4.0 * ctx->na);
      double du = MAX (ctx->dx[l], ctx->dy[l]);

      if (du > limit * (1.0 + 1e-9))
        {
          airy_context_warn (ctx, _("%s: the PSF is undersampled: output spacing %.4g µm > "
                             "λ/(4·NA) = %.4g µm (λ = %g µm, NA = %g); use a finer camera "
                             "spacing or a larger grid"), ctx->path, du, limit,
                             ctx->spectrum->wavelengths[l], ctx->na);
          return;
        }
    }
}

static void
install_lens_properties (GObjectClass *object_class, gboolean with_inverse)
{
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("f", N_("Focal length"), N_("Focal length"), "µm",
                            AIRY_FOCAL_LENGTH_MIN, 1e6, 100.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Medium index"), NULL, 1.0, 4.0, 1.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("na", N_("NA"), N_("Pupil applied before the lens (0: none)"), NULL,
                            0.0, 4.0, 0.0, 0));
  if (with_inverse)
    airy_element_class_install_property (object_class,
      airy_param_spec_boolean ("inverse", N_("Inverse"), N_("Apply the inverse transform"), FALSE));
}

/* ------------------------------------------------------------------------ */
/* ff-lens                                                                  */

typedef struct { AiryElement parent; } AiryFfLens;
typedef struct { AiryElementClass parent_class; } AiryFfLensClass;
G_DEFINE_FINAL_TYPE (AiryFfLens, _airy_ff_lens, AIRY_TYPE_ELEMENT)

static gboolean
ff_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  if (!_airy_lens_check_na (self, ctx, error))
    return FALSE;
  lens_advance_context (self, ctx);
  if (!airy_element_get_boolean (self, "inverse"))
    check_nyquist (ctx);
  return TRUE;
}

static gboolean lens_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops,
                              GError **error);

static gboolean
ff_apply (AiryElement *self, gpointer state, AiryField *field,
          const AiryPlane *plane, GError **error)
{
  _airy_lens_apply_pupil (self, field);
  _airy_ff_transform (field, airy_element_get_double (self, "f"), airy_element_get_double (self, "n"),
                      airy_element_get_boolean (self, "inverse"), plane->threads);
  return TRUE;
}

static void
_airy_ff_lens_class_init (AiryFfLensClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "ff-lens", N_("FF lens (Fourier transform)"),
                                   AIRY_CATEGORY_LENS);
  element_class->check = ff_check;
  element_class->apply = ff_apply;
  element_class->compile = lens_compile;
  install_lens_properties (G_OBJECT_CLASS (klass), TRUE);
}

static void
_airy_ff_lens_init (AiryFfLens *self)
{
}

/* ------------------------------------------------------------------------ */
/* df-lens: the object at distance d in front of the lens, the output in
 * its back focal plane: FF lens times exp(iπ(1 − d/f) n u²/(λf)) (chromatix). */

typedef struct { AiryElement parent; } AiryDfLens;
typedef struct { AiryElementClass parent_class; } AiryDfLensClass;
G_DEFINE_FINAL_TYPE (AiryDfLens, _airy_df_lens, AIRY_TYPE_ELEMENT)

/* the df-lens chirp: exp(i·c·r²) after a forward lens, its conjugate
 * before an inverse one */
static void
df_chirp (AiryElement *self, AiryField *field, double sign)
{
  double f = airy_element_get_double (self, "f");
  double n = airy_element_get_double (self, "n");
  double d = airy_element_get_double (self, "d");
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    _airy_field_multiply_quadratic_phase (field, l, sign * AIRY_PI * (1.0 - d / f) * n / (field->lambda[l] * f));
}

static gboolean
df_apply (AiryElement *self, gpointer state, AiryField *field,
          const AiryPlane *plane, GError **error)
{
  gboolean inverse = airy_element_get_boolean (self, "inverse");

  _airy_lens_apply_pupil (self, field);
  if (inverse)
    df_chirp (self, field, -1.0);
  _airy_ff_transform (field, airy_element_get_double (self, "f"), airy_element_get_double (self, "n"),
                      inverse, plane->threads);
  if (!inverse)
    df_chirp (self, field, 1.0);
  return TRUE;
}

/* ff-lens and df-lens as device operations: pupil (and chirp) factor,
 * centred transform with its constant, chirp factor. */
static gboolean
lens_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  gboolean df = g_str_equal (airy_element_get_type_name (self), "df-lens");
  gboolean inverse = airy_element_get_boolean (self, "inverse");
  double f = airy_element_get_double (self, "f");
  double n = airy_element_get_double (self, "n");
  AiryOp *op;
  guint l;

  if (airy_element_get_double (self, "na") > 0.0 || (df && inverse))
    {
      _airy_field_fill_ones (field);
      _airy_lens_apply_pupil (self, field);
      if (df && inverse)
        df_chirp (self, field, -1.0);
      g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
    }
  op = _airy_op_new (AIRY_OP_FFT, field);
  op->centred = TRUE;
  op->sign = inverse ? AIRY_FFT_BACKWARD : AIRY_FFT_FORWARD;
  op->scale = fftwf_alloc_complex (field->n_lambda);
  for (l = 0; l < field->n_lambda; l++)
    op->scale[l] = ff_factor (field, l, f, n, inverse);
  g_ptr_array_add (ops, op);
  ff_advance (field, f, n);
  if (df && !inverse)
    {
      _airy_field_fill_ones (field);
      df_chirp (self, field, 1.0);
      g_ptr_array_add (ops, _airy_op_take_factor (AIRY_OP_MULTIPLY, field));
    }
  return TRUE;
}

static void
_airy_df_lens_class_init (AiryDfLensClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "df-lens", N_("DF lens (object at distance d)"),
                                   AIRY_CATEGORY_LENS);
  element_class->check = ff_check;
  element_class->apply = df_apply;
  element_class->compile = lens_compile;
  install_lens_properties (G_OBJECT_CLASS (klass), TRUE);
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("d", N_("Distance"), N_("Distance of the input plane in front of the lens"), "µm",
                            -1e6, 1e6, 100.0, 0));
}

static void
_airy_df_lens_init (AiryDfLens *self)
{
}

/* ------------------------------------------------------------------------ */
/* thin-lens: exp(−iπ n r²/(λ f))                                           */

typedef struct { AiryElement parent; } AiryThinLens;
typedef struct { AiryElementClass parent_class; } AiryThinLensClass;
G_DEFINE_FINAL_TYPE (AiryThinLens, _airy_thin_lens, AIRY_TYPE_ELEMENT)

static gboolean
thin_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  if (!_airy_lens_check_na (self, ctx, error))
    return FALSE;
  ctx->n = airy_element_get_double (self, "n");
  return TRUE;
}

static gboolean
thin_apply (AiryElement *self, gpointer state, AiryField *field,
            const AiryPlane *plane, GError **error)
{
  double f = airy_element_get_double (self, "f");
  double n = airy_element_get_double (self, "n");
  guint l;

  _airy_lens_apply_pupil (self, field);
  for (l = 0; l < field->n_lambda; l++)
    _airy_field_multiply_quadratic_phase (field, l, airy_thin_lens_phase (1.0, n, field->lambda[l], f));
  return TRUE;
}

static void
_airy_thin_lens_class_init (AiryThinLensClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "thin-lens", N_("Thin lens"), AIRY_CATEGORY_LENS);
  element_class->elementwise = TRUE;
  element_class->check = thin_check;
  element_class->apply = thin_apply;
  install_lens_properties (G_OBJECT_CLASS (klass), FALSE);
}

static void
_airy_thin_lens_init (AiryThinLens *self)
{
}

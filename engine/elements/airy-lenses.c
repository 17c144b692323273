#define G_LOG_DOMAIN "airy-lenses"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-czt-private.h"
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

/* The ff-lens's output region (chirp-z transform): on when any of
 * output-shape, output-spacing, output-center-x/y differs from 0. */
static gboolean
ff_has_region (AiryElement *self)
{
  /* the df-lens shares the ff-lens's check and has no region */
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (self), "output-shape") == NULL)
    return FALSE;
  return airy_element_get_int (self, "output-shape") > 0 || airy_element_get_double (self, "output-spacing") > 0.0
         || airy_element_get_double (self, "output-center-x") != 0.0
         || airy_element_get_double (self, "output-center-y") != 0.0;
}

/* One axis of the region for wavelength lambda: n input pixels of spacing
 * d; the FFT's output spacing fλ/(n·N·d) unless output-spacing is set. */
static void
ff_region_axis (AiryElement *self, guint n_in, double d, double lambda, gboolean along_x,
                guint *m, double *step, double *centre)
{
  double f = airy_element_get_double (self, "f"), n = airy_element_get_double (self, "n");
  double spacing = airy_element_get_double (self, "output-spacing");
  int shape = airy_element_get_int (self, "output-shape");

  *m = shape > 0 ? (guint) shape : n_in;
  *step = spacing > 0.0 ? spacing : f * lambda / (n * n_in * d);
  *centre = airy_element_get_double (self, along_x ? "output-center-x" : "output-center-y");
}

/* The region must lie inside the FFT's field (beyond it the transform
 * repeats itself): samples [−⌊N/2⌋, N − 1 − ⌊N/2⌋] of its spacing. */
static gboolean
ff_check_region (AiryElement *self, AiryContext *ctx, GError **error)
{
  double f = airy_element_get_double (self, "f"), n = airy_element_get_double (self, "n");
  guint l, a;

  for (l = 0; l < ctx->spectrum->n; l++)
    for (a = 0; a < 2; a++)
      {
        double lambda = ctx->spectrum->wavelengths[l], d = a ? ctx->dx[l] : ctx->dy[l];
        guint n_in = a ? ctx->width : ctx->height, m;
        double step, c, lo, hi, du = f * lambda / (n * n_in * d);
        double field_lo = -(double) (n_in / 2) * du;
        double field_hi = (double) (n_in - 1 - n_in / 2) * du, tol = 1e-9 * du * n_in;

        ff_region_axis (self, n_in, d, lambda, a, &m, &step, &c);
        lo = c - (double) (m / 2) * step;
        hi = c + (double) (m - 1 - m / 2) * step;
        if (lo < field_lo - tol || hi > field_hi + tol)
          {
            g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                         _("%s.output-center-%s: the output region [%g, %g] µm (centre %g µm, %u pixels of "
                           "%g µm) must lie inside the lens's field [%g, %g] µm (λ = %g µm)"),
                         ctx->path, a ? "x" : "y", lo, hi, c, m, step, field_lo, field_hi, lambda);
            return FALSE;
          }
      }
  return TRUE;
}

static void
ff_region_advance_context (AiryElement *self, AiryContext *ctx)
{
  guint l, my = ctx->height, mx = ctx->width;

  for (l = 0; l < ctx->spectrum->n; l++)
    {
      double lambda = ctx->spectrum->wavelengths[l], c;

      ff_region_axis (self, ctx->height, ctx->dy[l], lambda, FALSE, &my, &ctx->dy[l], &c);
      ff_region_axis (self, ctx->width, ctx->dx[l], lambda, TRUE, &mx, &ctx->dx[l], &c);
    }
  ctx->height = my;
  ctx->width = mx;
  ctx->n = airy_element_get_double (self, "n");
}

/* u'(p) = c · Σ_x u(x) e^{∓2πi n x·p/(λf)} on the region's grid p, by the
 * chirp-z transform: the FF lens's transform sampled where the user asks. */
static void
ff_region_transform (AiryElement *self, AiryField *field)
{
  double f = airy_element_get_double (self, "f"), n = airy_element_get_double (self, "n");
  double s = airy_element_get_boolean (self, "inverse") ? -1.0 : 1.0;
  guint h = field->height, w = field->width, my = h, mx = w, l;
  gsize np = airy_field_plane_size (field), i, no;
  fftwf_complex *out = NULL;
  double *dy = g_new (double, field->n_lambda), *dx = g_new (double, field->n_lambda);

  for (l = 0; l < field->n_lambda; l++)
    {
      double lambda = field->lambda[l], cy, cx, k = 2.0 * AIRY_PI * n / (lambda * f);
      fftwf_complex c = ff_factor (field, l, f, n, s < 0);
      AiryCztAxis ay, ax;

      ff_region_axis (self, h, field->dy[l], lambda, FALSE, &my, &dy[l], &cy);
      ff_region_axis (self, w, field->dx[l], lambda, TRUE, &mx, &dx[l], &cx);
      no = (gsize) my * mx;
      if (out == NULL)
        out = fftwf_alloc_complex (field->n_lambda * no);
      ay = (AiryCztAxis) { h, my, s * k * field->dy[l] * dy[l], s * k * field->dy[l] * cy };
      ax = (AiryCztAxis) { w, mx, s * k * field->dx[l] * dx[l], s * k * field->dx[l] * cx };
      _airy_czt_2d (field->data + l * np, out + l * no, &ay, &ax);
      for (i = 0; i < no; i++)
        out[l * no + i] *= c;
    }
  airy_field_resize (field, my, mx);
  memcpy (field->data, out, field->n_lambda * (gsize) my * mx * sizeof (fftwf_complex));
  memcpy (field->dy, dy, field->n_lambda * sizeof (double));
  memcpy (field->dx, dx, field->n_lambda * sizeof (double));
  fftwf_free (out);
  g_free (dy);
  g_free (dx);
}

static gboolean
ff_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  if (!_airy_lens_check_na (self, ctx, error))
    return FALSE;
  if (ff_has_region (self))
    {
      if (!ff_check_region (self, ctx, error))
        return FALSE;
      ff_region_advance_context (self, ctx);
    }
  else
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
  if (ff_has_region (self))
    ff_region_transform (self, field);
  else
    _airy_ff_transform (field, airy_element_get_double (self, "f"), airy_element_get_double (self, "n"),
                        airy_element_get_boolean (self, "inverse"), plane->threads);
  return TRUE;
}

/* With an output region the lens runs on the host (APPLY: a chirp-z
 * transform has no device op; a backend without it hands it to the CPU). */
static gboolean
ff_compile (AiryElement *self, gpointer state, AiryField *field, GPtrArray *ops, GError **error)
{
  AiryOp *op;

  if (!ff_has_region (self))
    return lens_compile (self, state, field, ops, error);
  op = _airy_op_new (AIRY_OP_APPLY, field);
  op->element = self;
  op->state = state;
  op->dy = g_memdup2 (field->dy, field->n_lambda * sizeof (double));
  op->dx = g_memdup2 (field->dx, field->n_lambda * sizeof (double));
  ff_region_transform (self, field);
  op->height = field->height;
  op->width = field->width;
  g_ptr_array_add (ops, op);
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
  element_class->compile = ff_compile;
  install_lens_properties (G_OBJECT_CLASS (klass), TRUE);
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_int ("output-shape", N_("Output pixels"),
                         N_("Pixels of the output region on each axis (0: the grid's)"), 0, 65536, 0,
                         AIRY_PARAM_NEEDS_PLAN));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("output-spacing", N_("Output spacing"),
                            N_("Pixel spacing of the output region, by a chirp-z transform (0: the FFT's)"),
                            "µm", 0.0, 1e6, 0.0, 0));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("output-center-x", N_("Output centre x"), N_("Centre of the output region"),
                            "µm", -1e6, 1e6, 0.0, 0));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("output-center-y", N_("Output centre y"), N_("Centre of the output region"),
                            "µm", -1e6, 1e6, 0.0, 0));
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

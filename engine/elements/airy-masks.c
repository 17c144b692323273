#define G_LOG_DOMAIN "airy-masks"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"
#include "airy-image-file.h"
#include "airy-ops-private.h"
#include "airy-stack.h"

void
_airy_field_multiply_real (AiryField   *field,
                           AiryMaskFunc fn,
                           gpointer     user_data)
{
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;

      for (y = 0; y < field->height; y++)
        {
          double yy = airy_grid_coord (y, field->height, field->dy[l]);
          fftwf_complex *row = u + (gsize) y * field->width;

          for (x = 0; x < field->width; x++)
            {
              double xx = airy_grid_coord (x, field->width, field->dx[l]);
              row[x] *= (float) fn (xx, yy, l, user_data);
            }
        }
    }
}

void
_airy_context_check_pupil (AiryContext *ctx,
                           double       radius,
                           const char  *what)
{
  guint l;

  /* The grid spans (N/2)·dx from the axis; a larger pupil is cut off, and
   * one narrower than a pixel holds its centre sample alone (r² ≤ radius²). */
  for (l = 0; l < ctx->spectrum->n; l++)
    {
      double half = MIN (ctx->height / 2 * ctx->dy[l], ctx->width / 2 * ctx->dx[l]);
      double pixel = MIN (ctx->dy[l], ctx->dx[l]);

      if (radius > half * (1.0 + 1e-9))
        {
          airy_context_warn (ctx, _("%s: the %s (radius %.4g µm) is clipped by the grid "
                             "(half-width %.4g µm at λ = %g µm); enlarge the grid or its spacing"),
                             ctx->path, what, radius, half, ctx->spectrum->wavelengths[l]);
          return;
        }
      if (radius < pixel)
        {
          airy_context_warn (ctx, _("%s: the %s (radius %.4g µm) is smaller than a pixel of the grid "
                             "(%.4g µm at λ = %g µm): only its centre sample passes; sample it finer"),
                             ctx->path, what, radius, pixel, ctx->spectrum->wavelengths[l]);
          return;
        }
    }
}

/* x to four significant digits, rounded down: a bound "≤ x" that holds */
static double
floor_4 (double x)
{
  double unit = pow (10.0, floor (log10 (x)) - 3);

  return floor (x / unit * (1.0 + 1e-12)) * unit;
}

char *
_airy_context_sampling_advice (const AiryContext *ctx,
                               double             factor)
{
  double dx = MAX (ctx->dx[0], ctx->dy[0]), finer;
  guint n = MAX (ctx->height, ctx->width), need;

  if (ctx->camera_grid)
    /* the pupil's pixel is f_tube·λ/(n·N·s): N times factor */
    /* TRANSLATORS: the grid's side in pixels */
    return g_strdup_printf (_("use grid.shape ≥ %.0f²"), ceil (n * factor));
  /* finer pupil pixels, and as many as hold the pupil across */
  finer = floor_4 (dx / factor);
  need = (guint) ceil (2.0 * ctx->pupil_radius / finer);
  if (need > n)
    /* TRANSLATORS: the grid spacing in µm, the grid's side in pixels */
    return g_strdup_printf (_("use grid.spacing ≤ %.4g µm and grid.shape ≥ %u² (to hold the pupil)"), finer, need);
  /* TRANSLATORS: the grid spacing in µm, the grid's side in pixels */
  return g_strdup_printf (_("use grid.spacing ≤ %.4g µm on this %u² grid"), finer, n);
}

void
_airy_context_check_phase_step (AiryContext *ctx,
                                double       step,
                                const char  *what)
{
  g_autofree char *advice = NULL;

  if (!(step > AIRY_PI))
    return;
  /* a phase that changes linearly across a pixel: pixels step/π times finer
   * bring it to π, and 10 % more keep it below */
  advice = _airy_context_sampling_advice (ctx, 1.1 * step / AIRY_PI);
  airy_context_warn (ctx, _("%s: the %s changes by %.3g rad between neighbouring pupil pixels, more than π: the "
                            "grid cannot sample it (the PSF wraps around); %s"), ctx->path, what, step, advice);
}

/* Applies an optional NA pupil (used by lenses): radius f·NA/n. */
static double
circle_fn (double x, double y, guint l, gpointer user_data)
{
  double r = *(double *) user_data;
  return airy_inside_circle (x * x + y * y, r) ? 1.0 : 0.0;
}

/* ------------------------------------------------------------------------ */
/* circular-pupil                                                           */

typedef struct { AiryElement parent; } AiryCircularPupil;
typedef struct { AiryElementClass parent_class; } AiryCircularPupilClass;
G_DEFINE_FINAL_TYPE (AiryCircularPupil, _airy_circular_pupil, AIRY_TYPE_ELEMENT)

static double
circular_radius (AiryElement *self)
{
  double na = airy_element_get_double (self, "na");

  if (na > 0.0)
    return airy_element_get_double (self, "f") * na / airy_element_get_double (self, "n");
  return airy_element_get_double (self, "diameter") / 2.0;
}

static gboolean
circular_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  double na = airy_element_get_double (self, "na"), n = airy_element_get_double (self, "n");

  if (na > n)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.na: must be in [0, n=%g], got %g"), ctx->path, n, na);
      if (error)
        airy_error_set_range (*error, &(AiryErrorRange) { .minimum = 0.0, .maximum = n, .value = na, .maximum_name = "n" });
      return FALSE;
    }
  if (na == 0.0 && airy_element_get_double (self, "diameter") <= 0.0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("%s.diameter: must be > 0 µm when na is 0, got %g"), ctx->path,
                   airy_element_get_double (self, "diameter"));
      return FALSE;
    }
  _airy_context_check_pupil (ctx, circular_radius (self), "circular pupil");
  return TRUE;
}

static gboolean
circular_apply (AiryElement *self, gpointer state, AiryField *field,
                const AiryPlane *plane, GError **error)
{
  double r = circular_radius (self);

  _airy_field_multiply_real (field, circle_fn, &r);
  return TRUE;
}

static void
_airy_circular_pupil_class_init (AiryCircularPupilClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "circular-pupil", N_("Circular pupil"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->check = circular_check;
  element_class->apply = circular_apply;
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("diameter", N_("Diameter"), N_("Aperture diameter (used when na is 0)"), "µm",
                            0.0, 1e6, 100.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("na", N_("NA"), N_("When > 0, the diameter is 2·f·NA/n"), NULL, 0.0, 4.0, 0.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("f", N_("Focal length"), N_("Focal length for the NA form"), "µm",
                            AIRY_FOCAL_LENGTH_MIN, 1e6, 100.0, 0));
  airy_element_class_install_property (object_class,
    airy_param_spec_double ("n", N_("Refractive index"), N_("Medium index for the NA form"), NULL,
                            1.0, 4.0, 1.0, 0));
}

static void
_airy_circular_pupil_init (AiryCircularPupil *self)
{
}

/* ------------------------------------------------------------------------ */
/* square-pupil and rectangular-pupil                                       */

typedef struct { AiryElement parent; } AirySquarePupil;
typedef struct { AiryElementClass parent_class; } AirySquarePupilClass;
G_DEFINE_FINAL_TYPE (AirySquarePupil, _airy_square_pupil, AIRY_TYPE_ELEMENT)

typedef struct { AiryElement parent; } AiryRectangularPupil;
typedef struct { AiryElementClass parent_class; } AiryRectangularPupilClass;
G_DEFINE_FINAL_TYPE (AiryRectangularPupil, _airy_rectangular_pupil, AIRY_TYPE_ELEMENT)

static double
rect_fn (double x, double y, guint l, gpointer user_data)
{
  const double *wh = user_data;
  return (fabs (x) <= wh[0] / 2.0 && fabs (y) <= wh[1] / 2.0) ? 1.0 : 0.0;
}

static gboolean
square_apply (AiryElement *self, gpointer state, AiryField *field,
              const AiryPlane *plane, GError **error)
{
  double wh[2];

  wh[0] = wh[1] = airy_element_get_double (self, "width");
  _airy_field_multiply_real (field, rect_fn, wh);
  return TRUE;
}

static gboolean
rectangular_apply (AiryElement *self, gpointer state, AiryField *field,
                   const AiryPlane *plane, GError **error)
{
  double wh[2] = { airy_element_get_double (self, "width"), airy_element_get_double (self, "height") };

  _airy_field_multiply_real (field, rect_fn, wh);
  return TRUE;
}

static void
_airy_square_pupil_class_init (AirySquarePupilClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "square-pupil", N_("Square pupil"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->apply = square_apply;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("width", N_("Width"), N_("Side of the square aperture"), "µm",
                            0.0, 1e6, 100.0, AIRY_PARAM_EXCLUSIVE_MIN));
}

static void
_airy_square_pupil_init (AirySquarePupil *self)
{
}

static void
_airy_rectangular_pupil_class_init (AiryRectangularPupilClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "rectangular-pupil", N_("Rectangular pupil"),
                                   AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->apply = rectangular_apply;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("width", N_("Width"), N_("Aperture width (x)"), "µm",
                            0.0, 1e6, 100.0, AIRY_PARAM_EXCLUSIVE_MIN));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("height", N_("Height"), N_("Aperture height (y)"), "µm",
                            0.0, 1e6, 50.0, AIRY_PARAM_EXCLUSIVE_MIN));
}

static void
_airy_rectangular_pupil_init (AiryRectangularPupil *self)
{
}

/* ------------------------------------------------------------------------ */
/* gaussian-pupil: amplitude exp(−r²/w²)                                    */

typedef struct { AiryElement parent; } AiryGaussianPupil;
typedef struct { AiryElementClass parent_class; } AiryGaussianPupilClass;
G_DEFINE_FINAL_TYPE (AiryGaussianPupil, _airy_gaussian_pupil, AIRY_TYPE_ELEMENT)

static double
gaussian_fn (double x, double y, guint l, gpointer user_data)
{
  double w = *(double *) user_data;
  return exp (-(x * x + y * y) / (w * w));
}

static gboolean
gaussian_pupil_apply (AiryElement *self, gpointer state, AiryField *field,
                      const AiryPlane *plane, GError **error)
{
  double w = airy_element_get_double (self, "waist");

  _airy_field_multiply_real (field, gaussian_fn, &w);
  return TRUE;
}

static void
_airy_gaussian_pupil_class_init (AiryGaussianPupilClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "gaussian-pupil", N_("Gaussian pupil"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->apply = gaussian_pupil_apply;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("waist", N_("Waist"), N_("Amplitude falls to 1/e at this radius"), "µm",
                            AIRY_FEATURE_MIN, 1e6, 50.0, 0));
}

static void
_airy_gaussian_pupil_init (AiryGaussianPupil *self)
{
}

/* ------------------------------------------------------------------------ */
/* amplitude-mask from an image file                                        */

typedef struct { AiryElement parent; } AiryAmplitudeMask;
typedef struct { AiryElementClass parent_class; } AiryAmplitudeMaskClass;
G_DEFINE_FINAL_TYPE (AiryAmplitudeMask, _airy_amplitude_mask, AIRY_TYPE_ELEMENT)

typedef struct { float *mask; guint h, w; } ImageState;

static void
image_state_free (gpointer p)
{
  ImageState *s = p;

  g_free (s->mask);
  g_free (s);
}

static gpointer
amplitude_mask_prepare (AiryElement *self, const AiryContext *ctx, GError **error)
{
  g_autofree char *prop = g_strdup_printf ("%s.file", ctx->path);
  ImageState *s = g_new0 (ImageState, 1);
  gsize i, n = (gsize) ctx->height * ctx->width;

  s->h = ctx->height;
  s->w = ctx->width;
  s->mask = _airy_load_mask_image (self, prop, airy_element_get_string (self, "file"),
                                   s->h, s->w, error);
  if (s->mask == NULL)
    {
      image_state_free (s);
      return NULL;
    }
  if (airy_element_get_boolean (self, "invert"))
    for (i = 0; i < n; i++)
      s->mask[i] = 1.0f - s->mask[i];
  /* chromatix's AmplitudeMask(is_binary) and ops.binarize: 1 above the threshold, else 0 */
  if (airy_element_get_boolean (self, "binarize"))
    {
      float t = (float) airy_element_get_double (self, "threshold");

      for (i = 0; i < n; i++)
        s->mask[i] = s->mask[i] > t ? 1.0f : 0.0f;
    }
  return s;
}

static gboolean
amplitude_mask_param_relevant (AiryElement *self, GParamSpec *pspec)
{
  if (g_str_equal (pspec->name, "threshold"))
    return airy_element_get_boolean (self, "binarize");
  return TRUE;
}

/* A file name is given: all a check on the UI thread asks of a mask file
 * (the run reads it, and reports what is wrong with it at the same path). */
gboolean
_airy_mask_file_named (AiryElement *self, const AiryContext *ctx, GError **error)
{
  const char *file = airy_element_get_string (self, "file");

  if (file == NULL || *file == '\0')
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_FILE, _("%s.file: no file given"), ctx->path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
amplitude_mask_check (AiryElement *self, AiryContext *ctx, GError **error)
{
  ImageState *s;

  if (ctx->no_files)
    return _airy_mask_file_named (self, ctx, error);
  /* Load once here so a missing or corrupt file is reported with the system,
   * not in the middle of a run. */
  s = amplitude_mask_prepare (self, ctx, error);

  if (s == NULL)
    return FALSE;
  image_state_free (s);
  return TRUE;
}

static gboolean
amplitude_mask_apply (AiryElement *self, gpointer state, AiryField *field,
                      const AiryPlane *plane, GError **error)
{
  ImageState *s = state;
  gsize np = airy_field_plane_size (field), i;
  guint l;

  for (l = 0; l < field->n_lambda; l++)
    for (i = 0; i < np; i++)
      field->data[l * np + i] *= s->mask[i];
  return TRUE;
}

static void
_airy_amplitude_mask_class_init (AiryAmplitudeMaskClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "amplitude-mask", N_("Amplitude mask"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->check = amplitude_mask_check;
  element_class->prepare = amplitude_mask_prepare;
  element_class->free_state = image_state_free;
  element_class->apply = amplitude_mask_apply;
  element_class->param_relevant = amplitude_mask_param_relevant;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_string ("file", N_("File"), N_("PNG or TIFF image stretched over the grid; values → [0, 1]"),
                            AIRY_PARAM_FILE));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_boolean ("invert", N_("Invert"), N_("Use 1 − value"), FALSE));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_boolean ("binarize", N_("Binarize"),
                             N_("Make the mask 0 or 1: 1 where its value (after invert) exceeds the threshold"),
                             FALSE));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("threshold", N_("Threshold"), N_("Values above it become 1, the rest 0"), NULL,
                            0.0, 1.0, 0.5, 0));
}

static void
_airy_amplitude_mask_init (AiryAmplitudeMask *self)
{
}

/* Tapered pupils, chromatix's absorbing boundaries: super-gaussian-pupil,
 * e^{−(r/w)^n}, and tukey-pupil, flat to the radius w/2·(extent/max
 * extent) and a raised cosine to 0 at the edge of the grid (ρ = ½ of the
 * extent along each axis). Pixelwise, on each wavelength's grid. */
#define G_LOG_DOMAIN "airy-tapered-pupils"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>

#include "airy-elements-private.h"

typedef struct { AiryElement parent; } AirySuperGaussianPupil;
typedef struct { AiryElementClass parent_class; } AirySuperGaussianPupilClass;
G_DEFINE_FINAL_TYPE (AirySuperGaussianPupil, _airy_super_gaussian_pupil, AIRY_TYPE_ELEMENT)

typedef struct { AiryElement parent; } AiryTukeyPupil;
typedef struct { AiryElementClass parent_class; } AiryTukeyPupilClass;
G_DEFINE_FINAL_TYPE (AiryTukeyPupil, _airy_tukey_pupil, AIRY_TYPE_ELEMENT)

static double
super_gaussian_fn (double x, double y, guint l, gpointer user_data)
{
  const double *p = user_data;

  return airy_super_gaussian (sqrt (x * x + y * y), p[0], p[1]);
}

static gboolean
super_gaussian_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  double p[2] = { airy_element_get_double (self, "width"), airy_element_get_double (self, "order") };

  _airy_field_multiply_real (field, super_gaussian_fn, p);
  return TRUE;
}

static void
_airy_super_gaussian_pupil_class_init (AirySuperGaussianPupilClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "super-gaussian-pupil", N_("Super-Gaussian pupil"),
                                   AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->apply = super_gaussian_apply;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("width", N_("Width"), N_("Amplitude falls to 1/e at this radius"), "µm",
                            AIRY_FEATURE_MIN, 1e6, 50.0, 0));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("order", N_("Order"), N_("Exponent n of e^{−(r/w)^n} (2: the Gaussian pupil)"), NULL,
                            0.5, 1000.0, 16.0, 0));
}

static void
_airy_super_gaussian_pupil_init (AirySuperGaussianPupil *self)
{
}

static gboolean
tukey_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  double w = airy_element_get_double (self, "width");
  gsize np = airy_field_plane_size (field);
  guint l, y, x;

  for (l = 0; l < field->n_lambda; l++)
    {
      double ey = field->height * field->dy[l], ex = field->width * field->dx[l];
      double alpha = w / MAX (ey, ex);
      fftwf_complex *u = field->data + l * np;

      for (y = 0; y < field->height; y++)
        {
          double yy = airy_grid_coord (y, field->height, field->dy[l]) / ey;

          for (x = 0; x < field->width; x++)
            {
              double xx = airy_grid_coord (x, field->width, field->dx[l]) / ex;

              u[(gsize) y * field->width + x] *= (float) airy_tukey (sqrt (xx * xx + yy * yy), alpha);
            }
        }
    }
  return TRUE;
}

static void
_airy_tukey_pupil_class_init (AiryTukeyPupilClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "tukey-pupil", N_("Tukey pupil"), AIRY_CATEGORY_MASK);
  element_class->elementwise = TRUE;
  element_class->apply = tukey_apply;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("width", N_("Width"),
                            N_("Diameter of the flat part along the grid's longer side (the taper fills the rest)"),
                            "µm", AIRY_FEATURE_MIN, 1e6, 50.0, 0));
}

static void
_airy_tukey_pupil_init (AiryTukeyPupil *self)
{
}

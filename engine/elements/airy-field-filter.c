#define G_LOG_DOMAIN "airy-field-filter"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <math.h>
#include <string.h>

#include "airy-elements-private.h"
#include "airy-error.h"

/* field-filter: chromatix's ops.gaussian_filter and ops.high_pass_filter on
 * the complex field. The kernel is chromatix's gaussian_kernel, e^{−j²/(2σ²)}
 * on the pixels |j| ≤ r = ⌊4σ + ½⌋ of each axis, normalised to sum 1, applied
 * as a linear convolution cropped to the field ("same", zero outside); the
 * high pass is the field minus that (a delta kernel minus the Gaussian). A
 * Gaussian is separable, so the 2-D kernel is the product of two 1-D ones
 * and the filter two passes of them. It runs on the host (no device op). */

typedef struct { AiryElement parent; } AiryFieldFilter;
typedef struct { AiryElementClass parent_class; } AiryFieldFilterClass;
G_DEFINE_FINAL_TYPE (AiryFieldFilter, _airy_field_filter, AIRY_TYPE_ELEMENT)

/* the 1-D kernel k[0 … 2r], normalised */
static double *
filter_kernel (double sigma, int *radius)
{
  int r = (int) (4.0 * sigma + 0.5), j;
  double *k = g_new (double, 2 * r + 1), sum = 0.0;

  for (j = -r; j <= r; j++)
    sum += k[j + r] = exp (-0.5 * (j / sigma) * (j / sigma));
  for (j = 0; j <= 2 * r; j++)
    k[j] /= sum;
  *radius = r;
  return k;
}

/* n values `step` apart, convolved in place with k (zero outside) */
static void
convolve_line (fftwf_complex *u, guint n, gsize step, const double *k, int r, double complex *tmp)
{
  int i, j;

  for (i = 0; i < (int) n; i++)
    {
      double complex s = 0.0;

      for (j = MAX (-r, -i); j <= r && i + j < (int) n; j++)
        s += k[j + r] * u[(gsize) (i + j) * step];
      tmp[i] = s;
    }
  for (i = 0; i < (int) n; i++)
    u[(gsize) i * step] = (fftwf_complex) tmp[i];
}

static gboolean
filter_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  double sigma = airy_element_get_double (self, "sigma");
  gboolean high_pass = airy_element_get_boolean (self, "high-pass");
  gsize np = airy_field_plane_size (field), i;
  g_autofree double complex *tmp = g_new (double complex, MAX (field->height, field->width));
  g_autofree fftwf_complex *low = g_new (fftwf_complex, np);
  g_autofree double *k = NULL;
  guint l, y, x;
  int r;

  k = filter_kernel (sigma, &r);
  for (l = 0; l < field->n_lambda; l++)
    {
      fftwf_complex *u = field->data + l * np;

      memcpy (low, u, np * sizeof (fftwf_complex));
      for (y = 0; y < field->height; y++)
        convolve_line (low + (gsize) y * field->width, field->width, 1, k, r, tmp);
      for (x = 0; x < field->width; x++)
        convolve_line (low + x, field->height, field->width, k, r, tmp);
      for (i = 0; i < np; i++)
        u[i] = high_pass ? u[i] - low[i] : low[i];
    }
  return TRUE;
}

static void
_airy_field_filter_class_init (AiryFieldFilterClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "field-filter", N_("Field filter (Gaussian or high pass)"),
                                   AIRY_CATEGORY_MASK);
  element_class->apply = filter_apply;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("sigma", N_("Sigma"), N_("Standard deviation of the Gaussian kernel (pixels)"),
                            NULL, 0.01, 1000.0, 1.0, 0));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_boolean ("high-pass", N_("High pass"),
                             N_("The field minus its Gaussian filter (chromatix's high_pass_filter)"), FALSE));
}

static void
_airy_field_filter_init (AiryFieldFilter *self)
{
}

/* ------------------------------------------------------------------------ */
/* scale-and-bias: chromatix's ScaleAndBias, u ← (u + bias)·scale on every
 * pixel and wavelength (affine, so not a factor: it runs on the host).     */

typedef struct { AiryElement parent; } AiryScaleAndBias;
typedef struct { AiryElementClass parent_class; } AiryScaleAndBiasClass;
G_DEFINE_FINAL_TYPE (AiryScaleAndBias, _airy_scale_and_bias, AIRY_TYPE_ELEMENT)

static gboolean
scale_bias_apply (AiryElement *self, gpointer state, AiryField *field, const AiryPlane *plane, GError **error)
{
  float scale = (float) airy_element_get_double (self, "scale");
  float bias = (float) airy_element_get_double (self, "bias");
  gsize n = (gsize) field->n_lambda * airy_field_plane_size (field), i;

  for (i = 0; i < n; i++)
    field->data[i] = (field->data[i] + bias) * scale;
  return TRUE;
}

static void
_airy_scale_and_bias_class_init (AiryScaleAndBiasClass *klass)
{
  AiryElementClass *element_class = AIRY_ELEMENT_CLASS (klass);

  airy_element_class_set_metadata (element_class, "scale-and-bias", N_("Scale and bias"), AIRY_CATEGORY_MASK);
  element_class->apply = scale_bias_apply;
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("scale", N_("Scale"), N_("Factor applied after the bias"), NULL, -1e6, 1e6, 1.0, 0));
  airy_element_class_install_property (G_OBJECT_CLASS (klass),
    airy_param_spec_double ("bias", N_("Bias"), N_("Added to the field's amplitude before the scale"), NULL,
                            -1e6, 1e6, 0.0, 0));
}

static void
_airy_scale_and_bias_init (AiryScaleAndBias *self)
{
}

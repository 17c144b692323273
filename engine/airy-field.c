#define G_LOG_DOMAIN "airy-field"

#include "config.h"

#include <glib/gi18n-lib.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "airy-field.h"
#include "airy-error.h"
#include "airy-physics.h"

AirySpectrum *
airy_spectrum_new (const double *wavelengths,
                   const double *weights,
                   guint         n,
                   GError      **error)
{
  g_autoptr(AirySpectrum) spectrum = NULL;
  double sum = 0.0;
  guint i;

  if (n == 0)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("spectrum.wavelengths: must hold at least one wavelength, got none"));
      return NULL;
    }
  if (n > AIRY_SPECTRUM_MAX_WAVELENGTHS)
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("spectrum.wavelengths: must have at most %u entries, got %u"), AIRY_SPECTRUM_MAX_WAVELENGTHS, n);
      return NULL;
    }

  spectrum = g_new0 (AirySpectrum, 1);
  spectrum->n = n;
  spectrum->wavelengths = g_new (double, n);
  spectrum->weights = g_new (double, n);
  for (i = 0; i < n; i++)
    {
      double w = weights ? weights[i] : 1.0;

      if (!(wavelengths[i] >= AIRY_WAVELENGTH_MIN && wavelengths[i] <= AIRY_WAVELENGTH_MAX))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("spectrum.wavelengths[%u]: must be in [%g, %g] µm, got %g"),
                       i, AIRY_WAVELENGTH_MIN, AIRY_WAVELENGTH_MAX, wavelengths[i]);
          if (error)
            airy_error_set_range (*error, &(AiryErrorRange) { .minimum = AIRY_WAVELENGTH_MIN, .maximum = AIRY_WAVELENGTH_MAX,
                                                              .value = wavelengths[i], .unit = "µm" });
          return NULL;
        }
      if (!(w >= 0.0 && w <= AIRY_WEIGHT_MAX))
        {
          g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                       _("spectrum.weights[%u]: must be in [0, %g], got %g"), i, AIRY_WEIGHT_MAX, w);
          if (error)
            airy_error_set_range (*error, &(AiryErrorRange) { .maximum = AIRY_WEIGHT_MAX, .value = w });
          return NULL;
        }
      spectrum->wavelengths[i] = wavelengths[i];
      spectrum->weights[i] = w;
      sum += w;
    }
  if (!(sum > 0.0))
    {
      g_set_error (error, AIRY_ERROR, AIRY_ERROR_INVALID_VALUE,
                   _("spectrum.weights: must not all be zero"));
      return NULL;
    }
  /* weights that sum to 1 already (a saved spectrum: the 16-digit text of
   * normalised weights sums to 1 within an ulp or two) stay as they are, so
   * that normalising is idempotent and a saved system reloads the same */
  if (fabs (sum - 1.0) > 4.0 * n * DBL_EPSILON)
    for (i = 0; i < n; i++)
      spectrum->weights[i] /= sum;

  return g_steal_pointer (&spectrum);
}

G_DEFINE_BOXED_TYPE (AirySpectrum, airy_spectrum, airy_spectrum_copy, airy_spectrum_free)

AirySpectrum *
airy_spectrum_copy (const AirySpectrum *spectrum)
{
  AirySpectrum *copy;

  g_return_val_if_fail (spectrum != NULL, NULL);

  copy = g_new0 (AirySpectrum, 1);
  copy->n = spectrum->n;
  copy->wavelengths = g_memdup2 (spectrum->wavelengths, sizeof (double) * spectrum->n);
  copy->weights = g_memdup2 (spectrum->weights, sizeof (double) * spectrum->n);
  return copy;
}

void
airy_spectrum_free (AirySpectrum *spectrum)
{
  if (spectrum == NULL)
    return;
  g_free (spectrum->wavelengths);
  g_free (spectrum->weights);
  g_free (spectrum);
}

AiryField *
airy_field_new (const AirySpectrum *spectrum,
                guint               height,
                guint               width,
                double              spacing)
{
  AiryField *field;
  guint l;

  g_return_val_if_fail (spectrum != NULL && spectrum->n > 0, NULL);
  g_return_val_if_fail (height > 0 && width > 0, NULL);

  field = g_new0 (AiryField, 1);
  field->n_lambda = spectrum->n;
  field->lambda = g_memdup2 (spectrum->wavelengths, sizeof (double) * spectrum->n);
  field->weight = g_memdup2 (spectrum->weights, sizeof (double) * spectrum->n);
  field->dy = g_new (double, spectrum->n);
  field->dx = g_new (double, spectrum->n);
  for (l = 0; l < spectrum->n; l++)
    field->dy[l] = field->dx[l] = spacing;
  airy_field_resize (field, height, width);
  return field;
}

void
airy_field_resize (AiryField *field,
                   guint      height,
                   guint      width)
{
  gsize n = (gsize) field->n_lambda * height * width;

  g_clear_pointer (&field->data, fftwf_free);
  g_clear_pointer (&field->scratch, fftwf_free);
  field->height = height;
  field->width = width;
  field->data = fftwf_alloc_complex (n);
  field->scratch = fftwf_alloc_complex (n);
  if (field->data == NULL || field->scratch == NULL)
    g_error ("out of memory allocating a %u × %u × %u field", field->n_lambda, height, width);
  memset (field->data, 0, n * sizeof (fftwf_complex));
}

/* Pads with zeros or crops about the centre pixel ⌊N/2⌋, keeping the content:
 * out[y][x] = in[y − ⌊H'/2⌋ + ⌊H/2⌋][x − ⌊W'/2⌋ + ⌊W/2⌋]. */
void
airy_field_resize_centred (AiryField *field,
                           guint      height,
                           guint      width)
{
  guint h = field->height, w = field->width, l, y;
  int oy = airy_centred_offset (height, h), ox = airy_centred_offset (width, w);
  gsize np = (gsize) h * w, nn = (gsize) height * width;
  fftwf_complex *src;

  if (h == height && w == width)
    return;
  src = fftwf_alloc_complex (np * field->n_lambda);
  memcpy (src, field->data, np * field->n_lambda * sizeof (fftwf_complex));
  airy_field_resize (field, height, width);
  for (l = 0; l < field->n_lambda; l++)
    for (y = 0; y < height; y++)
      {
        int sy = (int) y - oy, x0 = MAX (0, ox), x1 = MIN ((int) width, ox + (int) w);

        if (sy < 0 || sy >= (int) h || x1 <= x0)
          continue;
        memcpy (field->data + l * nn + (gsize) y * width + x0, src + l * np + (gsize) sy * w + (x0 - ox),
                (gsize) (x1 - x0) * sizeof (fftwf_complex));
      }
  fftwf_free (src);
}

void
airy_field_free (AiryField *field)
{
  if (field == NULL)
    return;
  g_clear_pointer (&field->data, fftwf_free);
  g_clear_pointer (&field->scratch, fftwf_free);
  g_free (field->lambda);
  g_free (field->weight);
  g_free (field->dy);
  g_free (field->dx);
  g_free (field);
}

void
airy_field_swap (AiryField *field)
{
  fftwf_complex *tmp = field->data;

  field->data = field->scratch;
  field->scratch = tmp;
}

gsize
airy_field_plane_size (const AiryField *field)
{
  return (gsize) field->height * field->width;
}

void
airy_field_zero (AiryField *field)
{
  memset (field->data, 0, airy_field_plane_size (field) * field->n_lambda * sizeof (fftwf_complex));
}

/* Σ |u_l|² dx dy for wavelength l. */
double
airy_field_power (const AiryField *field,
                  guint            l)
{
  gsize n = airy_field_plane_size (field), i;
  const fftwf_complex *u = field->data + l * n;
  double sum = 0.0;

  for (i = 0; i < n; i++)
    {
      float re = crealf (u[i]), im = cimagf (u[i]);
      sum += (double) re * re + (double) im * im;
    }
  return sum * field->dx[l] * field->dy[l];
}

/* I = Σ_l w_l |u_l|², written or added to out (H × W float32). */
void
airy_field_intensity (const AiryField *field,
                      float           *out,
                      gboolean         accumulate)
{
  gsize n = airy_field_plane_size (field), i;
  guint l;

  if (!accumulate)
    memset (out, 0, n * sizeof (float));
  for (l = 0; l < field->n_lambda; l++)
    {
      const fftwf_complex *u = field->data + l * n;
      float w = (float) field->weight[l];

      for (i = 0; i < n; i++)
        {
          float re = crealf (u[i]), im = cimagf (u[i]);
          out[i] += airy_intensity_term (w, re, im);
        }
    }
}

void
airy_roll_c2d (const fftwf_complex *in,
               fftwf_complex       *out,
               guint                h,
               guint                w,
               guint                sy,
               guint                sx)
{
  guint y;

  sy %= h;
  sx %= w;
  for (y = 0; y < h; y++)
    {
      const fftwf_complex *src = in + (gsize) y * w;
      fftwf_complex *dst = out + (gsize) ((y + sy) % h) * w;

      /* src[0 .. w−sx) → dst[sx .. w), src[w−sx .. w) → dst[0 .. sx) */
      memcpy (dst + sx, src, (w - sx) * sizeof (fftwf_complex));
      memcpy (dst, src + (w - sx), sx * sizeof (fftwf_complex));
    }
}

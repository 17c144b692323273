#pragma once

#include <complex.h>
#include <fftw3.h>
#include <glib.h>

G_BEGIN_DECLS

/**
 * AirySpectrum:
 * Vacuum wavelengths (µm) with weights normalised to sum 1.
 */
typedef struct
{
  guint   n;
  double *wavelengths;
  double *weights;
} AirySpectrum;

AirySpectrum *airy_spectrum_new        (const double *wavelengths,
                                        const double *weights,
                                        guint         n,
                                        GError      **error);
AirySpectrum *airy_spectrum_copy       (const AirySpectrum *spectrum);
void          airy_spectrum_free       (AirySpectrum *spectrum);

/**
 * AiryField:
 * A complex64 field u[l][y][x] for one batch element (one z plane): one H × W
 * grid per wavelength, each with its own spacing. data and scratch are
 * fftwf_malloc'd so FFTW's new-array execute functions apply to both.
 */
typedef struct
{
  guint          n_lambda;
  guint          height;
  guint          width;
  double        *lambda;   /* vacuum wavelength per l (µm) */
  double        *weight;   /* spectral weight per l, Σ = 1 */
  double        *dy;       /* spacing per l (µm) */
  double        *dx;
  fftwf_complex *data;
  fftwf_complex *scratch;
} AiryField;

AiryField *airy_field_new          (const AirySpectrum *spectrum,
                                    guint               height,
                                    guint               width,
                                    double              spacing);
void       airy_field_free         (AiryField *field);
void       airy_field_resize       (AiryField *field,
                                    guint      height,
                                    guint      width);
void       airy_field_resize_centred (AiryField *field,
                                      guint      height,
                                      guint      width);
void       airy_field_swap         (AiryField *field);
void       airy_field_zero         (AiryField *field);
gsize      airy_field_plane_size   (const AiryField *field);
double     airy_field_power        (const AiryField *field,
                                    guint            l);
void       airy_field_intensity    (const AiryField *field,
                                    float           *out,
                                    gboolean         accumulate);

/* Circular shift of an h × w complex plane: out[(y+sy) mod h][(x+sx) mod w] = in[y][x]. */
void       airy_roll_c2d           (const fftwf_complex *in,
                                    fftwf_complex       *out,
                                    guint                h,
                                    guint                w,
                                    guint                sy,
                                    guint                sx);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirySpectrum, airy_spectrum_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AiryField, airy_field_free)

G_END_DECLS

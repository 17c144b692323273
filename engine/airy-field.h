#pragma once

#ifndef __GI_SCANNER__
/* fftwf_complex is C99's float complex (g-ir-scanner cannot parse
 * <complex.h>; it sees FFTW's float[2], which has the same layout) */
#include <complex.h>
#endif
#include <fftw3.h>
#include <glib-object.h>

G_BEGIN_DECLS

/* The physical bounds of a spectrum (see airy-system.c's declarations):
 * from 10 nm (extreme ultraviolet) to 100 µm (far infrared), at most 1000
 * wavelengths (every nanometre from 0.2 to 1.2 µm); a run holds a field
 * per wavelength. */
#define AIRY_WAVELENGTH_MIN 0.01
#define AIRY_WAVELENGTH_MAX 100.0
#define AIRY_SPECTRUM_MAX_WAVELENGTHS 1000u
/* Weights are relative: twelve decades span any measured spectrum, and
 * 1000 of them still sum to a finite number. */
#define AIRY_WEIGHT_MAX 1e12

/**
 * AirySpectrum:
 * @n: the number of wavelengths
 * @wavelengths: (array length=n): vacuum wavelengths, µm
 * @weights: (array length=n): their weights, Σ = 1
 *
 * Vacuum wavelengths (µm) with weights normalised to sum 1.
 */
typedef struct
{
  guint   n;
  double *wavelengths;
  double *weights;
} AirySpectrum;

#define AIRY_TYPE_SPECTRUM (airy_spectrum_get_type ())
GType         airy_spectrum_get_type   (void);
/**
 * airy_spectrum_new:
 * @wavelengths: (array length=n): vacuum wavelengths, µm
 * @weights: (array length=n) (nullable): their weights (normalised here); %NULL: equal
 * @n: the number of wavelengths
 * @error: where a wrong value is told
 *
 * Returns: (transfer full): the spectrum, %NULL with @error set
 */
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

#pragma once

#include "airy-field.h"

G_BEGIN_DECLS

/* FFTW single-precision plans, cached by (kind, shape, threads) for the life
 * of the process; wisdom is loaded from and saved to the user cache directory.
 * Planning is serialised (FFTW's planner is not thread-safe); executing a
 * cached plan through the new-array functions is. */
typedef enum
{
  AIRY_FFT_FORWARD = FFTW_FORWARD,
  AIRY_FFT_BACKWARD = FFTW_BACKWARD,
} AiryFftSign;

fftwf_plan _airy_fft_plan_c2c  (guint       height,
                                guint       width,
                                AiryFftSign sign,
                                guint       threads);
fftwf_plan _airy_fft_plan_r2c  (guint height,
                                guint width,
                                guint threads);
fftwf_plan _airy_fft_plan_c2r  (guint height,
                                guint width,
                                guint threads);

/* Executes a 2-D c2c transform on any arrays (see airy-fft.c). */
void       _airy_fft_c2c_execute (guint          height,
                                  guint          width,
                                  AiryFftSign    sign,
                                  guint          threads,
                                  fftwf_complex *in,
                                  fftwf_complex *out);

/* howmany 1-D transforms of length, elements `stride` apart, transforms
 * `dist` apart (in place, or out of place with the same layout). */
fftwf_plan _airy_fft_plan_many (guint       length,
                                guint       howmany,
                                guint       stride,
                                guint       dist,
                                gboolean    in_place,
                                AiryFftSign sign,
                                guint       threads);
/* One real row of `length` to length/2 + 1 complex values, out of place. */
fftwf_plan _airy_fft_plan_r2c_1d (guint length,
                                  guint threads);
/* length/2 + 1 complex values to one real row of `length`, out of place
 * (the input is overwritten). */
fftwf_plan _airy_fft_plan_c2r_1d (guint length,
                                  guint threads);

/* Centred 2-D transform of every wavelength plane of field, in place:
 * u ← fftshift(DFT(ifftshift(u))) (unnormalised); uses field->scratch. */
void       _airy_fft_centred   (AiryField  *field,
                                AiryFftSign sign,
                                guint       threads);

/* Smallest 2·3·5·7-smooth integer ≥ n (FFTW's fast sizes). */
guint      _airy_fft_good_size (guint n);

void       _airy_fft_save_wisdom (void);
void       _airy_fft_shutdown    (void);
char      *_airy_fft_export_wisdom (void);
gboolean   _airy_fft_import_wisdom (const char *text);
const char *_airy_fft_wisdom_path (void);

G_END_DECLS

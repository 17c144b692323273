#pragma once

#include "airy-plan-private.h"

G_BEGIN_DECLS

/* The CPU fast path for the chain objective → pixelwise masks → FF lens
 * (every widefield PSF and every microscope PSF): the static part of the
 * pupil field is computed once, each plane only rotates the defocus phase,
 * the 2-D transform is pruned to the pupil's rows and |u|² is taken while
 * each block of columns is in cache. */
typedef struct _AiryPsfShared AiryPsfShared;
typedef struct _AiryPsfWorker AiryPsfWorker;

gboolean       _airy_psf_fast_supported (AiryPlan       *plan);
AiryPsfShared *_airy_psf_shared_new     (AiryPlan       *plan,
                                         GError        **error);
void           _airy_psf_shared_free    (AiryPsfShared  *shared);
AiryPsfWorker *_airy_psf_worker_new     (AiryPsfShared  *shared);
void           _airy_psf_worker_free    (AiryPsfWorker  *worker);
/* For device backends: the pupil field F(x, y) (centring modulation
 * included, so a plain forward DFT gives the centred one up to a phase per
 * output pixel) and the defocus phase per µm G, on the full grid of
 * wavelength l; |DFT(F·e^{i(z+z0)G})|²·scale_l is the plane's intensity. */
void           _airy_psf_shared_full    (AiryPsfShared  *shared,
                                         guint           l,
                                         fftwf_complex  *F,
                                         double         *G);
float          _airy_psf_shared_scale   (AiryPsfShared  *shared,
                                         guint           l);
double         _airy_psf_shared_z0      (AiryPsfShared  *shared);
/* rows [y0, y0 + rows) hold the pupil; F and G are zero on all others */
void           _airy_psf_shared_band    (AiryPsfShared  *shared,
                                         guint          *y0,
                                         guint          *rows);

/* Writes the weighted intensity of plane b (psf_height × psf_width). */
void           _airy_psf_worker_plane   (AiryPsfWorker  *worker,
                                         guint           b,
                                         double          z,
                                         float          *out);

/* The imaging convolution's forward transforms: h × w real planes in the
 * top-left of a ph × pw grid, real-to-complex. The first pass (rows; all-zero
 * rows skipped) fills one of `batch` slots; the second pass runs over blocks
 * of columns for all slots at once, so the accumulator and the sample's
 * spectrum come through the cache once per batch, not once per plane.
 * Spectra are kept transposed: column c of the ph × (pw/2 + 1) spectrum is
 * row c of an nh × ph array, so products accumulate contiguously. */
typedef struct _AiryConvWorker AiryConvWorker;

AiryConvWorker *_airy_conv_worker_new   (guint h,
                                         guint w,
                                         guint ph,
                                         guint pw,
                                         guint batch);
void            _airy_conv_worker_free  (AiryConvWorker      *conv);
guint           _airy_conv_worker_batch (AiryConvWorker      *conv);
/* First pass of a plane into slot. */
void            _airy_conv_rows         (AiryConvWorker      *conv,
                                         guint                slot,
                                         const float         *in);
/* Second pass of slots [0, n): with acc_t, acc_t += P̂·V̂ where V̂ is the
 * matching slot of vol (also stored in vol_out_t[slot] when that is given),
 * or mul_t[slot] when vol is NULL; without acc_t, the (single) spectrum is
 * written to out_t. */
void            _airy_conv_columns      (AiryConvWorker             *psf,
                                         AiryConvWorker             *vol,
                                         guint                       n,
                                         fftwf_complex              *out_t,
                                         fftwf_complex              *acc_t,
                                         const fftwf_complex *const *mul_t,
                                         fftwf_complex *const       *vol_out_t);

G_END_DECLS

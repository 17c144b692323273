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
/* Writes the weighted intensity of plane b (psf_height × psf_width). */
void           _airy_psf_worker_plane   (AiryPsfWorker  *worker,
                                         guint           b,
                                         double          z,
                                         float          *out);

/* The imaging convolution's forward transforms: an h × w real plane in the
 * top-left of a ph × pw grid, real-to-complex, with all-zero rows skipped in
 * the first pass. The spectrum (ph × (pw/2 + 1)) is kept transposed: its
 * column c is row c of out_t, nh × ph, so products accumulate contiguously:
 * with acc_t, acc_t += X·mul_t and nothing is stored. */
typedef struct _AiryConvWorker AiryConvWorker;

AiryConvWorker *_airy_conv_worker_new  (guint h,
                                        guint w,
                                        guint ph,
                                        guint pw);
void            _airy_conv_worker_free (AiryConvWorker      *conv);
void            _airy_conv_transform   (AiryConvWorker      *conv,
                                        const float         *in,
                                        fftwf_complex       *out_t,
                                        fftwf_complex       *acc_t,
                                        const fftwf_complex *mul_t);

G_END_DECLS

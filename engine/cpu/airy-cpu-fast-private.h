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

/* Zero-padded real-to-complex transform for the imaging convolution:
 * in (h × w) sits in the top-left of a ph × pw grid; out is ph × (pw/2+1).
 * All-zero rows skip the first pass. rowbuf holds pw floats. */
void           _airy_r2c_padded         (const float    *in,
                                         guint           h,
                                         guint           w,
                                         guint           ph,
                                         guint           pw,
                                         float          *rowbuf,
                                         fftwf_complex  *out);

G_END_DECLS

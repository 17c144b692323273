#pragma once

#include "airy-ops-private.h"

G_BEGIN_DECLS

/* The CPU backend's pieces (engine/cpu): the fused PSF kernels
 * (airy-cpu-psf.c), the convolution (airy-cpu-conv.c), the host resident
 * (airy-cpu-resident.c) and the driver (airy-cpu-backend.c). */

/* FUSED_PSF: the shared part (compact F and G over each band row's span,
 * the plan's z spacing) made once per device chunk from the op, and one
 * worker per thread (its phase rotation, band and column buffers, FFTW
 * plans): the 2-D transform is pruned to the pupil's rows and |u|² is taken
 * while each block of columns is in cache. */
typedef struct _AiryPsfShared AiryPsfShared;
typedef struct _AiryPsfWorker AiryPsfWorker;

AiryPsfShared *_airy_psf_shared_new     (const AiryOp   *fused,
                                         const double   *z,
                                         guint           n_planes);
void           _airy_psf_shared_free    (AiryPsfShared  *shared);
AiryPsfWorker *_airy_psf_worker_new     (AiryPsfShared  *shared);
void           _airy_psf_worker_free    (AiryPsfWorker  *worker);

/* Writes the weighted intensity of plane b (psf_height × psf_width). */
void           _airy_psf_worker_plane   (AiryPsfWorker  *worker,
                                         guint           b,
                                         double          z,
                                         float          *out);
/* One plane per wavelength (outs[l]: wavelength l's entries, weighted and
 * summed; they add up to _airy_psf_worker_plane's). */
void           _airy_psf_worker_plane_split (AiryPsfWorker *worker,
                                             guint          b,
                                             double         z,
                                             float *const  *outs);
guint          _airy_psf_shared_n_wavelengths (const AiryPsfShared *shared);

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

/* Plain C declarations of the CUDA launchers (no CUDA types), for the C
 * side of the module. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* I[i] (+)= Σ_l w_l |u_l[i]|² over n_lambda planes of n pixels, on stream. */
int airy_cuda_launch_intensity (const void  *field,
                                const float *weights,
                                unsigned     n_lambda,
                                size_t       n,
                                float       *out,
                                int          accumulate,
                                void        *stream);

#ifdef __cplusplus
}
#endif

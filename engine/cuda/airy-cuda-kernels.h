/* Plain C declarations of the CUDA launchers (no CUDA types), for the C
 * side of the module. Complex arrays are interleaved float pairs (float2);
 * every launcher enqueues on `stream` and returns a cudaError_t. */
#pragma once

#include <stddef.h>

#include "airy-physics.h"
#include "airy-fit-kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* field[b][i] = F[i] · exp(i·z[b]·G[i]) for b < batch, i < n */
int airy_cuda_launch_generate  (const void *F, const double *G, const double *z, unsigned batch,
                                size_t n, void *field, void *stream);
/* The fused PSF's batch (airy-cuda-layout.h): the band rows of nb planes
 * of L entries (F, G: L × rows × w, the pupil's rows only; G in double as
 * on the CPU), and the intensity out[b][y][x] = Σ_l scale_l |u_l|² (scale:
 * L values on the device; out may be NULL) and, with chan, each wavelength's
 * part chan[c][b][y][x] (C entries a wavelength). */
int airy_cuda_launch_generate_band (const void *F, const double *G, const double *z, unsigned L, unsigned nb,
                                    unsigned rows, unsigned w, void *band, void *stream);
int airy_cuda_launch_band_intensity (const void *u, const float *scale, unsigned L, unsigned C, unsigned nb,
                                     unsigned h, unsigned w, float *out, float *chan, void *stream);
/* acc[i] += in[b][i] summed over b (real planes) */
int airy_cuda_launch_sum_planes (const float *in, unsigned batch, size_t n, float *acc, void *stream);
/* pad[b] (ph × pw) = in[b] (h × w) in the top-left, zeros elsewhere */
int airy_cuda_launch_pad       (const float *in, unsigned h, unsigned w, unsigned batch,
                                float *pad, unsigned ph, unsigned pw, void *stream);
/* acc[i] += Σ_b P[b][i]·V[b or 0][i] over nspec values */
int airy_cuda_launch_mac       (const void *P, const void *V, int v_per_plane, unsigned batch,
                                size_t nspec, void *acc, void *stream);
/* image[y][x] = full[(y + cy)][(x + cx)] · norm */
int airy_cuda_launch_crop      (const float *full, unsigned pw, unsigned h, unsigned w,
                                unsigned cy, unsigned cx, float norm, float *image, void *stream);
/* one sample plane: the constant, or the beads (counter-based, as on the CPU) of plane z */
int airy_cuda_launch_fill      (float *plane, size_t n, float value, void *stream);
int airy_cuda_launch_beads     (float *plane, unsigned h, unsigned w, unsigned z, unsigned planes,
                                unsigned count, unsigned seed, float intensity, void *stream);

/* The element-by-element path, one plane of L wavelengths (L planes of
 * h × w, contiguous). */
/* out[l] = roll(in[l]) · scale[l] (scale: L complex values, or NULL for 1);
 * roll moves pixel (y, x) to ((y + sy) mod h, (x + sx) mod w) */
int airy_cuda_launch_roll_scale (const void *in, void *out, unsigned lambdas, unsigned h, unsigned w,
                                 unsigned sy, unsigned sx, const void *scale, void *stream);
/* u[l][i] *= factor[l][i] */
int airy_cuda_launch_multiply   (void *u, const void *factor, unsigned lambdas, size_t n, void *stream);
/* JONES: entry pairs (Ex, Ey) times their per-pixel Jones matrices (airy-jones.h) */
int airy_cuda_launch_jones      (void *u, const void *jones, unsigned pairs, size_t n, void *stream);
/* out (oh × ow per wavelength) = in (h × w) centred with zeros around, or its centre (oh ≤ h) */
int airy_cuda_launch_resize     (const void *in, unsigned h, unsigned w, void *out, unsigned oh, unsigned ow,
                                 unsigned lambdas, void *stream);
/* sources: a paraxial spherical wave and a Gaussian beam at distance z, per
 * wavelength with its spacing (lambda, dy, dx: L values each) */
int airy_cuda_launch_point      (void *u, unsigned lambdas, unsigned h, unsigned w, const double *lambda,
                                 const double *dy, const double *dx, double n, double z, double power, void *stream);
int airy_cuda_launch_gauss      (void *u, unsigned lambdas, unsigned h, unsigned w, const double *lambda,
                                 const double *dy, const double *dx, double n, double z, double waist,
                                 double power, double *sums, void *stream);
/* out[i] = Σ_l weight[l] |u[l][i]|² (weights: L values, device) */
int airy_cuda_launch_weighted_intensity (const void *u, const float *weights, unsigned lambdas, size_t n,
                                         float *out, void *stream);

/* the sensor: block sum, bilinear resampling, then the noise chain */
int airy_cuda_launch_block_sum (const float *in, unsigned h, unsigned w, unsigned factor,
                                float *out, unsigned oh, unsigned ow, void *stream);
int airy_cuda_launch_linear    (const float *in, unsigned h, unsigned w, double dy, double dx,
                                float *out, unsigned oh, unsigned ow, double ody, double odx,
                                double scale, void *stream);
int airy_cuda_launch_noise     (float *data, size_t n, const AiryNoiseParams *noise, void *stream);

/* The viewer's slots on a result kept on the device: `count` planes h × w.
 * section: out[z][j] = data[z][index][j] (XZ, j < w) or data[z][j][index]
 * (YZ, yz != 0, j < h); max_planes: out[i] = max(out[i] if accumulate,
 * max_z data[z][i]). */
int airy_cuda_launch_section    (const float *data, unsigned count, unsigned h, unsigned w, int yz,
                                 unsigned index, float *out, void *stream);
int airy_cuda_launch_max_planes (const float *data, unsigned count, size_t n, float *out, int accumulate,
                                 void *stream);
/* Statistics as the CPU's airy_values_stats(): the finite extremes per
 * block (partial[2b], partial[2b + 1], *blocks ≤ AIRY_CUDA_STATS_BLOCKS
 * blocks; the host takes min and max of those), and the histogram over
 * [lo, hi] with airy_histogram()'s bins (counts zeroed here). */
#define AIRY_CUDA_STATS_BLOCKS 256
int airy_cuda_launch_minmax     (const float *data, size_t n, float *partial, unsigned *blocks, void *stream);
int airy_cuda_launch_histogram  (const float *data, size_t n, float lo, float hi, unsigned bins,
                                 unsigned long long *counts, void *stream);

/* The fit's passes (airy-fit-kernels.h: these launch its bodies, one
 * thread per index; a's pointers are device pointers). field: X (nb × L
 * planes); loss: every pixel of nb planes, partial[3·block + j] += the
 * block's sums (the same blocks every launch: the host adds them up in a
 * fixed order, so a pass's loss does not depend on the schedule); adjoint:
 * M += the planes' terms. */
#define AIRY_CUDA_FIT_BLOCKS 512
int airy_cuda_launch_fit_field   (const AiryFitLossArgs *a, const void *base, const double *G, const double *zt,
                                  unsigned nb, void *X, void *stream);
int airy_cuda_launch_fit_loss    (const AiryFitLossArgs *a, const unsigned *k, unsigned nb, void *X, float *mu,
                                  double *partial, void *stream);
int airy_cuda_launch_fit_adjoint (const AiryFitLossArgs *a, unsigned nb, const void *base, const double *G,
                                  const double *zt, const void *X, double *M, void *stream);

#ifdef __cplusplus
}
#endif

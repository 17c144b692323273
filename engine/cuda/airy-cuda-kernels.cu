// CUDA kernels of the Airy backend module. Per-pixel physics comes from
// airy-physics.h, shared with the CPU backend (AIRY_HD = __host__ __device__),
// so the noise and the beads are the CPU's numbers.
#include <algorithm>
#include <cuda_runtime.h>

#include "airy-physics.h"
#include "airy-jones.h"
#include "airy-cuda-kernels.h"
#include "airy-cuda-layout.h"

namespace {

constexpr unsigned kThreads = 256;

inline unsigned
blocks_for (size_t n)
{
    return (unsigned) ((n + kThreads - 1) / kThreads);
}

__global__ void
generate_kernel (const float2 *__restrict__ F, const double *__restrict__ G,
                 const double *__restrict__ z, size_t n, float2 *__restrict__ field)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned b = blockIdx.y;
    if (i >= n)
        return;
    float2 f = F[i];
    float s, c;
    airy_defocus_cis (z[b], G[i], &s, &c);
    field[b * n + i] = make_float2 (f.x * c - f.y * s, f.x * s + f.y * c);
}

// The fused PSF's batch (airy-cuda-layout.h): every entry (wavelength,
// vectorial component) of every plane of a batch in one row-interleaved
// array, so one row and one column transform cover them all; the
// intensity sums the entries in one pass over the column transform's
// output.
__global__ void
generate_band_kernel (const float *__restrict__ F, const double *__restrict__ G,
                      const double *__restrict__ z, unsigned L, unsigned nb, unsigned rows, unsigned w,
                      float *__restrict__ band)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < (size_t) rows * L * nb * w)
        airy_band_generate_at (i, F, G, z, L, nb, rows, w, band);
}

__global__ void
band_intensity_kernel (const float *__restrict__ u, const float *__restrict__ scale, unsigned L, unsigned C,
                       unsigned nb, unsigned h, unsigned w, float *__restrict__ out, float *__restrict__ chan)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < (size_t) nb * h * w)
        airy_band_intensity_at (i, u, scale, L, C, nb, h, w, out, chan);
}

__global__ void
sum_planes_kernel (const float *__restrict__ in, unsigned batch, size_t n, float *__restrict__ acc)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = acc[i];
    for (unsigned b = 0; b < batch; b++)
        s += in[b * n + i];
    acc[i] = s;
}

__global__ void
pad_kernel (const float *__restrict__ in, unsigned h, unsigned w,
            float *__restrict__ pad, unsigned ph, unsigned pw)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned b = blockIdx.y;
    size_t np = (size_t) ph * pw;
    if (i >= np)
        return;
    unsigned y = (unsigned) (i / pw), x = (unsigned) (i % pw);
    pad[b * np + i] = (y < h && x < w) ? in[(size_t) b * h * w + (size_t) y * w + x] : 0.0f;
}

__global__ void
mac_kernel (const float2 *__restrict__ P, const float2 *__restrict__ V, int v_per_plane,
            unsigned batch, size_t n, float2 *__restrict__ acc)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float2 a = acc[i];
    for (unsigned b = 0; b < batch; b++) {
        float2 p = P[b * n + i];
        float2 v = V[(v_per_plane ? b : 0) * n + i];
        a.x += p.x * v.x - p.y * v.y;
        a.y += p.x * v.y + p.y * v.x;
    }
    acc[i] = a;
}

__global__ void
crop_kernel (const float *__restrict__ full, unsigned pw, unsigned h, unsigned w,
             unsigned cy, unsigned cx, float norm, float *__restrict__ image)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) h * w)
        return;
    image[i] = airy_conv_crop_at (full, pw, cy, cx, (unsigned) (i / w), (unsigned) (i % w), norm);
}

__global__ void
fill_kernel (float *plane, size_t n, float value)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        plane[i] = value;
}

// one thread per bead, as airy_plan_volume_plane draws them on the CPU
__global__ void
beads_kernel (float *plane, unsigned h, unsigned w, unsigned z, unsigned planes,
              unsigned count, unsigned seed, float intensity)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    unsigned bz, by, bx;
    airy_bead_position (seed, i, planes, h, w, &bz, &by, &bx);
    if (bz == z)
        atomicAdd (&plane[(size_t) by * w + bx], intensity);
}

__global__ void
block_sum_kernel (const float *__restrict__ in, unsigned w, unsigned f,
                  float *__restrict__ out, unsigned oh, unsigned ow)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) oh * ow)
        return;
    out[i] = airy_block_sum_at (in, w, f, (unsigned) (i / ow), (unsigned) (i % ow));
}

__global__ void
linear_kernel (const float *__restrict__ in, unsigned h, unsigned w, double dy, double dx,
               float *__restrict__ out, unsigned oh, unsigned ow, double ody, double odx, double scale)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) oh * ow)
        return;
    out[i] = airy_linear_resample_at (in, h, w, dy, dx, (unsigned) (i / ow), (unsigned) (i % ow), oh, ow, ody, odx,
                                      scale);
}

__global__ void
noise_kernel (float *data, size_t n, AiryNoiseParams p)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    data[i] = (float) airy_sensor_pixel (&p, data[i], i);
}

__global__ void
roll_scale_kernel (const float2 *__restrict__ in, float2 *__restrict__ out, unsigned h, unsigned w,
                   unsigned sy, unsigned sx, const float2 *__restrict__ scale)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned l = blockIdx.y;
    size_t n = (size_t) h * w;
    if (i >= n)
        return;
    unsigned y = (unsigned) (i / w), x = (unsigned) (i % w);
    float2 v = in[l * n + i];
    if (scale) {
        float2 c = scale[l];
        v = make_float2 (v.x * c.x - v.y * c.y, v.x * c.y + v.y * c.x);
    }
    out[l * n + (size_t) ((y + sy) % h) * w + (x + sx) % w] = v;
}

__global__ void
multiply_kernel (float2 *__restrict__ u, const float2 *__restrict__ f, size_t n)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned l = blockIdx.y;
    if (i >= n)
        return;
    float2 a = u[l * n + i], b = f[l * n + i];
    u[l * n + i] = make_float2 (a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// JONES: (Ex, Ey) = J·(Ex, Ey) on entry pair p (entries 2p, 2p + 1), J of
// pair p at factor[(4p + m)·n + i], m = xx, xy, yx, yy (airy-ops-jones.c)
__global__ void
jones_kernel (float2 *__restrict__ u, const float2 *__restrict__ J, size_t n)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned p = blockIdx.y;
    if (i >= n)
        return;
    const float2 *jp = J + (size_t) 4 * p * n + i;
    float2 *ex = u + (size_t) 2 * p * n + i, *ey = ex + n;
    float j[8] = { jp[0].x, jp[0].y, jp[n].x, jp[n].y, jp[2 * n].x, jp[2 * n].y, jp[3 * n].x, jp[3 * n].y };
    float e[4] = { ex->x, ex->y, ey->x, ey->y };
    airy_jones_apply_pixel (j, e);
    *ex = make_float2 (e[0], e[1]);
    *ey = make_float2 (e[2], e[3]);
}

// resizing about the centre pixel ⌊N/2⌋, as the CPU's pad and crop
__global__ void
resize_kernel (const float2 *__restrict__ in, unsigned h, unsigned w,
               float2 *__restrict__ out, unsigned oh, unsigned ow)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned l = blockIdx.y;
    if (i >= (size_t) oh * ow)
        return;
    int y = (int) (i / ow), x = (int) (i % ow);
    int sy = y - airy_centred_offset (oh, h), sx = x - airy_centred_offset (ow, w);
    float2 v = make_float2 (0.0f, 0.0f);
    if (sy >= 0 && sy < (int) h && sx >= 0 && sx < (int) w)
        v = in[(size_t) l * h * w + (size_t) sy * w + sx];
    out[(size_t) l * oh * ow + i] = v;
}

__global__ void
point_kernel (float2 *__restrict__ u, unsigned h, unsigned w, const double *lambda, const double *dy,
              const double *dx, double n, double z, double power)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned l = blockIdx.y;
    if (i >= (size_t) h * w)
        return;
    double yy = airy_grid_coord ((int) (i / w), (int) h, dy[l]);
    double xx = airy_grid_coord ((int) (i % w), (int) w, dx[l]);
    // |u| = 1 on every pixel, so Σ|u|²dxdy = h·w·dx·dy exactly
    double a = sqrt (power / ((double) h * w * dx[l] * dy[l]));
    double s, c;
    airy_sincos (airy_point_source_phase (xx, yy, n, lambda[l], z), &s, &c);
    u[(size_t) l * h * w + i] = make_float2 ((float) (a * c), (float) (a * s));
}

__global__ void
gauss_kernel (float2 *__restrict__ u, unsigned h, unsigned w, const double *lambda, const double *dy,
              const double *dx, double n, double z, double waist, double *sums)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned l = blockIdx.y;
    float p = 0.0f;
    if (i < (size_t) h * w) {
        double yy = airy_grid_coord ((int) (i / w), (int) h, dy[l]);
        double xx = airy_grid_coord ((int) (i % w), (int) w, dx[l]);
        double re, im;
        airy_gaussian_beam (xx, yy, n, lambda[l], z, waist, &re, &im);
        float2 v = make_float2 ((float) re, (float) im);
        u[(size_t) l * h * w + i] = v;
        p = v.x * v.x + v.y * v.y;
    }
    // per-block sum, then one atomic per block
    __shared__ float part[kThreads];
    part[threadIdx.x] = p;
    __syncthreads ();
    for (unsigned s2 = blockDim.x / 2; s2 > 0; s2 >>= 1) {
        if (threadIdx.x < s2)
            part[threadIdx.x] += part[threadIdx.x + s2];
        __syncthreads ();
    }
    if (threadIdx.x == 0)
        atomicAdd (&sums[l], (double) part[0]);
}

__global__ void
normalise_kernel (float2 *__restrict__ u, size_t n, const double *sums, const double *dy, const double *dx,
                  double power)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned l = blockIdx.y;
    if (i >= n)
        return;
    double p = sums[l] * dx[l] * dy[l];
    float s = p > 0.0 ? (float) sqrt (power / p) : 0.0f;
    float2 v = u[l * n + i];
    u[l * n + i] = make_float2 (v.x * s, v.y * s);
}

__global__ void
weighted_intensity_kernel (const float2 *__restrict__ u, const float *__restrict__ weights, unsigned lambdas,
                           size_t n, float *__restrict__ out)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = 0.0f;
    for (unsigned l = 0; l < lambdas; l++) {
        float2 v = u[l * n + i];
        s += airy_intensity_term (weights[l], v.x, v.y);
    }
    out[i] = s;
}

__global__ void
section_kernel (const float *__restrict__ data, unsigned count, unsigned h, unsigned w, int yz, unsigned index,
                float *__restrict__ out)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    unsigned len = yz ? h : w;
    if (i >= (size_t) count * len)
        return;
    unsigned z = (unsigned) (i / len), j = (unsigned) (i % len);
    const float *plane = data + (size_t) z * h * w;
    out[i] = yz ? plane[(size_t) j * w + index] : plane[(size_t) index * w + j];
}

__global__ void
max_planes_kernel (const float *__restrict__ data, unsigned count, size_t n, float *__restrict__ out, int accumulate)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float m = accumulate ? out[i] : data[i];
    for (unsigned z = accumulate ? 0 : 1; z < count; z++)
        m = fmaxf (m, data[(size_t) z * n + i]);
    out[i] = m;
}

__global__ void
minmax_kernel (const float *__restrict__ data, size_t n, float *__restrict__ partial)
{
    __shared__ float lo[kThreads], hi[kThreads];
    float a = INFINITY, b = -INFINITY;
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) {
        float v = data[i];
        if (isfinite (v)) {
            a = fminf (a, v);
            b = fmaxf (b, v);
        }
    }
    lo[threadIdx.x] = a;
    hi[threadIdx.x] = b;
    __syncthreads ();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            lo[threadIdx.x] = fminf (lo[threadIdx.x], lo[threadIdx.x + s]);
            hi[threadIdx.x] = fmaxf (hi[threadIdx.x], hi[threadIdx.x + s]);
        }
        __syncthreads ();
    }
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = lo[0];
        partial[2 * blockIdx.x + 1] = hi[0];
    }
}

// bins ≤ kSharedBins count in shared memory first
constexpr unsigned kSharedBins = 4096;

__global__ void
histogram_kernel (const float *__restrict__ data, size_t n, float lo, float hi, unsigned bins,
                  unsigned long long *__restrict__ counts)
{
    __shared__ unsigned local[kSharedBins];
    bool shared = bins <= kSharedBins;
    if (shared)
        for (unsigned k = threadIdx.x; k < bins; k += blockDim.x)
            local[k] = 0;
    __syncthreads ();
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) {
        float v = data[i];
        if (v >= lo && v <= hi) {
            // airy_histogram()'s bin, in the same float arithmetic
            unsigned k = min ((unsigned) ((v - lo) / (hi - lo) * bins), bins - 1);
            if (shared)
                atomicAdd (&local[k], 1u);
            else
                atomicAdd (&counts[k], 1ull);
        }
    }
    __syncthreads ();
    if (shared)
        for (unsigned k = threadIdx.x; k < bins; k += blockDim.x)
            if (local[k])
                atomicAdd (&counts[k], (unsigned long long) local[k]);
}

// The fit's passes: airy-fit-kernels.h's bodies, one thread per index.
__global__ void
fit_field_kernel (AiryFitLossArgs a, const float *__restrict__ base, const double *__restrict__ G,
                  const double *__restrict__ zt, size_t n, float *__restrict__ X)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        airy_fit_field_at (i, &a, base, G, zt, X);
}

__global__ void
fit_loss_kernel (AiryFitLossArgs a, const unsigned *__restrict__ k, size_t n, float *X, float *mu,
                 double *__restrict__ partial)
{
    __shared__ double s[3][kThreads];
    double acc[3] = { 0.0, 0.0, 0.0 };
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) {
        double t[3];
        airy_fit_loss_at (i, &a, k, X, mu, t);
        acc[0] += t[0];
        acc[1] += t[1];
        acc[2] += t[2];
    }
    for (unsigned j = 0; j < 3; j++)
        s[j][threadIdx.x] = acc[j];
    __syncthreads ();
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            for (unsigned j = 0; j < 3; j++)
                s[j][threadIdx.x] += s[j][threadIdx.x + h];
        __syncthreads ();
    }
    if (threadIdx.x == 0)
        for (unsigned j = 0; j < 3; j++)
            partial[3 * blockIdx.x + j] += s[j][0];
}

__global__ void
fit_adjoint_kernel (AiryFitLossArgs a, unsigned nb, const float *__restrict__ base, const double *__restrict__ G,
                    const double *__restrict__ zt, const float *__restrict__ X, size_t n, double *__restrict__ M)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        airy_fit_adjoint_at (i, &a, nb, base, G, zt, X, M);
}

} // namespace

extern "C" {

int
airy_cuda_launch_section (const float *data, unsigned count, unsigned h, unsigned w, int yz, unsigned index,
                          float *out, void *stream)
{
    size_t n = (size_t) count * (yz ? h : w);
    section_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (data, count, h, w, yz, index, out);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_max_planes (const float *data, unsigned count, size_t n, float *out, int accumulate, void *stream)
{
    max_planes_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (data, count, n, out, accumulate);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_minmax (const float *data, size_t n, float *partial, unsigned *blocks, void *stream)
{
    *blocks = (unsigned) std::max<size_t> (1, std::min<size_t> (AIRY_CUDA_STATS_BLOCKS, blocks_for (n)));
    minmax_kernel<<<*blocks, kThreads, 0, (cudaStream_t) stream>>> (data, n, partial);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_histogram (const float *data, size_t n, float lo, float hi, unsigned bins,
                            unsigned long long *counts, void *stream)
{
    unsigned blocks = (unsigned) std::max<size_t> (1, std::min<size_t> (AIRY_CUDA_STATS_BLOCKS, blocks_for (n)));
    cudaError_t e = cudaMemsetAsync (counts, 0, bins * sizeof (unsigned long long), (cudaStream_t) stream);
    if (e != cudaSuccess || bins == 0 || !(hi > lo))
        return (int) e;
    histogram_kernel<<<blocks, kThreads, 0, (cudaStream_t) stream>>> (data, n, lo, hi, bins, counts);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_roll_scale (const void *in, void *out, unsigned lambdas, unsigned h, unsigned w,
                             unsigned sy, unsigned sx, const void *scale, void *stream)
{
    dim3 grid (blocks_for ((size_t) h * w), lambdas);
    roll_scale_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> (
        (const float2 *) in, (float2 *) out, h, w, sy % h, sx % w, (const float2 *) scale);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_multiply (void *u, const void *factor, unsigned lambdas, size_t n, void *stream)
{
    dim3 grid (blocks_for (n), lambdas);
    multiply_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> ((float2 *) u, (const float2 *) factor, n);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_jones (void *u, const void *jones, unsigned pairs, size_t n, void *stream)
{
    dim3 grid (blocks_for (n), pairs);
    jones_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> ((float2 *) u, (const float2 *) jones, n);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_resize (const void *in, unsigned h, unsigned w, void *out, unsigned oh, unsigned ow,
                         unsigned lambdas, void *stream)
{
    dim3 grid (blocks_for ((size_t) oh * ow), lambdas);
    resize_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> ((const float2 *) in, h, w, (float2 *) out, oh, ow);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_point (void *u, unsigned lambdas, unsigned h, unsigned w, const double *lambda,
                        const double *dy, const double *dx, double n, double z, double power, void *stream)
{
    dim3 grid (blocks_for ((size_t) h * w), lambdas);
    point_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> ((float2 *) u, h, w, lambda, dy, dx, n, z, power);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_gauss (void *u, unsigned lambdas, unsigned h, unsigned w, const double *lambda,
                        const double *dy, const double *dx, double n, double z, double waist,
                        double power, double *sums, void *stream)
{
    dim3 grid (blocks_for ((size_t) h * w), lambdas);
    cudaError_t e = cudaMemsetAsync (sums, 0, lambdas * sizeof (double), (cudaStream_t) stream);
    if (e != cudaSuccess)
        return (int) e;
    gauss_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> ((float2 *) u, h, w, lambda, dy, dx, n, z, waist, sums);
    normalise_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> ((float2 *) u, (size_t) h * w, sums, dy, dx, power);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_weighted_intensity (const void *u, const float *weights, unsigned lambdas, size_t n,
                                     float *out, void *stream)
{
    weighted_intensity_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (
        (const float2 *) u, weights, lambdas, n, out);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_generate_band (const void *F, const double *G, const double *z, unsigned L, unsigned nb,
                                unsigned rows, unsigned w, void *band, void *stream)
{
    generate_band_kernel<<<blocks_for ((size_t) rows * L * nb * w), kThreads, 0, (cudaStream_t) stream>>> (
        (const float *) F, G, z, L, nb, rows, w, (float *) band);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_band_intensity (const void *u, const float *scale, unsigned L, unsigned C, unsigned nb,
                                 unsigned h, unsigned w, float *out, float *chan, void *stream)
{
    band_intensity_kernel<<<blocks_for ((size_t) nb * h * w), kThreads, 0, (cudaStream_t) stream>>> (
        (const float *) u, scale, L, C, nb, h, w, out, chan);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_generate (const void *F, const double *G, const double *z, unsigned batch,
                           size_t n, void *field, void *stream)
{
    dim3 grid (blocks_for (n), batch);
    generate_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> (
        (const float2 *) F, G, z, n, (float2 *) field);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_sum_planes (const float *in, unsigned batch, size_t n, float *acc, void *stream)
{
    sum_planes_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (in, batch, n, acc);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_pad (const float *in, unsigned h, unsigned w, unsigned batch,
                      float *pad, unsigned ph, unsigned pw, void *stream)
{
    dim3 grid (blocks_for ((size_t) ph * pw), batch);
    pad_kernel<<<grid, kThreads, 0, (cudaStream_t) stream>>> (in, h, w, pad, ph, pw);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_mac (const void *P, const void *V, int v_per_plane, unsigned batch,
                      size_t nspec, void *acc, void *stream)
{
    mac_kernel<<<blocks_for (nspec), kThreads, 0, (cudaStream_t) stream>>> (
        (const float2 *) P, (const float2 *) V, v_per_plane, batch, nspec, (float2 *) acc);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_crop (const float *full, unsigned pw, unsigned h, unsigned w,
                       unsigned cy, unsigned cx, float norm, float *image, void *stream)
{
    crop_kernel<<<blocks_for ((size_t) h * w), kThreads, 0, (cudaStream_t) stream>>> (
        full, pw, h, w, cy, cx, norm, image);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_fill (float *plane, size_t n, float value, void *stream)
{
    fill_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (plane, n, value);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_beads (float *plane, unsigned h, unsigned w, unsigned z, unsigned planes,
                        unsigned count, unsigned seed, float intensity, void *stream)
{
    cudaError_t e = cudaMemsetAsync (plane, 0, (size_t) h * w * sizeof (float), (cudaStream_t) stream);
    if (e != cudaSuccess || count == 0)
        return (int) e;
    beads_kernel<<<blocks_for (count), kThreads, 0, (cudaStream_t) stream>>> (
        plane, h, w, z, planes, count, seed, intensity);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_block_sum (const float *in, unsigned h, unsigned w, unsigned factor,
                            float *out, unsigned oh, unsigned ow, void *stream)
{
    (void) h;   // the output shape bounds the reads
    block_sum_kernel<<<blocks_for ((size_t) oh * ow), kThreads, 0, (cudaStream_t) stream>>> (
        in, w, factor, out, oh, ow);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_linear (const float *in, unsigned h, unsigned w, double dy, double dx,
                         float *out, unsigned oh, unsigned ow, double ody, double odx,
                         double scale, void *stream)
{
    linear_kernel<<<blocks_for ((size_t) oh * ow), kThreads, 0, (cudaStream_t) stream>>> (
        in, h, w, dy, dx, out, oh, ow, ody, odx, scale);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_noise (float *data, size_t n, const AiryNoiseParams *noise, void *stream)
{
    if (noise->noise == 0 && noise->exposure == 1.0 && noise->read_noise == 0.0 && noise->gain == 1.0
        && noise->offset == 0.0 && noise->full_well == 0.0 && noise->bits == 0)
        return (int) cudaSuccess;
    noise_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (data, n, *noise);
    return (int) cudaGetLastError ();
}

} // extern "C"

int
airy_cuda_launch_fit_field (const AiryFitLossArgs *a, const void *base, const double *G, const double *zt,
                            unsigned nb, void *X, void *stream)
{
    size_t n = (size_t) nb * a->L * a->h * a->w;
    fit_field_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (
        *a, (const float *) base, G, zt, n, (float *) X);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_fit_loss (const AiryFitLossArgs *a, const unsigned *k, unsigned nb, void *X, float *mu,
                           double *partial, void *stream)
{
    size_t n = (size_t) nb * a->h * a->w;
    unsigned blocks = (unsigned) std::max<size_t> (1, std::min<size_t> (AIRY_CUDA_FIT_BLOCKS, blocks_for (n)));
    fit_loss_kernel<<<blocks, kThreads, 0, (cudaStream_t) stream>>> (*a, k, n, (float *) X, mu, partial);
    return (int) cudaGetLastError ();
}

int
airy_cuda_launch_fit_adjoint (const AiryFitLossArgs *a, unsigned nb, const void *base, const double *G,
                              const double *zt, const void *X, double *M, void *stream)
{
    size_t n = (size_t) a->L * a->rows * a->w;
    fit_adjoint_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (
        *a, nb, (const float *) base, G, zt, (const float *) X, n, M);
    return (int) cudaGetLastError ();
}

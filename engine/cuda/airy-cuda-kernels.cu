// CUDA kernels of the Airy backend module. Per-pixel physics comes from
// airy-physics.h, shared with the CPU backend (AIRY_HD = __host__ __device__).
#include <cuda_runtime.h>

#include "airy-physics.h"
#include "airy-cuda-kernels.h"

namespace {

__global__ void
intensity_kernel (const float2 *__restrict__ field, const float *__restrict__ weights,
                  unsigned n_lambda, size_t n, float *__restrict__ out, int accumulate)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float sum = accumulate ? out[i] : 0.0f;
    for (unsigned l = 0; l < n_lambda; l++) {
        float2 u = field[l * n + i];
        sum += weights[l] * (u.x * u.x + u.y * u.y);
    }
    out[i] = sum;
}

} // namespace

extern "C" int
airy_cuda_launch_intensity (const void *field, const float *weights, unsigned n_lambda,
                            size_t n, float *out, int accumulate, void *stream)
{
    unsigned threads = 256;
    unsigned blocks = (unsigned) ((n + threads - 1) / threads);
    intensity_kernel<<<blocks, threads, 0, (cudaStream_t) stream>>> (
        (const float2 *) field, weights, n_lambda, n, out, accumulate);
    return (int) cudaGetLastError ();
}

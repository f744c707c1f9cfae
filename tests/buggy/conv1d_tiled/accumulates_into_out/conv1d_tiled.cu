// BUGGY SUBMISSION (harness test): conv1d_tiled / accumulates_into_out
//
// Bug: the kernel adds each product straight into out[i] (out[i] += ...) instead of summing in a
//      register and storing once, so it relies on `out` holding zeros on entry, which the
//      contract does not promise.
//
// Expected symptom: every case wrong. The grader fills `out` with a NaN pattern; float additions
//      to it give NaN everywhere, which alone would read as "the kernel read outside `in`". Run
//      again from an output of zeros, the launcher gives the right result (checked on integer
//      data), and the finding says that the kernel adds into `out` without setting it first.
//
// Otherwise identical to the reference: 1024 outputs per block, halo cells in shared memory,
// the mask copied to constant memory on every call.
#include <cuda_runtime.h>

namespace {

constexpr int TILE = 1024;
constexpr int MAX_MASK = 31;

__constant__ float c_mask[MAX_MASK];

__global__ void __launch_bounds__(TILE)
conv1d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, long long n,
                    int mask_width)
{
    __shared__ float tile[TILE + MAX_MASK - 1];   // tile[k] = in[tile_start - r + k]

    const int r = mask_width / 2;
    const int t = threadIdx.x;
    const long long tile_start = (long long)blockIdx.x * TILE;
    const long long i = tile_start + t;

    if (t < r) {
        const long long g = tile_start - r + t;
        tile[t] = (g >= 0) ? in[g] : 0.0f;
    }
    tile[r + t] = (i < n) ? in[i] : 0.0f;
    if (t < r) {
        const long long g = tile_start + TILE + t;
        tile[r + TILE + t] = (g < n) ? in[g] : 0.0f;
    }
    __syncthreads();

    if (i < n) {
        for (int j = 0; j < mask_width; ++j) {
            out[i] += c_mask[j] * tile[t + j];   // BUG: into whatever out[i] held on entry
        }
    }
}

}  // namespace

void conv1d_tiled(const float* in, const float* mask, float* out, int n, int mask_width)
{
    if (n <= 0 || mask_width < 1 || mask_width > MAX_MASK) {
        return;
    }
    cudaMemcpyToSymbol(c_mask, mask, sizeof(float) * mask_width);
    const unsigned int blocks = (unsigned int)(((long long)n + TILE - 1) / TILE);
    conv1d_tiled_kernel<<<blocks, TILE>>>(in, out, (long long)n, mask_width);
}

// BUGGY SUBMISSION (harness test): conv1d_tiled / clamped_ghosts
//
// Bug: ghost elements are clamped to the nearest array element (in[0] on the left,
//      in[n-1] on the right) instead of being 0.
//
// Expected symptom: for mask_width >= 3, outputs within r = mask_width/2 of either end of the
//      array are wrong: out[0..r-1] and out[n-r..n-1] (all of them when n <= 2r, e.g. n = 1),
//      each by a multiple of in[0] or in[n-1], so the integer cases fail unless that end value
//      is 0. Every interior output is right; no reads outside the input. Correct for
//      mask_width == 1.
//
// Otherwise identical to the reference: 1024 outputs per block, halo cells in shared memory.
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

    // BUG: ghost elements are clamped to in[0] / in[n-1] instead of 0.
    if (t < r) {
        long long g = tile_start - r + t;
        if (g < 0) g = 0;                  // should be: the value 0.0f
        if (g >= n) g = n - 1;
        tile[t] = in[g];
    }
    {
        const long long g = (i < n) ? i : n - 1;
        tile[r + t] = in[g];               // cells past the end: clamped as well
    }
    if (t < r) {
        long long g = tile_start + TILE + t;
        if (g >= n) g = n - 1;             // should be: the value 0.0f
        tile[r + TILE + t] = in[g];
    }
    __syncthreads();

    if (i < n) {
        float sum = 0.0f;
        for (int j = 0; j < mask_width; ++j) {
            sum += c_mask[j] * tile[t + j];
        }
        out[i] = sum;
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

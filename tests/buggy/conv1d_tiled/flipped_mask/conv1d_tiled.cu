// BUGGY SUBMISSION (harness test): conv1d_tiled / flipped_mask
//
// Bug: the mask is applied flipped: sum_j mask[mask_width-1-j] * in[i - r + j] (the
//      "true" convolution of signal processing) instead of the contract's correlation
//      sum_j mask[j] * in[i - r + j].
//
// Expected symptom: wrong almost everywhere for every non-symmetric mask with mask_width >= 3
//      (the first wrong index is near 0; nearly all elements wrong). Correct for mask_width == 1
//      and for symmetric masks, so the harness needs non-symmetric masks to catch it.
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

    // Left halo, interior, right halo (ghost elements are 0).
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
        float sum = 0.0f;
        for (int j = 0; j < mask_width; ++j) {
            sum += c_mask[mask_width - 1 - j] * tile[t + j];   // BUG: should be c_mask[j]
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

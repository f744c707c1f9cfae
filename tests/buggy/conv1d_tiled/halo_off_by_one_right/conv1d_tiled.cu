// BUGGY SUBMISSION (harness test): conv1d_tiled / halo_off_by_one_right
//
// Bug: the right halo is loaded one element short. Threads 0..r-2 load the right halo;
//      the last right-halo cell, tile[TILE + 2r - 1] = in[tile_start + TILE + r - 1], is set to 0
//      as if it were a ghost element. (Deterministic: the cell is written, just with 0.)
//
// Expected symptom: for mask_width >= 3, out[1024*b + 1023] (the LAST output of every tile b
//      whose right neighbour cell in[1024*b + 1023 + r] exists, i.e. < n) is wrong by
//      -mask[mask_width-1] * in[1024*b + 1023 + r]: one wrong element per 1024-element tile,
//      repeating in every tile, not only at the end of the array. Correct for mask_width == 1
//      (no halo) and whenever n < 1024 + r (no tile has a real last right-halo cell, e.g.
//      n = 1025 with mask_width = 31). Integer data makes the error exact: every case with
//      mask_width >= 3 and n >= 1024 + r fails (unless mask[mask_width-1] * in[...] is 0 for
//      every tile). Only ONE output per tile is wrong, not all r outputs near the tile's edge.
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

    // Left halo and interior as in the reference.
    if (t < r) {
        const long long g = tile_start - r + t;
        tile[t] = (g >= 0) ? in[g] : 0.0f;
    }
    tile[r + t] = (i < n) ? in[i] : 0.0f;
    // Right halo. BUG: only r - 1 cells are loaded; the last one is left as 0.
    if (t < r) {
        const long long g = tile_start + TILE + t;
        tile[r + TILE + t] = (g < n && t < r - 1) ? in[g] : 0.0f;   // should be: (g < n)
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

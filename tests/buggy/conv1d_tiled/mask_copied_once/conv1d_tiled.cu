// BUGGY SUBMISSION (harness test): conv1d_tiled / mask_copied_once
//
// Bug: the mask is copied to constant memory only on the first call (a static flag);
//      later calls keep using the first call's mask (and, for a wider mask_width than the first
//      call's, zeros beyond it).
//
// Expected symptom: the first case run in a runner process passes; later cases whose mask
//      differs from the first one fail with wrong values almost everywhere. Running a single
//      case alone (grade --case LABEL) passes, because then it is the first call: the harness
//      must run several cases with different masks in one process to catch this.
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
    // BUG: copies the mask only once; it changes between cases.
    static bool copied = false;
    if (!copied) {
        cudaMemcpyToSymbol(c_mask, mask, sizeof(float) * mask_width);
        copied = true;
    }

    const unsigned int blocks = (unsigned int)(((long long)n + TILE - 1) / TILE);
    conv1d_tiled_kernel<<<blocks, TILE>>>(in, out, (long long)n, mask_width);
}

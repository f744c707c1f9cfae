// Reference: tiled 1D convolution with a constant-memory mask (PMPP chapter 7).
//
// Tile size: each block computes TILE = 1024 consecutive outputs with 1024 threads. It loads its
// 1024 input elements plus r = mask_width/2 halo cells on each side into shared memory, so the
// shared tile holds TILE + mask_width - 1 floats (at most 1024 + 30).
//
//   out[i] = sum_{j=0}^{mask_width-1} mask[j] * in[i - r + j],   ghost elements (outside [0, n)) = 0
#include <cuda_runtime.h>

namespace {

constexpr int TILE = 1024;    // outputs per block == threads per block
constexpr int MAX_MASK = 31;  // largest mask_width

__constant__ float c_mask[MAX_MASK];  // filled by the launcher before every launch

__global__ void __launch_bounds__(TILE)
    conv1d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, long long n, int mask_width)
{
    // Shared tile layout:  [ left halo: r ][ this block's TILE elements ][ right halo: r ]
    //  tile[k] holds in[tile_start - r + k]  (0 when that index is a ghost element)
    __shared__ float tile[TILE + MAX_MASK - 1];

    const int r = mask_width / 2;
    const int t = threadIdx.x;
    const long long tile_start = (long long)blockIdx.x * TILE;  // first output of this block
    const long long i = tile_start + t;                         // this thread's output

    // Left halo: the r elements just before the tile (threads 0..r-1 load one each).
    if (t < r) {
        const long long g = tile_start - r + t;
        tile[t] = (g >= 0) ? in[g] : 0.0f;
    }
    // Interior: every thread loads the element at its own output position.
    tile[r + t] = (i < n) ? in[i] : 0.0f;
    // Right halo: the r elements just after the tile (threads 0..r-1 again).
    if (t < r) {
        const long long g = tile_start + TILE + t;
        tile[r + TILE + t] = (g < n) ? in[g] : 0.0f;
    }
    __syncthreads();

    if (i < n) {
        // in[i - r + j] sits at tile[(i - r + j) - (tile_start - r)] = tile[t + j].
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
    // The mask changes between calls: copy it (host -> constant memory) every time.
    cudaMemcpyToSymbol(c_mask, mask, sizeof(float) * mask_width);

    const unsigned int blocks = (unsigned int)(((long long)n + TILE - 1) / TILE);  // <= 2^21
    conv1d_tiled_kernel<<<blocks, TILE>>>(in, out, (long long)n, mask_width);
}

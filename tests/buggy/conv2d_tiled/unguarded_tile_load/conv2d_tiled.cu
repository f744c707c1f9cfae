// BUGGY SUBMISSION (harness test): conv2d_tiled / unguarded_tile_load
//
// Bug: the input tile is loaded without checking the image bounds: every cell reads
//      in[gr * width + gc] (signed), even for gr < 0, gr >= height, gc < 0, gc >= width.
//
// Expected symptom: reads outside the input, so the harness should report wrong outputs near
//      the image borders, NaN among them, and/or a CUDA illegal-address error:
//      - the halo rows of the first and last tile rows lie before in[0] / after in[h*w-1]. The
//        elements right next to the buffer are the harness's NaN guard zone (8192 elements each
//        side), so e.g. out[0][w-1] (reads in[-1]) and out[h-1][0] (reads in[h*w]) are NaN;
//        stored outputs of the first/last r rows whose reads lie further out than the guard
//        zone (wide images) get whatever lies there;
//      - the left/right halo columns of inner rows wrap into the neighbouring row (inside the
//        buffer), so the first/last r columns are wrong too (finite values);
//      - the last tile row loads up to 31 + r rows past the end of the image, far beyond the
//        guard zone for large images: depending on the allocation layout this is either
//        harmless garbage in outputs that are not stored, or an illegal-address error.
//      With mask_width == 1 every stored output is right (the out-of-image cells only feed
//      outputs that are not stored), unless the stray reads fault.
//
#include <cuda_runtime.h>

#include <algorithm>

namespace {

constexpr int TILE = 32;
constexpr int MAX_MASK = 15;
constexpr int MAX_IN_TILE = TILE + MAX_MASK - 1;
constexpr int MAX_GRID_Y = 65535;

__constant__ float c_mask[MAX_MASK * MAX_MASK];

__global__ void __launch_bounds__(TILE * TILE)
conv2d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, int height, int width,
                    int mask_width, int tile_rows)
{
    __shared__ float tile[MAX_IN_TILE * MAX_IN_TILE];

    const int r = mask_width / 2;
    const int in_dim = TILE + mask_width - 1;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    const int col0 = blockIdx.x * TILE;
    const int col = col0 + threadIdx.x;

    for (int tile_row = blockIdx.y; tile_row < tile_rows; tile_row += gridDim.y) {
        const int row0 = tile_row * TILE;
        const int row = row0 + threadIdx.y;

        for (int idx = tid; idx < in_dim * in_dim; idx += TILE * TILE) {
            const int ty = idx / in_dim;
            const int tx = idx % in_dim;
            const int gr = row0 - r + ty;
            const int gc = col0 - r + tx;
            // BUG: no bounds check; should be 0.0f for cells outside the image.
            tile[idx] = in[(long long)gr * width + gc];
        }
        __syncthreads();

        if (row < height && col < width) {
            const float* window = tile + threadIdx.y * in_dim + threadIdx.x;
            float sum = 0.0f;
            for (int j = 0; j < mask_width; ++j) {
                for (int k = 0; k < mask_width; ++k) {
                    sum += c_mask[j * mask_width + k] * window[j * in_dim + k];
                }
            }
            out[(size_t)row * width + col] = sum;
        }
        __syncthreads();
    }
}

}  // namespace

void conv2d_tiled(const float* in, const float* mask, float* out, int height, int width,
                  int mask_width)
{
    if (height <= 0 || width <= 0 || mask_width < 1 || mask_width > MAX_MASK) {
        return;
    }
    cudaMemcpyToSymbol(c_mask, mask, sizeof(float) * mask_width * mask_width);

    const int tile_cols = (int)(((long long)width + TILE - 1) / TILE);
    const int tile_rows = (int)(((long long)height + TILE - 1) / TILE);
    const dim3 block(TILE, TILE);
    const dim3 grid(tile_cols, std::min(tile_rows, MAX_GRID_Y));
    conv2d_tiled_kernel<<<grid, block>>>(in, out, height, width, mask_width, tile_rows);
}

// BUGGY SUBMISSION (harness test): conv2d_tiled / rows_cols_swapped
//
// Bug: rows and columns swap roles in the index arithmetic: image cell (row, col) is
//      addressed as in[col * height + row] and out[col * height + row] (column-major) instead of
//      row * width + col. Every index stays inside the buffers (a bijection onto 0..h*w-1), and
//      every output element is written exactly once.
//
// Expected symptom: wrong values (nearly all elements) for every non-square image other than
//      1 x N and N x 1, for which column-major and row-major addressing coincide; on a square
//      image the result is the image convolved with the TRANSPOSED mask, so it is wrong
//      exactly when the mask is not symmetric about its diagonal (mask[j][k] != mask[k][j]).
//      Correct for 1 x 1, 1 x N, N x 1, and for mask_width == 1 on any shape (a pointwise
//      product, applied to every element once whatever the addressing).
//
// Otherwise identical to the reference: 32 x 32 output tiles, (32 + mask_width - 1)^2 input
// tiles with halo cells in shared memory.
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
            // BUG: column-major addressing; should be in[(size_t)gr * width + gc].
            tile[idx] = (gr >= 0 && gr < height && gc >= 0 && gc < width)
                            ? in[(size_t)gc * height + gr]
                            : 0.0f;
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
            out[(size_t)col * height + row] = sum;   // BUG: should be row * width + col
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

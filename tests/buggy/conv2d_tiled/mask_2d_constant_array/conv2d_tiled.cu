// BUGGY SUBMISSION (harness test): conv2d_tiled / mask_2d_constant_array
//
// Bug: the mask lives in a 2D __constant__ array c_mask[15][15] (rows of MAX_MASK floats) but is
//      filled by one cudaMemcpyToSymbol of mask_width * mask_width floats, which puts mask row j
//      at flat position j * mask_width, not j * 15. The kernel reads c_mask[j][k], that is flat
//      weight j * 15 + k: the first row is right, row j >= 1 is weights 15 j to 15 j + mask_width - 1
//      of the mask, or whatever an earlier copy left (zeros here) past the copied ones. A pattern
//      met in public course repositories (a "MASK[MAX_MASK_WIDTH][MAX_MASK_WIDTH]" filled with one
//      flat copy, later rewritten by its author as a linearized array).
//
// Expected symptom: mask_width 1 passes; every larger mask gives wrong values almost everywhere.
//      The grader fits the mask the kernel used from the output: its first row is the case's,
//      the others are not, and for mask_width 5 (rows 1 and 2 partly inside the 25 copied weights)
//      the row length 15 is named.
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

__constant__ float c_mask[MAX_MASK][MAX_MASK];   // BUG: rows of MAX_MASK, not mask_width

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
            tile[idx] = (gr >= 0 && gr < height && gc >= 0 && gc < width)
                            ? in[(size_t)gr * width + gc]
                            : 0.0f;
        }
        __syncthreads();

        if (row < height && col < width) {
            const float* window = tile + threadIdx.y * in_dim + threadIdx.x;
            float sum = 0.0f;
            for (int j = 0; j < mask_width; ++j) {
                for (int k = 0; k < mask_width; ++k) {
                    sum += c_mask[j][k] * window[j * in_dim + k];
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
    // BUG: one flat copy into a 2D array whose rows are MAX_MASK floats long.
    cudaMemcpyToSymbol(c_mask, mask, sizeof(float) * mask_width * mask_width);

    const int tile_cols = (int)(((long long)width + TILE - 1) / TILE);
    const int tile_rows = (int)(((long long)height + TILE - 1) / TILE);
    const dim3 block(TILE, TILE);
    const dim3 grid(tile_cols, std::min(tile_rows, MAX_GRID_Y));
    conv2d_tiled_kernel<<<grid, block>>>(in, out, height, width, mask_width, tile_rows);
}

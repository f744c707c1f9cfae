// Reference: tiled 2D convolution with a constant-memory mask (PMPP chapter 7).
//
// Tile size: each block computes a 32 x 32 output tile with 32 x 32 threads (one output each).
// It first loads the input tile those outputs need, the output tile plus r = mask_width/2 halo
// cells on every side: (32 + mask_width - 1)^2 floats, at most 46 x 46, loaded cooperatively by
// all 1024 threads in a loop.
//
//   out[y][x] = sum_{j,k} mask[j*mask_width + k] * in[y - r + j][x - r + k]
//   row-major height x width image, ghost cells (outside the image) = 0
#include <cuda_runtime.h>

#include <algorithm>

namespace {

constexpr int TILE = 32;                          // output tile edge == block edge
constexpr int MAX_MASK = 15;                      // largest mask_width
constexpr int MAX_IN_TILE = TILE + MAX_MASK - 1;  // largest input tile edge (46)
constexpr int MAX_GRID_Y = 65535;                 // gridDim.y limit

__constant__ float c_mask[MAX_MASK * MAX_MASK];  // filled by the launcher before every launch

__global__ void __launch_bounds__(TILE* TILE) conv2d_tiled_kernel(const float* __restrict__ in, float* __restrict__ out,
                                                                  int height, int width, int mask_width, int tile_rows)
{
    // tile[ty * in_dim + tx] holds in[row0 - r + ty][col0 - r + tx] (0 for ghost cells).
    __shared__ float tile[MAX_IN_TILE * MAX_IN_TILE];

    const int r = mask_width / 2;
    const int in_dim = TILE + mask_width - 1;  // input tile edge: TILE plus r halo cells per side
    const int tid = threadIdx.y * TILE + threadIdx.x;
    const int col0 = blockIdx.x * TILE;  // first output column of this block's tiles
    const int col = col0 + threadIdx.x;  // this thread's output column

    // gridDim.y is capped at 65535, so a block walks down the image over several tile rows
    // (only images taller than 65535 * 32 rows need more than one).
    for (int tile_row = blockIdx.y; tile_row < tile_rows; tile_row += gridDim.y) {
        const int row0 = tile_row * TILE;    // first output row of this tile
        const int row = row0 + threadIdx.y;  // this thread's output row

        // Cooperative load: the 1024 threads walk the in_dim x in_dim input tile in row-major
        // order (consecutive threads read consecutive columns: coalesced).
        for (int idx = tid; idx < in_dim * in_dim; idx += TILE * TILE) {
            const int ty = idx / in_dim;
            const int tx = idx % in_dim;
            const int gr = row0 - r + ty;  // image row of this tile cell (may be < 0)
            const int gc = col0 - r + tx;  // image column (may be < 0 or >= width)
            tile[idx] =
                (gr >= 0 && gr < height && gc >= 0 && gc < width) ? in[(size_t)gr * width + gc] : 0.0f;  // ghost cell
        }
        __syncthreads();

        if (row < height && col < width) {
            // in[row - r + j][col - r + k] sits at tile[(threadIdx.y + j) * in_dim + threadIdx.x + k].
            const float* window = tile + threadIdx.y * in_dim + threadIdx.x;
            float sum = 0.0f;
            for (int j = 0; j < mask_width; ++j) {
                for (int k = 0; k < mask_width; ++k) {
                    sum += c_mask[j * mask_width + k] * window[j * in_dim + k];
                }
            }
            out[(size_t)row * width + col] = sum;
        }
        __syncthreads();  // everyone is done with the tile before the next iteration reloads it
    }
}

}  // namespace

void conv2d_tiled(const float* in, const float* mask, float* out, int height, int width, int mask_width)
{
    if (height <= 0 || width <= 0 || mask_width < 1 || mask_width > MAX_MASK) {
        return;
    }
    // The mask changes between calls: copy it (host -> constant memory) every time.
    cudaMemcpyToSymbol(c_mask, mask, sizeof(float) * mask_width * mask_width);

    const int tile_cols = (int)(((long long)width + TILE - 1) / TILE);
    const int tile_rows = (int)(((long long)height + TILE - 1) / TILE);
    const dim3 block(TILE, TILE);
    const dim3 grid(tile_cols, std::min(tile_rows, MAX_GRID_Y));
    conv2d_tiled_kernel<<<grid, block>>>(in, out, height, width, mask_width, tile_rows);
}

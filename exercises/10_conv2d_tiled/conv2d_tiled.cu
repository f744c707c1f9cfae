// Exercise conv2d_tiled: tiled 2D convolution with the mask in constant memory.
//
//   out[y][x] = sum_{j=0}^{mw-1} sum_{k=0}^{mw-1} mask[j*mw + k] * in[y - r + j][x - r + k]
//   mw = mask_width, r = mw / 2; the image is row-major height x width: in[y][x] = in[y*width + x];
//   ghost cells (outside the image) count as 0.
//
// `in` and `out` are device pointers; `mask` is a HOST pointer. See README.md.
// As handed out, this file compiles and runs but writes nothing to `out`.
#include <cuda_runtime.h>

#include <algorithm>

constexpr int TILE = 32;                          // output tile edge = block edge; your choice
constexpr int MAX_MASK = 15;                      // largest mask_width the grader uses
constexpr int MAX_IN_TILE = TILE + MAX_MASK - 1;  // largest input tile edge, halo included
static_assert(MAX_IN_TILE * MAX_IN_TILE * sizeof(float) <= 48 * 1024,
              "a static __shared__ array is limited to 48 KiB");

// The mask lives in constant memory: all threads of a warp read the same mask element at the
// same time, which the constant cache broadcasts in one access.
__constant__ float c_mask[MAX_MASK * MAX_MASK];

__global__ void conv2d_tiled_kernel(const float* in, float* out, int height, int width,
                                    int mask_width, int tile_rows)
{
    // TODO 1a: declare the shared input tile, halo included, e.g.
    //          __shared__ float tile[MAX_IN_TILE * MAX_IN_TILE];

    // gridDim.y is at most 65535, so each block walks down over tile rows (one iteration for
    // any image up to 65535 * 32 rows). Keep this loop, or handle tall images another way.
    for (int tile_row = blockIdx.y; tile_row < tile_rows; tile_row += gridDim.y) {
        // TODO 1b: load the input tile into shared memory (row stride in_dim):
        //   - this tile's first output is (row0, col0) = (tile_row * TILE, blockIdx.x * TILE);
        //   - the input tile is in_dim x in_dim with in_dim = TILE + mask_width - 1: the output
        //     tile plus r halo cells on every side; tile cell (ty, tx) holds image cell
        //     (row0 - r + ty, col0 - r + tx);
        //   - there are more input cells than threads: loop, e.g. over
        //     idx = tid, tid + TILE*TILE, ... < in_dim*in_dim with ty = idx / in_dim, tx = idx % in_dim;
        //   - a cell outside 0 <= row < height, 0 <= col < width is a ghost cell: store 0.0f and
        //     never read in[] there (the grader notices reads outside the input);
        //   - index the image with size_t: row * width can exceed 2^31.
        //   - __syncthreads() before computing.
        //
        // TODO 2: thread (threadIdx.y, threadIdx.x) computes out[row0 + threadIdx.y][col0 + threadIdx.x]
        //   when that is inside the image: in[row - r + j][col - r + k] is tile cell
        //   (threadIdx.y + j, threadIdx.x + k); multiply by c_mask[j * mask_width + k].
        //
        // TODO 3: __syncthreads() again before the next iteration overwrites the tile.
    }
}

void conv2d_tiled(const float* in, const float* mask, float* out, int height, int width,
                  int mask_width)
{
    if (height <= 0 || width <= 0) {
        return;
    }
    // TODO 0: copy the mask (mask_width * mask_width floats, host memory) into c_mask with
    //         cudaMemcpyToSymbol. Do it on EVERY call: the mask changes between cases.
    (void)mask;   // remove this line once you copy the mask

    const int tile_cols = (int)(((long long)width + TILE - 1) / TILE);    // blocks across (x: columns)
    const int tile_rows = (int)(((long long)height + TILE - 1) / TILE);   // tiles down (y: rows)
    const dim3 block(TILE, TILE);
    const dim3 grid(tile_cols, std::min(tile_rows, 65535));
    conv2d_tiled_kernel<<<grid, block>>>(in, out, height, width, mask_width, tile_rows);
}

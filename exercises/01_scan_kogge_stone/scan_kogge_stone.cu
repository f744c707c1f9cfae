// scan_kogge_stone: inclusive scan of each 1024-element section (see README.md).
//
//     out[i] = in[s] + in[s+1] + ... + in[i],   s = i - i % 1024
//
// Keep the launcher's name and signature exactly as they are. Putting your kernels and helpers
// in the anonymous namespace below keeps their names private to this file.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;   // elements per section = threads per block

__global__ void kogge_stone_scan_kernel(const float* in, float* out, int n) {
    // TODO 1: the global index of this thread's element. Block b scans elements
    //         [b * SECTION_SIZE, (b + 1) * SECTION_SIZE), thread t owns element t of it:
    //             i = blockIdx.x * SECTION_SIZE + threadIdx.x
    //         (compute it as size_t: for large n, int arithmetic can overflow).
    //
    // TODO 2: load in[i] into a __shared__ float array of SECTION_SIZE elements at position
    //         threadIdx.x; threads with i >= n store 0 instead (never read past the end of in).
    //
    // TODO 3: the Kogge-Stone steps, stride = 1, 2, 4, ..., 512: every thread with
    //         threadIdx.x >= stride adds the value at threadIdx.x - stride to its own.
    //         Careful: a thread must not overwrite its value while another thread may still
    //         need to read the old one in the same step. Either read into a register,
    //         __syncthreads(), then write (PMPP Fig. 11.3), or use two shared arrays and switch
    //         between them every step (double buffering). Also __syncthreads() before each
    //         step reads what the previous step wrote.
    //
    // TODO 4: store the result to out[i], only if i < n: writing past the end of out is an error.
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n) {
    if (n <= 0) return;
    // One block of SECTION_SIZE threads per section: ceil(n / SECTION_SIZE) blocks.
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, n);
}

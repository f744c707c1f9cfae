// scan_brent_kung: inclusive scan of each 2048-element section (see README.md).
//
//     out[i] = in[s] + in[s+1] + ... + in[i],   s = i - i % 2048
//
// Keep the launcher's name and signature exactly as they are. Putting your kernels and helpers
// in the anonymous namespace below keeps their names private to this file.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;               // threads per block
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;   // elements per section

__global__ void brent_kung_scan_kernel(const float* in, float* out, int n) {
    // TODO 1: block b scans the section starting at start = b * SECTION_SIZE (as size_t: for
    //         large n, int arithmetic can overflow). Thread t owns two elements of it:
    //             start + t   and   start + t + BLOCK_SIZE
    //         (consecutive threads touch consecutive addresses: both loads are coalesced).
    //
    // TODO 2: load both into a __shared__ float array of SECTION_SIZE elements, at positions
    //         t and t + BLOCK_SIZE; elements at or past n are loaded as 0.
    //
    // TODO 3: reduction tree (up-sweep), stride = 1, 2, 4, ..., BLOCK_SIZE:
    //             __syncthreads();
    //             index = (t + 1) * 2 * stride - 1;
    //             if (index < SECTION_SIZE) xy[index] += xy[index - stride];
    //
    // TODO 4: distribution tree (down-sweep), stride = SECTION_SIZE / 4, ..., 2, 1:
    //             __syncthreads();
    //             index = (t + 1) * 2 * stride - 1;
    //             if (index + stride < SECTION_SIZE) xy[index + stride] += xy[index];
    //
    // TODO 5: __syncthreads(), then store both elements back to out, each only if it is < n.
}

}  // namespace

void scan_brent_kung(const float* in, float* out, int n) {
    if (n <= 0) return;
    // One block of BLOCK_SIZE threads per 2048-element section: ceil(n / SECTION_SIZE) blocks.
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    brent_kung_scan_kernel<<<blocks, BLOCK_SIZE>>>(in, out, n);
}

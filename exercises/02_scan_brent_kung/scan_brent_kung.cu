// scan_brent_kung: Brent-Kung inclusive scan of each 2048-element section (see README.md).
//
//   out[i] = in[s] + in[s+1] + ... + in[i],   s = i - i % 2048,   0 <= i < n
//
// Keep this launcher's name and signature exactly (CONTRACT.md):
//   void scan_brent_kung(const float* in, float* out, int n)
// Rules: in and out are device pointers; never modify in; store only out[i] with i < n.
//        Default stream, no cudaMalloc, no CUB, Thrust or other library doing the scan.
//
// As handed out, this file compiles and runs but writes nothing to out: every case fails.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;              // threads per block
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;  // elements per section

__global__ void brent_kung_scan_kernel(const float* in, float* out, int n)
{
    // TODO 1: compute the first element of this block's section as size_t (32-bit products
    //         overflow); thread t owns two elements of it, BLOCK_SIZE apart:
    //           start = blockIdx.x * SECTION_SIZE
    //           start + t,   start + t + BLOCK_SIZE       // both loads coalesced
    //
    // TODO 2: load both into a __shared__ float array xy of SECTION_SIZE elements, at positions
    //         t and t + BLOCK_SIZE; elements at or past n are loaded as 0.
    //
    // TODO 3: the reduction tree (up-sweep), stride = 1, 2, 4, ..., BLOCK_SIZE:
    //           __syncthreads();
    //           index = (t + 1) * 2 * stride - 1;      // the right end of a pair 2*stride wide
    //           if (index < SECTION_SIZE) xy[index] += xy[index - stride];
    //
    // TODO 4: the distribution tree (down-sweep), stride = SECTION_SIZE / 4, ..., 2, 1:
    //           __syncthreads();
    //           index = (t + 1) * 2 * stride - 1;
    //           if (index + stride < SECTION_SIZE) xy[index + stride] += xy[index];
    //
    // TODO 5: __syncthreads(), then store both elements back to out, each only if it is < n.
}

}  // namespace

void scan_brent_kung(const float* in, float* out, int n)
{
    if (n <= 0) return;
    // One block of BLOCK_SIZE threads per section: ceil(n / SECTION_SIZE) blocks.
    const unsigned int blocks = static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    brent_kung_scan_kernel<<<blocks, BLOCK_SIZE>>>(in, out, n);
}

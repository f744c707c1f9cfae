// scan_kogge_stone: Kogge-Stone inclusive scan of each 1024-element section (see README.md).
//
//   out[i] = in[s] + in[s+1] + ... + in[i],   s = i - i % 1024,   0 <= i < n
//
// Keep this launcher's name and signature exactly (CONTRACT.md):
//   void scan_kogge_stone(const float* in, float* out, int n)
// Rules: in and out are device pointers; never modify in; store only out[i] with i < n.
//        Default stream, no cudaMalloc, no CUB, Thrust or other library doing the scan.
//
// As handed out, this file compiles and runs but writes nothing to out: every case fails.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;  // elements per section = threads per block

__global__ void kogge_stone_scan_kernel(const float* in, float* out, int n)
{
    // TODO 1: compute the index of this thread's element as size_t (32-bit products overflow):
    //           i = blockIdx.x * SECTION_SIZE + threadIdx.x   // block b scans [b*1024, (b+1)*1024)
    //
    // TODO 2: load in[i] into a __shared__ float array of SECTION_SIZE elements, at position
    //         threadIdx.x; a thread with i >= n stores 0 instead (never read past the end of in).
    //
    // TODO 3: the Kogge-Stone steps, stride = 1, 2, 4, ..., 512: every thread with
    //         threadIdx.x >= stride adds the value at threadIdx.x - stride to its own.
    //         A thread must not overwrite its value while another one may still read the old
    //         value in the same step: read into a register, __syncthreads(), then write
    //         (PMPP Fig. 11.3), or use two shared arrays (double buffering). Also
    //         __syncthreads() before each step reads what the previous step wrote.
    //
    // TODO 4: store the result to out[i], only if i < n.
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    // One block of SECTION_SIZE threads per section: ceil(n / SECTION_SIZE) blocks.
    const unsigned int blocks = static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, n);
}

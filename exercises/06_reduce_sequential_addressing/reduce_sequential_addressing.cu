// reduce_sequential_addressing: reduction 3, sequential addressing (see README.md).
//
//   out[0] = in[0] + in[1] + ... + in[n-1]   (doubles)
//
// Keep this launcher's name and signature exactly (CONTRACT.md):
//   void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch)
// Rules: all pointers are device pointers; never modify in, never read in[i] with i >= n;
//        partial sums go to scratch (n + 4096 doubles, contents unspecified on entry).
//        Accumulate in double. Default stream, no cudaMalloc, no CUB, Thrust or other library.
//
// As handed out, this file compiles and runs but never writes out[0]: every case fails.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned int BLOCK = 256;  // threads per block = elements per block; a power of two

// One block reduces BLOCK consecutive elements of in (past the end: 0.0) into partial[blockIdx.x].
__global__ void reduce_sequential_addressing_kernel(const double* in, double* partial, int n)
{
    // TODO 1: declare __shared__ double sdata[BLOCK]; let tid = threadIdx.x.
    //
    // TODO 2: load this thread's element, 0.0 when i >= n, into sdata[tid]; then __syncthreads():
    //           i = (size_t)blockIdx.x * blockDim.x + tid      // one element per thread
    //
    // TODO 3: the tree, with the stride halving from the middle of the block:
    //           for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    //               if (tid < s) sdata[tid] += sdata[tid + s];   // threads 0 .. s-1 work
    //               __syncthreads();                           // outside the if
    //           }
    //
    // TODO 4: thread 0 writes partial[blockIdx.x] = sdata[0].
}

}  // namespace

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch)
{
    if (n <= 0) return;
    // Pass 1: one partial sum per block, ceil(n / BLOCK) blocks, into scratch[0, blocks).
    const unsigned int blocks = static_cast<unsigned int>((static_cast<size_t>(n) + BLOCK - 1) / BLOCK);
    reduce_sequential_addressing_kernel<<<blocks, BLOCK>>>(in, scratch, n);

    // TODO 5: reduce the partials until one value is left. Each pass reads the previous pass's
    //         partials (count = its number of blocks) and writes ceil(count / BLOCK) new ones
    //         where it does not read: ping-pong between scratch[0 ..) and scratch[blocks ..).
    //         The pass that runs a single block writes into out instead (out[0] is its
    //         partial[0]); for n <= BLOCK, pass 1 is that pass. No cudaMalloc, no
    //         cudaDeviceSynchronize, no copies to the host.
    (void)out;  // remove this line once a pass writes out[0]
}

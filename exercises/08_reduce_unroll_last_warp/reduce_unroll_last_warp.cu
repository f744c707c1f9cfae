// reduce_unroll_last_warp: reduction 5, reduction 4 with the last warp unrolled (see README.md).
//
//   out[0] = in[0] + in[1] + ... + in[n-1]   (doubles)
//
// Keep this launcher's name and signature exactly (CONTRACT.md):
//   void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch)
// Rules: all pointers are device pointers; never modify in, never read in[i] with i >= n;
//        partial sums go to scratch (n + 4096 doubles, contents unspecified on entry).
//        Accumulate in double. Default stream, no cudaMalloc, no CUB, Thrust or other library.
//
// As handed out, this file compiles and runs but never writes out[0]: every case fails.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned int BLOCK = 256;                  // threads per block: a power of two, >= 64
constexpr unsigned int ELEMS_PER_BLOCK = 2 * BLOCK;  // each thread loads and adds two elements

// One block reduces ELEMS_PER_BLOCK consecutive elements of in (past the end: 0.0) into
// partial[blockIdx.x].
__global__ void reduce_unroll_last_warp_kernel(const double* in, double* partial, int n)
{
    // TODO 1: declare __shared__ double sdata[BLOCK]; let tid = threadIdx.x.
    //
    // TODO 2: as in reduction 4, add two elements while loading, then __syncthreads():
    //           i = (size_t)blockIdx.x * (2 * blockDim.x) + tid   // a block covers 2*blockDim.x
    //           sdata[tid] = in[i] + in[i + blockDim.x]           // each load guarded against n
    //
    // TODO 3: the block-wide tree only while more than one warp has work:
    //           for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    //               if (tid < s) sdata[tid] += sdata[tid + s];
    //               __syncthreads();
    //           }
    //
    // TODO 4: if (tid < 32), warp 0 reduces sdata[0 .. 63] without __syncthreads() and thread 0
    //         writes the sum to partial[blockIdx.x]. Since Volta the 32 lanes of a warp do NOT
    //         run in lockstep, so either use registers and shuffles:
    //           double v = sdata[tid] + sdata[tid + 32];
    //           v += __shfl_down_sync(0xffffffffu, v, 16);   // then 8, 4, 2, 1; lane 0 has the sum
    //         or a volatile pointer to sdata with __syncwarp() between every read and write:
    //           t = vs[tid] + vs[tid + 32]; __syncwarp(); vs[tid] = t; __syncwarp();   // 16 .. 1
}

}  // namespace

void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch)
{
    if (n <= 0) return;
    // Pass 1: one partial sum per block, ceil(n / ELEMS_PER_BLOCK) blocks, into scratch[0, blocks).
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + ELEMS_PER_BLOCK - 1) / ELEMS_PER_BLOCK);
    reduce_unroll_last_warp_kernel<<<blocks, BLOCK>>>(in, scratch, n);

    // TODO 5: reduce the partials until one value is left. Each pass reads the previous pass's
    //         partials (count = its number of blocks) and writes ceil(count / ELEMS_PER_BLOCK)
    //         new ones where it does not read: ping-pong between scratch[0 ..) and
    //         scratch[blocks ..). The pass that runs a single block writes into out instead
    //         (out[0] is its partial[0]); for n <= ELEMS_PER_BLOCK, pass 1 is that pass.
    //         No cudaMalloc, no cudaDeviceSynchronize, no copies to the host.
    (void)out;  // remove this line once a pass writes out[0]
}

// Exercise reduce_unroll_last_warp: reduction 5, reduction 4 with the last warp unrolled.
// Compute out[0] = in[0] + ... + in[n-1] (doubles), for any n from 1 to 2^30. See README.md.
//
// Layout: BLOCK threads per block, 2*BLOCK elements per block (each thread loads and adds two).
// This stub compiles and runs but never writes out[0]: the grader says "output never written".

#include <cuda_runtime.h>

#include <cstddef>

constexpr unsigned BLOCK = 256;                  // threads per block: a power of two, >= 64
constexpr unsigned ELEMS_PER_BLOCK = 2 * BLOCK;  // elements per block

// TODO A: the last warp. Either with shared memory, __syncwarp() between every read and every
//         write (since Volta the 32 lanes of a warp do NOT run in lockstep), e.g.
//           __device__ void warp_reduce(volatile double* sdata, unsigned tid) {
//             double t;
//             t = sdata[tid] + sdata[tid + 32]; __syncwarp(); sdata[tid] = t; __syncwarp();
//             t = sdata[tid] + sdata[tid + 16]; __syncwarp(); sdata[tid] = t; __syncwarp();
//             ... 8, 4, 2, 1
//           }
//         or with registers and shuffles:
//           double v = sdata[tid] + sdata[tid + 32];
//           v += __shfl_down_sync(0xffffffffu, v, 16);   ... 8, 4, 2, 1; lane 0 has the sum.

// One block reduces ELEMS_PER_BLOCK consecutive elements of `in` (elements at index >= n count
// as 0.0) and writes their sum to partial[blockIdx.x].
__global__ void reduce_unroll_last_warp_kernel(const double* in, double* partial, int n) {
  // TODO 1: declare `__shared__ double sdata[BLOCK];` and let tid = threadIdx.x.
  // TODO 2: as in reduction 4, each block covers 2*blockDim.x elements:
  //           size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + tid;
  //         add in[i] and in[i + blockDim.x], each guarded against n (past the end: 0.0),
  //         store the sum in sdata[tid], then __syncthreads().
  // TODO 3: the block-wide tree only while more than one warp has work:
  //           for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
  //             if (tid < s) sdata[tid] += sdata[tid + s];
  //             __syncthreads();
  //           }
  // TODO 4: if (tid < 32): warp 0 reduces sdata[0 .. 63] without __syncthreads() (TODO A),
  //         and thread 0 writes the block's sum to partial[blockIdx.x].
}

void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch) {
  // Pass 1: one partial sum per block, into scratch[0 .. blocks).
  const unsigned blocks = static_cast<unsigned>(
      (static_cast<long long>(n) + ELEMS_PER_BLOCK - 1) / ELEMS_PER_BLOCK);
  reduce_unroll_last_warp_kernel<<<blocks, BLOCK>>>(in, scratch, n);

  // TODO 5: keep reducing until one value is left. Each pass reads the previous pass's partials
  //         (count = the previous number of blocks) and writes new ones to a region of scratch
  //         that does not overlap the one it reads, e.g. ping-pong between scratch[0 ..) and
  //         scratch[blocks ..). The pass that runs a single block writes directly into out
  //         (out[0] is its partial[0]). If n <= ELEMS_PER_BLOCK, pass 1 already is that pass.
  //         No cudaMalloc, no cudaDeviceSynchronize, no copying to the host.
  (void)out;
}

// Exercise reduce_interleaved_bank_conflicts: reduction 2, interleaved addressing without
// divergence (but with shared-memory bank conflicts).
// Compute out[0] = in[0] + ... + in[n-1] (doubles), for any n from 1 to 2^30. See README.md.
//
// Layout: BLOCK threads per block, BLOCK elements per block (one element per thread).
// This stub compiles and runs but never writes out[0]: the grader says "output never written".

#include <cuda_runtime.h>

#include <cstddef>

constexpr unsigned BLOCK = 256;  // threads per block; keep it a power of two

// One block reduces BLOCK consecutive elements of `in` (elements at index >= n count as 0.0)
// and writes their sum to partial[blockIdx.x].
__global__ void reduce_interleaved_bank_conflicts_kernel(const double* in, double* partial, int n) {
  // TODO 1: declare `__shared__ double sdata[BLOCK];` and let tid = threadIdx.x.
  // TODO 2: the global index of this thread's element:
  //           size_t i = (size_t)blockIdx.x * blockDim.x + tid;
  //         load sdata[tid] = in[i] when i < n, otherwise 0.0. Then __syncthreads().
  // TODO 3: the tree. With stride s = 1, 2, 4, ..., blockDim.x/2, the *first* threads work:
  //           unsigned index = 2 * s * tid;
  //           if (index < blockDim.x) sdata[index] += sdata[index + s];
  //         and a __syncthreads() after every step (outside the if).
  // TODO 4: thread 0 writes partial[blockIdx.x] = sdata[0].
}

void reduce_interleaved_bank_conflicts(const double* in, double* out, int n, double* scratch) {
  // Pass 1: one partial sum per block, into scratch[0 .. blocks).
  const unsigned blocks = static_cast<unsigned>((static_cast<long long>(n) + BLOCK - 1) / BLOCK);
  reduce_interleaved_bank_conflicts_kernel<<<blocks, BLOCK>>>(in, scratch, n);

  // TODO 5: keep reducing until one value is left. Each pass reads the previous pass's partials
  //         (count = the previous number of blocks) and writes new ones to a region of scratch
  //         that does not overlap the one it reads, e.g. ping-pong between scratch[0 ..) and
  //         scratch[blocks ..). The pass that runs a single block writes directly into out
  //         (out[0] is its partial[0]). If n <= BLOCK, pass 1 already is that pass.
  //         No cudaMalloc, no cudaDeviceSynchronize, no copying to the host.
  (void)out;
}

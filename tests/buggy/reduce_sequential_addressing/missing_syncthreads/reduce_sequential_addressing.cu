// BUG (reduce_sequential_addressing/missing_syncthreads): both __syncthreads() are removed, the
// one after the load into shared memory and the one inside the tree loop. With 256 threads
// (8 warps) per block, a thread reads sdata[tid + s] that another warp has not stored yet
// (stale shared memory left by an earlier block) or has already updated in a later step.
// Without barriers the compiler is also free to keep sdata[tid] in a register across steps
// (nvcc 13.0 does) and to reorder the shared-memory loads.
//
// Expected symptom: wrong sums (sometimes NaN, from stale shared memory) on inputs spanning
// many blocks. A data race, so values change from run to run. Checked on an H200 (3 runs):
// n <= 64 always passed, 65 <= n <= 2049 failed on some cases and runs only, every case with
// n >= 4096 (65,537, 1,000,000, 4,125,000, 10,000,000, 2^27, ...) failed in every run.
// No crash, no guard-zone violation.
// 256 threads per block, 256 elements per block (reduction 3, sequential addressing).

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;             // threads per block
constexpr unsigned kElemsPerBlock = kBlock;  // elements per block

__global__ void __launch_bounds__(kBlock)
reduce_sequential_kernel(const double* __restrict__ in, double* __restrict__ partial, int n) {
  __shared__ double sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = (i < static_cast<size_t>(n)) ? in[i] : 0.0;
  // BUG: no __syncthreads() after the load.

  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {  // contiguous threads, consecutive addresses
      sdata[tid] += sdata[tid + s];
    }
    // BUG: no __syncthreads() between the steps of the tree.
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}

unsigned blocks_for(long long count) {
  return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch) {
  long long count = n > 0 ? n : 0;
  double* const region[2] = {scratch, scratch + blocks_for(count)};
  const double* src = in;
  for (int pass = 0;; ++pass) {
    unsigned blocks = blocks_for(count);
    if (blocks == 0) blocks = 1;  // n == 0 (outside the contract): one block writes 0.0
    double* dst = (blocks == 1) ? out : region[pass % 2];
    reduce_sequential_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count));
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

// BUG (reduce_interleaved_divergent/float_accumulator): the elements are converted to float and
// summed in float shared memory (every pass), only the block sums are stored back as double.
// Otherwise a faithful reduction 1 (interleaved addressing, tid % (2*s) == 0).
//
// Expected symptom: deterministic precision loss on fractional and mixed-magnitude data, from
// n = 2 on: each element alone is rounded to a relative 6e-8 and every add to float precision,
// far beyond a double-precision tolerance relative to sum |x| (magnitudes above ~3.4e38 become
// inf). Integer-valued data stays exact as long as every element and partial sum is an integer
// below 2^24 (small integers, e.g. in [-1000, 1000], pass at every size: checked on an H200),
// so the harness catches this on its fractional and mixed-magnitude cases.
// No crash, no guard-zone violation.
// 256 threads per block, 256 elements per block.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;             // threads per block
constexpr unsigned kElemsPerBlock = kBlock;  // elements per block

__global__ void __launch_bounds__(kBlock)
reduce_divergent_kernel(const double* __restrict__ in, double* __restrict__ partial, int n) {
  __shared__ float sdata[kBlock];  // BUG: float accumulator
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = (i < static_cast<size_t>(n)) ? static_cast<float>(in[i]) : 0.0f;
  __syncthreads();

  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) {  // divergent: lanes 0, 2s, 4s, ... of each warp work
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = static_cast<double>(sdata[0]);
}

unsigned blocks_for(long long count) {
  return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_interleaved_divergent(const double* in, double* out, int n, double* scratch) {
  long long count = n > 0 ? n : 0;
  double* const region[2] = {scratch, scratch + blocks_for(count)};
  const double* src = in;
  for (int pass = 0;; ++pass) {
    unsigned blocks = blocks_for(count);
    if (blocks == 0) blocks = 1;  // n == 0 (outside the contract): one block writes 0.0
    double* dst = (blocks == 1) ? out : region[pass % 2];
    reduce_divergent_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count));
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

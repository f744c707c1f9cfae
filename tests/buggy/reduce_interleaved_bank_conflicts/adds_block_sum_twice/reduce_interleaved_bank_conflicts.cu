// BUG (reduce_interleaved_bank_conflicts/adds_block_sum_twice): in the final pass over partial
// sums, thread 0 writes in[0] + sdata[0], where in[0] is the first partial, which the tree has
// already counted: one block's partial is added twice.
//
// Expected symptom: correct for n <= 256 (one pass, no partials). For n > 256 the result is off
// by exactly the first partial of the previous pass: the sum of in[0..255] when
// 256 < n <= 65536, of in[0..65535] when 65536 < n <= 2^24, of in[0..2^24-1] above. Deterministic;
// on integer data the difference is exact. No crash, no guard-zone violation.
// 256 threads per block, 256 elements per block (reduction 2, index = 2*s*tid).

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;             // threads per block
constexpr unsigned kElemsPerBlock = kBlock;  // elements per block

__global__ void __launch_bounds__(kBlock)
reduce_bank_conflicts_kernel(const double* __restrict__ in, double* __restrict__ partial, int n,
                             bool final_over_partials) {
  __shared__ double sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = (i < static_cast<size_t>(n)) ? in[i] : 0.0;
  __syncthreads();

  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;  // <= 2 * 128 * 255: no overflow
    if (index < blockDim.x) {            // contiguous threads work; strided (conflicting) addresses
      sdata[index] += sdata[index + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    // BUG: the final pass "seeds" its sum with the first partial, which the tree already added.
    partial[blockIdx.x] = final_over_partials ? in[0] + sdata[0] : sdata[0];
  }
}

unsigned blocks_for(long long count) {
  return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_interleaved_bank_conflicts(const double* in, double* out, int n, double* scratch) {
  long long count = n > 0 ? n : 0;
  double* const region[2] = {scratch, scratch + blocks_for(count)};
  const double* src = in;
  for (int pass = 0;; ++pass) {
    unsigned blocks = blocks_for(count);
    if (blocks == 0) blocks = 1;  // n == 0 (outside the contract): one block writes 0.0
    double* dst = (blocks == 1) ? out : region[pass % 2];
    const bool final_over_partials = blocks == 1 && pass > 0;
    reduce_bank_conflicts_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count),
                                                     final_over_partials);
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

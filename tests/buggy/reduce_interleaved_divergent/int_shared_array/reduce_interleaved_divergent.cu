// BUG (reduce_interleaved_divergent/int_shared_array): the shared array is declared int, as in
// reduction code written for int data (a float reduction with `__shared__ int` is met in public
// course repositories): each element is truncated toward 0 where it is stored, and the block
// sums are integers. Otherwise a faithful reduction 1 (interleaved addressing, tid % (2*s) == 0),
// every pass with the same kernel.
//
// Expected symptom: the integer cases pass (small integers survive an int exactly); the
// fractional cases give 0 (every value lies in [-1, 1)) and the mixed-magnitude cases the sum of
// the truncated values: the grader names the truncation. No crash, no guard-zone violation.
// 256 threads per block, 256 elements per block.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;             // threads per block
constexpr unsigned kElemsPerBlock = kBlock;  // elements per block

__global__ void __launch_bounds__(kBlock)
reduce_divergent_kernel(const double* __restrict__ in, double* __restrict__ partial, int n) {
  __shared__ int sdata[kBlock];  // BUG: int, the fractions are lost
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = (i < static_cast<size_t>(n)) ? in[i] : 0.0;
  __syncthreads();

  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) {  // divergent: lanes 0, 2s, 4s, ... of each warp work
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
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

// BUG (reduce_sequential_addressing/one_pass_early): the host loop stops one pass early. When the
// next pass would be the final one (a single block), it instead copies the first partial sum of
// the previous pass to out[0] with cudaMemcpyAsync and returns.
//
// Expected symptom: correct for n <= 256 (one pass). For 256 < n <= 65536, out[0] is the sum of
// the first block's 256 elements only; for 65536 < n <= 2^24 the sum of the first 65536
// elements; above, the sum of the first 2^24. Deterministic: a wrong sum for n > 256 (e.g.
// n = 257, 1023, 1025, 10,000,000), no crash, no guard-zone violation. Caveat: for
// n = 2^24 + 1 only in[2^24] is missed, which a tolerance can absorb on mixed-magnitude data
// (it did once on an H200); integer-valued data still catches it.
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
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {  // contiguous threads, consecutive addresses
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

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch) {
  long long count = n > 0 ? n : 0;
  double* const region[2] = {scratch, scratch + blocks_for(count)};
  const double* src = in;
  for (int pass = 0;; ++pass) {
    unsigned blocks = blocks_for(count);
    if (blocks == 0) blocks = 1;
    if (blocks == 1) {
      if (pass == 0) {  // n <= 256: the single pass is right
        reduce_sequential_kernel<<<1, kBlock>>>(src, out, static_cast<int>(count));
      } else {
        // BUG: the final pass (1 block over `count` partials) is skipped; only the first
        // partial of the previous pass is copied to out[0].
        cudaMemcpyAsync(out, src, sizeof(double), cudaMemcpyDeviceToDevice, 0);
      }
      break;
    }
    double* dst = region[pass % 2];
    reduce_sequential_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count));
    src = dst;
    count = blocks;
  }
}

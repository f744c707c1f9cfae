// BUG (reduce_first_add_during_load/unguarded_second_load): the first load in[i] is guarded, the
// second one, in[i + blockDim.x], is not. In the last block it reads up to 511 elements past
// the end of the input, which is the harness's input guard zone (NaN; 8192 elements long, so
// no illegal address).
//
// Expected symptom: for n not a multiple of 512 (n = 1, 2, 31, 33, 1025, 4,125,000,
// 10,000,000, ...) the sum is NaN, deterministically (a read outside the input). For n a
// multiple of 512 pass 1 is fine, but a later pass over a partial count that is not a multiple
// of 512 reads past the partials into scratch (NaN-filled by the harness on entry), so those
// are NaN too (n = 1024, 2048, 4096, 4,194,304). Only sizes whose every pass count is a
// multiple of 512 pass (n = 512, 2^27 = 512^3). Checked on an H200: exactly that pattern.
// 256 threads per block, 512 elements per block (reduction 4, first add during load).

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;                 // threads per block
constexpr unsigned kElemsPerBlock = 2 * kBlock;  // elements per block

__global__ void __launch_bounds__(kBlock)
reduce_first_add_kernel(const double* __restrict__ in, double* __restrict__ partial, int n) {
  __shared__ double sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t un = static_cast<size_t>(n);
  const size_t i = static_cast<size_t>(blockIdx.x) * (2 * blockDim.x) + tid;
  double v = (i < un) ? in[i] : 0.0;
  v += in[i + blockDim.x];  // BUG: the second load is not guarded against n
  sdata[tid] = v;
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

void reduce_first_add_during_load(const double* in, double* out, int n, double* scratch) {
  long long count = n > 0 ? n : 0;
  double* const region[2] = {scratch, scratch + blocks_for(count)};
  const double* src = in;
  for (int pass = 0;; ++pass) {
    unsigned blocks = blocks_for(count);
    if (blocks == 0) blocks = 1;  // n == 0 (outside the contract): one block writes 0.0
    double* dst = (blocks == 1) ? out : region[pass % 2];
    reduce_first_add_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count));
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

// BUG (reduce_sequential_addressing/atomic_add_without_zeroing): one pass, each block's sum
// added into out[0] with atomicAdd, but out[0] is never set to 0 first: the launcher assumes the
// output starts at 0, and the contract promises nothing of the kind. The block-sum atomicAdd is
// the pattern of many kernels in public course repositories; this launcher forgets the
// cudaMemset(out, 0, ...) they rely on.
//
// Expected symptom: every case wrong. The grader fills `out` with a signalling-NaN pattern; the
// atomic additions leave a NaN (on an H100/H200 the very same bits, so the output looked "never
// written" before the grader learned to tell the two apart). Run again from out[0] = 0, the
// launcher gives the right sum, which the grader checks on integer data: the finding says that
// the kernel adds into out[0] without setting it to 0 first.
// 256 threads per block, 256 elements per block (reduction 3, sequential addressing).

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;

__global__ void __launch_bounds__(kBlock)
reduce_sequential_kernel(const double* __restrict__ in, double* out, int n) {
  __shared__ double sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = (i < static_cast<size_t>(n)) ? in[i] : 0.0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, sdata[0]);  // BUG: into whatever out[0] held before the launch
}

}  // namespace

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch) {
  (void)scratch;
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((static_cast<long long>(n) + kBlock - 1) / kBlock);
  // Missing: cudaMemset(out, 0, sizeof(double));
  reduce_sequential_kernel<<<blocks, kBlock>>>(in, out, n);
}

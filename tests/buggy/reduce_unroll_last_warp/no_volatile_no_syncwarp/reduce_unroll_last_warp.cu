// BUG (reduce_unroll_last_warp/no_volatile_no_syncwarp): the last warp is unrolled the way the
// original 2007 slides did it, on a plain (non-volatile) shared array and without __syncwarp():
//   if (tid < 32) { sdata[tid] += sdata[tid + 32]; sdata[tid] += sdata[tid + 16]; ... }
// Two things are wrong: without volatile the compiler may keep sdata[tid] in a register and
// issue the loads of sdata[tid + 16], sdata[tid + 8], ... before any lane has stored its
// previous step; and since Volta (independent thread scheduling) the lanes of a warp are not
// guaranteed to run in lockstep, so a lane may read a neighbour's slot before or after the
// neighbour updates it.
//
// Expected symptom: wrong sums. With nvcc 13.0 -O3 the PTX loads sdata[tid + 32, 16, 8, 4, 2, 1]
// into registers and stores sdata[tid] once at the end, so each block's sum is only
// sdata[0] + sdata[1] + sdata[2] + sdata[4] + sdata[8] + sdata[16] + sdata[32] (7 of 64 slots
// after the tree): wrong for every n >= 4 with nonzero data (n = 1, 2, 3 happen to pass).
// Checked on an H200: exactly that, deterministically, in 3 runs.
// KNOWN-FLAKY teaching example in general: another compiler version that stores and reloads
// each step, on a warp that happens to stay converged, gives the right answer and the harness
// cannot catch it.
// 256 threads per block, 512 elements per block.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;                 // threads per block
constexpr unsigned kElemsPerBlock = 2 * kBlock;  // elements per block
static_assert(kBlock >= 64 && (kBlock & (kBlock - 1)) == 0, "power of two >= 64");

__global__ void __launch_bounds__(kBlock)
reduce_unroll_last_warp_kernel(const double* __restrict__ in, double* __restrict__ partial, int n) {
  __shared__ double sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t un = static_cast<size_t>(n);
  const size_t i = static_cast<size_t>(blockIdx.x) * (2 * blockDim.x) + tid;
  double v = (i < un) ? in[i] : 0.0;
  if (i + blockDim.x < un) v += in[i + blockDim.x];  // both loads guarded: never read past n
  sdata[tid] = v;
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) {  // contiguous threads, consecutive addresses
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }

  if (tid < 32) {  // BUG: pre-Volta warp-synchronous code, no volatile, no __syncwarp()
    sdata[tid] += sdata[tid + 32];
    sdata[tid] += sdata[tid + 16];
    sdata[tid] += sdata[tid + 8];
    sdata[tid] += sdata[tid + 4];
    sdata[tid] += sdata[tid + 2];
    sdata[tid] += sdata[tid + 1];
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}

unsigned blocks_for(long long count) {
  return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch) {
  long long count = n > 0 ? n : 0;
  double* const region[2] = {scratch, scratch + blocks_for(count)};
  const double* src = in;
  for (int pass = 0;; ++pass) {
    unsigned blocks = blocks_for(count);
    if (blocks == 0) blocks = 1;  // n == 0 (outside the contract): one block writes 0.0
    double* dst = (blocks == 1) ? out : region[pass % 2];
    reduce_unroll_last_warp_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count));
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

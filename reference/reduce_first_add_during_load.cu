// Hidden reference: reduce_first_add_during_load (reduction 4 of Harris's "Optimizing Parallel
// Reduction in CUDA"; PMPP chapter 10).
//
// out[0] = in[0] + ... + in[n-1], doubles, any n from 1 to 2^30.
// 256 threads per block, 512 elements per block (two elements per thread, 2*blockDim).
//
// Defining line: first add during load,
//   i = blockIdx.x * (2*blockDim.x) + tid;  sdata[tid] = in[i] + in[i + blockDim.x];  (guarded)
// Reduction 3 left half the threads idle from the first step; here every thread does one add
// while loading, so each block covers 2*blockDim elements and the grid is half as large. The tree
// is reduction 3's sequential addressing (no divergence, no bank conflicts).
//
// Multi-pass: pass 1 reduces `in` to one partial sum per block in scratch; each following pass
// reduces the previous pass's partials. The two regions of scratch are [0, m1) and [m1, m1 + m2)
// with m1 = ceil(n/512) and m2 = ceil(m1/512); pass k writes region A (k odd) or B (k even), and
// since every later pass produces at most m2 <= m1 values the regions never overlap. The pass that
// produces a single value writes it straight into out[0]. Scratch use: m1 + m2 <= n + 4096.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;                 // threads per block
constexpr unsigned kElemsPerBlock = 2 * kBlock;  // elements per block

__global__ void __launch_bounds__(kBlock)
    reduce_first_add_kernel(const double* __restrict__ in, double* __restrict__ partial, int n)
{
    __shared__ double sdata[kBlock];
    const unsigned tid = threadIdx.x;
    const size_t un = static_cast<size_t>(n);
    const size_t i = static_cast<size_t>(blockIdx.x) * (2 * blockDim.x) + tid;
    double v = (i < un) ? in[i] : 0.0;
    if (i + blockDim.x < un) v += in[i + blockDim.x];  // both loads guarded: never read past n
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

unsigned blocks_for(long long count)
{
    return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_first_add_during_load(const double* in, double* out, int n, double* scratch)
{
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

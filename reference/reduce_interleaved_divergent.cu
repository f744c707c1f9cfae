// Hidden reference: reduce_interleaved_divergent (reduction 1 of Harris's "Optimizing Parallel
// Reduction in CUDA"; PMPP chapter 10).
//
// out[0] = in[0] + ... + in[n-1], doubles, any n from 1 to 2^30.
// 256 threads per block, 256 elements per block (one element per thread).
//
// Defining line: interleaved addressing with `if (tid % (2*s) == 0)`. Only every (2*s)-th thread
// works in a step, so from the first step on every warp is divergent (half, then a quarter, ...
// of its lanes active), and the % itself is slow.
//
// Multi-pass: pass 1 reduces `in` to one partial sum per block in scratch; each following pass
// reduces the previous pass's partials. The two regions of scratch are [0, m1) and [m1, m1 + m2)
// with m1 = ceil(n/256) and m2 = ceil(m1/256); pass k writes region A (k odd) or B (k even), and
// since every later pass produces at most m2 <= m1 values the regions never overlap. The pass that
// produces a single value writes it straight into out[0]. Scratch use: m1 + m2 <= n + 4096.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned kBlock = 256;             // threads per block
constexpr unsigned kElemsPerBlock = kBlock;  // elements per block

__global__ void __launch_bounds__(kBlock)
    reduce_divergent_kernel(const double* __restrict__ in, double* __restrict__ partial, int n)
{
    __shared__ double sdata[kBlock];
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

unsigned blocks_for(long long count)
{
    return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_interleaved_divergent(const double* in, double* out, int n, double* scratch)
{
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

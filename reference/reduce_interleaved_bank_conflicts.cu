// Hidden reference: reduce_interleaved_bank_conflicts (reduction 2 of Harris's "Optimizing Parallel
// Reduction in CUDA"; PMPP chapter 10).
//
// out[0] = in[0] + ... + in[n-1], doubles, any n from 1 to 2^30.
// 256 threads per block, 256 elements per block (one element per thread).
//
// Defining line: interleaved addressing with `int index = 2*s*tid; if (index < blockDim.x)`.
// The working threads are now the contiguous tids 0 .. blockDim/(2s)-1, so whole warps are either
// active or idle (no divergence until fewer than 32 threads work), and the % is gone. But thread
// tid touches sdata[2*s*tid] and sdata[2*s*tid + s]: a stride of 2*s doubles between lanes, so
// the lanes of a warp hit the same shared-memory banks and their accesses are serialized (bank
// conflicts, worse with every step).
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
    reduce_bank_conflicts_kernel(const double* __restrict__ in, double* __restrict__ partial, int n)
{
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
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}

unsigned blocks_for(long long count)
{
    return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_interleaved_bank_conflicts(const double* in, double* out, int n, double* scratch)
{
    long long count = n > 0 ? n : 0;
    double* const region[2] = {scratch, scratch + blocks_for(count)};
    const double* src = in;
    for (int pass = 0;; ++pass) {
        unsigned blocks = blocks_for(count);
        if (blocks == 0) blocks = 1;  // n == 0 (outside the contract): one block writes 0.0
        double* dst = (blocks == 1) ? out : region[pass % 2];
        reduce_bank_conflicts_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count));
        if (blocks == 1) break;
        src = dst;
        count = blocks;
    }
}

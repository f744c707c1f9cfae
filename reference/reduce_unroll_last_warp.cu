// Hidden reference: reduce_unroll_last_warp (reduction 5 of Harris's "Optimizing Parallel
// Reduction in CUDA"; PMPP chapter 10).
//
// out[0] = in[0] + ... + in[n-1], doubles, any n from 1 to 2^30.
// 256 threads per block, 512 elements per block (two elements per thread, 2*blockDim).
//
// Defining line: reduction 4 (first add during load, sequential addressing) with the tree loop
// stopped at s > 32 and the last 32 -> 1 steps done by warp 0 alone, unrolled, without
// __syncthreads():  if (tid < 32) { v = sdata[tid] + sdata[tid + 32]; v += shfl_down(v, 16); ...}
// Once s <= 32 only one warp works, yet reduction 4 still paid a block-wide __syncthreads() and
// the loop overhead for each of those 6 steps, with every other warp idle.
//
// Why the classic warp-synchronous version is WRONG on Volta and later:
//   if (tid < 32) { sdata[tid] += sdata[tid + 32]; sdata[tid] += sdata[tid + 16]; ... }
// (a) Without `volatile`, the compiler may keep sdata[tid] in a register and load all of
//     sdata[tid + 32], sdata[tid + 16], ... before any store: lanes never see each other's
//     partial sums.
// (b) Even with `volatile` it relies on the 32 lanes of a warp running in lockstep. Since Volta,
//     independent thread scheduling gives each thread its own program counter: the lanes of a
//     warp are not guaranteed to execute an instruction together, so lane t can read
//     sdata[t + 16] before lane t + 16 has written its previous step's sum, or after lane t + 16
//     has already overwritten it in the current step. Correct forms need __syncwarp() between
//     every read and every write (temp = sdata[tid + s]; __syncwarp(); sdata[tid] += temp;
//     __syncwarp();) on a volatile pointer, or warp shuffles, which exchange registers with an
//     explicit full-warp mask and need no shared memory at all. This reference uses
//     __shfl_down_sync. Requires blockDim.x a power of two >= 64.
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
static_assert(kBlock >= 64 && (kBlock & (kBlock - 1)) == 0, "power of two >= 64");

__global__ void __launch_bounds__(kBlock)
    reduce_unroll_last_warp_kernel(const double* __restrict__ in, double* __restrict__ partial, int n)
{
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

    if (tid < 32) {  // the whole of warp 0: the full mask below is exact
        constexpr unsigned kFullMask = 0xffffffffu;
        double sum = sdata[tid] + sdata[tid + 32];
        sum += __shfl_down_sync(kFullMask, sum, 16);
        sum += __shfl_down_sync(kFullMask, sum, 8);
        sum += __shfl_down_sync(kFullMask, sum, 4);
        sum += __shfl_down_sync(kFullMask, sum, 2);
        sum += __shfl_down_sync(kFullMask, sum, 1);
        if (tid == 0) partial[blockIdx.x] = sum;
    }
}

unsigned blocks_for(long long count)
{
    return static_cast<unsigned>((count + kElemsPerBlock - 1) / kElemsPerBlock);
}

}  // namespace

void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch)
{
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

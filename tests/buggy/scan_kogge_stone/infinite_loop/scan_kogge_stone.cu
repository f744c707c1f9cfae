// BUG: a "wait for the previous block" handshake whose producer side was forgotten. Every
//      block except block 0 spins until a device flag says that block blockIdx.x - 1 is done,
//      but no block ever sets the flag, so every block >= 1 waits forever. The flag is read
//      through a volatile pointer, so the compiler cannot hoist or remove the loop.
//      (Nothing ever writes the flag, so the hang is deterministic, not a race.)
// EXPECTED SYMPTOM: n <= 1024 (one block: 1, 1023, 1024) passes; every case with n > 1024
//      hangs and is stopped by the time limit ("hang"/timeout), and the cases after a hang
//      are still run and reported normally (each in a fresh process).

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;

__device__ unsigned int g_blocks_done = 0;   // meant to count finished blocks; never written

__global__ void kogge_stone_scan_kernel(const float* in, float* out, size_t n) {
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * SECTION_SIZE + t;

    // <-- the bug: wait until the previous block is "done"; nobody ever increments the counter.
    if (blockIdx.x > 0) {
        volatile unsigned int* done = &g_blocks_done;
        while (*done < blockIdx.x) {
        }
    }

    xy[t] = (i < n) ? in[i] : 0.0f;
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        float temp = 0.0f;
        if (t >= stride) temp = xy[t] + xy[t - stride];
        __syncthreads();
        if (t >= stride) xy[t] = temp;
    }
    if (i < n) out[i] = xy[t];
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n) {
    if (n <= 0) return;
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, static_cast<size_t>(n));
}

// Reference for scan_kogge_stone (hidden from students).
//
// Inclusive scan of each 1024-element section independently:
//     out[i] = in[s] + ... + in[i],   s = i - i % 1024.
// One block of 1024 threads per section; thread t owns element t of its section.
// Kogge-Stone (PMPP chapter 11): log2(1024) = 10 steps; in the step with distance `stride`,
// every element at position t >= stride adds the element `stride` positions before it.
// The shared array is double buffered: each step reads one buffer and writes the other, so a
// single __syncthreads per step separates the writes of one step from the reads of the next.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;  // elements per section = threads per block

__global__ void kogge_stone_scan_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n)
{
    __shared__ float buf[2][SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    // Global index of this thread's element: the section starts at blockIdx.x * SECTION_SIZE.
    // size_t so that the product never overflows, whatever the grid.
    const size_t i = static_cast<size_t>(blockIdx.x) * SECTION_SIZE + t;

    // Coalesced load; positions past the end of the array are 0 (neutral for +).
    buf[0][t] = (i < n) ? in[i] : 0.0f;

    unsigned int src = 0;  // buffer holding the current partial sums
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();  // the previous step's writes to buf[src] are visible
        float v = buf[src][t];
        if (t >= stride) v += buf[src][t - stride];
        buf[1 - src][t] = v;  // write the other buffer: no read-after-write hazard in a step
        src = 1 - src;
    }
    // Each thread reads back only the value it wrote itself: no barrier needed here.
    if (i < n) out[i] = buf[src][t];  // only in-range elements are stored
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    const unsigned int blocks = static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, static_cast<size_t>(n));
}

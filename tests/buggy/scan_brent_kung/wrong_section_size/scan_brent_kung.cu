// BUG: wrong section size. The kernel is a correct Brent-Kung scan, but of 1024-element
//      sections (SECTION_SIZE = 1024, 512 threads per block, ceil(n / 1024) blocks) instead
//      of 2048-element ones. The lower half of every 2048-section is right; in the upper half
//      (positions 1024..2047 of each section) the total of the lower half is missing.
// EXPECTED SYMPTOM: n <= 1024 passes; for n >= 1025 wrong values, first wrong index 1024
//      (expected in[0] + ... + in[1024], actual in[1024]), wrong elements only in positions
//      1024..2047 of each 2048-section, in every section that reaches that far (a section
//      whose first 1024 elements sum to 0 stays right). Each wrong value is off by that sum.
//      No CUDA error, nothing written or read outside the buffers.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;             // <-- the bug: should be 2048
constexpr unsigned int BLOCK_SIZE = SECTION_SIZE / 2;   // two elements per thread

__global__ void brent_kung_scan_kernel(const float* in, float* out, size_t n) {
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const size_t start = static_cast<size_t>(blockIdx.x) * SECTION_SIZE;
    const size_t i0 = start + t;
    const size_t i1 = start + t + BLOCK_SIZE;

    xy[t] = (i0 < n) ? in[i0] : 0.0f;
    xy[t + BLOCK_SIZE] = (i1 < n) ? in[i1] : 0.0f;

    for (unsigned int stride = 1; stride <= BLOCK_SIZE; stride *= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * 2 * stride - 1;
        if (index < SECTION_SIZE) xy[index] += xy[index - stride];
    }
    for (unsigned int stride = SECTION_SIZE / 4; stride > 0; stride /= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * 2 * stride - 1;
        if (index + stride < SECTION_SIZE) xy[index + stride] += xy[index];
    }
    __syncthreads();

    if (i0 < n) out[i0] = xy[t];
    if (i1 < n) out[i1] = xy[t + BLOCK_SIZE];
}

}  // namespace

void scan_brent_kung(const float* in, float* out, int n) {
    if (n <= 0) return;
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    brent_kung_scan_kernel<<<blocks, BLOCK_SIZE>>>(in, out, static_cast<size_t>(n));
}

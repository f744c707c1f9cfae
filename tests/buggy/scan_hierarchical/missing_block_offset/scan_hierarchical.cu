// BUG: the block sums are computed and scanned, but never added back: the add kernel is
//      missing. Every 2048-section is scanned only on its own.
// EXPECTED SYMPTOM: n <= 2048 passes (1, 1023, 1024, 1025, 2047, 2048); every larger case has
//      wrong values, first wrong index 2048 (expected in[0] + ... + in[2048], actual in[2048]),
//      wrong elements in every section except the first; each wrong value in section k is off
//      by the sum of sections 0..k-1. Nothing written outside out (scratch is used only
//      within its n + 4096 floats), no CUDA error.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;

__global__ void scan_sections_kernel(const float* in, float* out, size_t n, float* sums) {
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
    if (sums != nullptr && t == BLOCK_SIZE - 1) sums[blockIdx.x] = xy[SECTION_SIZE - 1];
}

void scan_recursive(const float* in, float* out, size_t n, float* scratch) {
    const size_t sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    if (sections == 1) {
        scan_sections_kernel<<<1, BLOCK_SIZE>>>(in, out, n, nullptr);
        return;
    }
    scan_sections_kernel<<<static_cast<unsigned int>(sections), BLOCK_SIZE>>>(in, out, n, scratch);
    scan_recursive(scratch, scratch, sections, scratch + sections);
    // <-- the bug: the add kernel (scratch[k - 1] added to every element of section k) is missing
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch) {
    if (n <= 0) return;
    scan_recursive(in, out, static_cast<size_t>(n), scratch);
}

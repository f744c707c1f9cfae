// BUG: only two levels. The 2048-sections are scanned and their totals written to scratch,
//      but the totals are then scanned by a single Brent-Kung block (one 2048-section), as if
//      there could never be more than 2048 sections. For n > 2048 * 2048 = 4,194,304 the
//      totals scratch[2048], scratch[2049], ... stay unscanned, so section k >= 2049 gets only
//      the raw total of section k - 1 added instead of the total of sections 0..k-1.
//      (Section 2048 adds scratch[2047], which is still correct.)
// EXPECTED SYMPTOM: correct for every n <= 2049 * 2048 = 4,196,352 (so 4,125,000 passes);
//      n = 4,196,353 has exactly one wrong element, index 4,196,352 (the only element of
//      section 2049); 10,000,000 and 2^28 + 3 are wrong from index 4,196,352 on, in every
//      section k >= 2049, each off by the total of sections 0..k-2. No CUDA error, nothing
//      outside the buffers.

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

__global__ void add_offsets_kernel(float* out, size_t n, const float* sums) {
    const size_t section = static_cast<size_t>(blockIdx.x) + 1;
    const float offset = sums[section - 1];
    const size_t i0 = section * SECTION_SIZE + threadIdx.x;
    const size_t i1 = i0 + BLOCK_SIZE;
    if (i0 < n) out[i0] += offset;
    if (i1 < n) out[i1] += offset;
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch) {
    if (n <= 0) return;
    const size_t sections = (static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE;
    scan_sections_kernel<<<static_cast<unsigned int>(sections), BLOCK_SIZE>>>(
        in, out, static_cast<size_t>(n), scratch);
    if (sections > 1) {
        // <-- the bug: one block scans only the first 2048 totals; no recursion beyond that.
        const size_t scanned = sections < SECTION_SIZE ? sections : SECTION_SIZE;
        scan_sections_kernel<<<1, BLOCK_SIZE>>>(scratch, scratch, scanned, nullptr);
        add_offsets_kernel<<<static_cast<unsigned int>(sections - 1), BLOCK_SIZE>>>(
            out, static_cast<size_t>(n), scratch);
    }
}

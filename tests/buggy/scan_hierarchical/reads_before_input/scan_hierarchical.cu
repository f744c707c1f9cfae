// BUG: reads one element before the start of the input. The student builds the inclusive
//      scan as "exclusive scan + own element": the first level scans the shifted array
//      x[g] = in[g - 1] (meant to be 0 for g = 0, but the check is missing), the block sums are
//      scanned and added back correctly, and the last kernel adds in[i]. Thread g = 0 loads
//      in[-1], so out[i] = in[-1] + (in[0] + ... + in[i]) for every i: without that one
//      out-of-bounds read every output would be exact.
// EXPECTED SYMPTOM: "reads outside the input" (one element before in). The harness's guard
//      zone before the input holds NaN, so EVERY output is NaN in every case (n >= 1), first
//      wrong index 0. No CUDA error (the read stays inside the guard zone), nothing written
//      outside the buffers.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;

// Brent-Kung scan of 2048-sections. With shift = 1, element g of the scanned array is in[g - 1].
__global__ void scan_sections_kernel(const float* in, float* out, long long n, float* sums,
                                     int shift) {
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const long long start = static_cast<long long>(blockIdx.x) * SECTION_SIZE;
    const long long g0 = start + t;
    const long long g1 = start + t + BLOCK_SIZE;

    // <-- the bug: for g0 = 0 and shift = 1 this reads in[-1] (should be 0 there).
    xy[t] = (g0 < n) ? in[g0 - shift] : 0.0f;
    xy[t + BLOCK_SIZE] = (g1 < n) ? in[g1 - shift] : 0.0f;
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
    if (g0 < n) out[g0] = xy[t];
    if (g1 < n) out[g1] = xy[t + BLOCK_SIZE];
    if (sums != nullptr && t == BLOCK_SIZE - 1) sums[blockIdx.x] = xy[SECTION_SIZE - 1];
}

// Section k = blockIdx.x: adds sums[k - 1] (k > 0) and, if own != nullptr, own[i].
__global__ void add_kernel(float* out, long long n, const float* sums, const float* own) {
    const long long section = blockIdx.x;
    const float offset = section > 0 ? sums[section - 1] : 0.0f;
    const long long i0 = section * SECTION_SIZE + threadIdx.x;
    const long long i1 = i0 + BLOCK_SIZE;
    if (i0 < n) out[i0] += offset + (own != nullptr ? own[i0] : 0.0f);
    if (i1 < n) out[i1] += offset + (own != nullptr ? own[i1] : 0.0f);
}

// Correct inclusive scan (used for the block sums), or with shift = 1 the inclusive scan of
// the shifted array.
void scan_recursive(const float* in, float* out, long long n, float* scratch, int shift) {
    const long long sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    scan_sections_kernel<<<static_cast<unsigned int>(sections), BLOCK_SIZE>>>(
        in, out, n, sections > 1 ? scratch : nullptr, shift);
    if (sections > 1) scan_recursive(scratch, scratch, sections, scratch + sections, 0);
    // Top level: add the block offsets and each element's own value (the "exclusive + own"
    // step). Deeper levels: only the offsets, and only if there is more than one section.
    if (shift != 0 || sections > 1) {
        add_kernel<<<static_cast<unsigned int>(sections), BLOCK_SIZE>>>(
            out, n, scratch, shift != 0 ? in : nullptr);
    }
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch) {
    if (n <= 0) return;
    scan_recursive(in, out, n, scratch, 1);
}

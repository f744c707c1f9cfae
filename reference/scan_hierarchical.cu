// Reference for scan_hierarchical (hidden from students).
//
// Inclusive scan of the whole array, out[i] = in[0] + ... + in[i], for any n from 1 to 2^30,
// the hierarchical way of PMPP chapter 11:
//   1. scan_sections_kernel: Brent-Kung scan of each 2048-element section (1024 threads, two
//      elements each); the last thread also writes the section's total to sums[section].
//   2. the array of section totals (ceil(n / 2048) floats) is scanned in place by the same
//      routine, recursively: 2^30 elements -> 2^19 sums -> 256 sums -> 1 section, done.
//      Each level keeps its sums in `scratch` right after the previous level's sums, so all
//      levels together use about n / 2047 + 3 floats of the n + 4096 available.
//   3. add_offsets_kernel: every element of section k > 0 gets sums[k - 1] added, the (scanned)
//      total of all sections before it.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;              // threads per block
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;  // elements per section

// Brent-Kung scan of one 2048-element section per block. `in` and `out` may be the same array
// (each block reads its whole section before writing it). If `sums` is not null, the section's
// total goes to sums[blockIdx.x].
__global__ void scan_sections_kernel(const float* in, float* out, size_t n, float* sums)
{
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const size_t start = static_cast<size_t>(blockIdx.x) * SECTION_SIZE;  // section's first element
    const size_t i0 = start + t;                                          // first half of the section
    const size_t i1 = start + t + BLOCK_SIZE;                             // second half

    xy[t] = (i0 < n) ? in[i0] : 0.0f;  // coalesced; 0 past the end
    xy[t + BLOCK_SIZE] = (i1 < n) ? in[i1] : 0.0f;

    // Up-sweep (reduction tree): position (t + 1) * 2 * stride - 1 adds the one `stride` before.
    for (unsigned int stride = 1; stride <= BLOCK_SIZE; stride *= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * 2 * stride - 1;
        if (index < SECTION_SIZE) xy[index] += xy[index - stride];
    }
    // Down-sweep (distribution tree): a finished prefix at `index` completes `index + stride`.
    for (unsigned int stride = SECTION_SIZE / 4; stride > 0; stride /= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * 2 * stride - 1;
        if (index + stride < SECTION_SIZE) xy[index + stride] += xy[index];
    }
    __syncthreads();

    if (i0 < n) out[i0] = xy[t];
    if (i1 < n) out[i1] = xy[t + BLOCK_SIZE];
    // Total of the section (the padding zeros do not change it).
    if (sums != nullptr && t == BLOCK_SIZE - 1) sums[blockIdx.x] = xy[SECTION_SIZE - 1];
}

// One block per section k = blockIdx.x + 1 (section 0 needs nothing): add the scanned total of
// sections 0..k-1, which is sums[k - 1], to the section's 2048 elements (two per thread).
__global__ void add_offsets_kernel(float* out, size_t n, const float* sums)
{
    const size_t section = static_cast<size_t>(blockIdx.x) + 1;
    const float offset = sums[section - 1];  // the same for the whole block
    const size_t i0 = section * SECTION_SIZE + threadIdx.x;
    const size_t i1 = i0 + BLOCK_SIZE;
    if (i0 < n) out[i0] += offset;
    if (i1 < n) out[i1] += offset;
}

// Scans in[0..n) into out[0..n) (possibly in place); scratch holds the block sums of this level
// and, after them, those of the deeper levels.
void scan_recursive(const float* in, float* out, size_t n, float* scratch)
{
    const size_t sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    if (sections == 1) {  // a single section: its local scan is the whole answer
        scan_sections_kernel<<<1, BLOCK_SIZE>>>(in, out, n, nullptr);
        return;
    }
    float* sums = scratch;  // sections floats; the next level's sums start right after
    scan_sections_kernel<<<static_cast<unsigned int>(sections), BLOCK_SIZE>>>(in, out, n, sums);
    scan_recursive(sums, sums, sections, sums + sections);  // inclusive scan of the totals
    add_offsets_kernel<<<static_cast<unsigned int>(sections - 1), BLOCK_SIZE>>>(out, n, sums);
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch)
{
    if (n <= 0) return;
    scan_recursive(in, out, static_cast<size_t>(n), scratch);
}

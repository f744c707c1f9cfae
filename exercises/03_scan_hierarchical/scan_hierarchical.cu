// scan_hierarchical: inclusive scan of the whole array, n from 1 to 2^30 (see README.md).
//
//     out[i] = in[0] + in[1] + ... + in[i]
//
// Keep the launcher's name and signature exactly as they are. Putting your kernels and helpers
// in the anonymous namespace below keeps their names private to this file.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;               // threads per block
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;   // elements per section

// Step 1: scan every 2048-element section on its own and record its total.
__global__ void scan_sections_kernel(const float* in, float* out, size_t n, float* sums) {
    // TODO: the Brent-Kung section scan (as in scan_brent_kung): block b scans elements
    //       [b * SECTION_SIZE, (b + 1) * SECTION_SIZE) of in (elements >= n count as 0) and
    //       writes the in-range results to out. Use size_t for global indices.
    //       Then one thread writes the section's total (the last element of the shared array
    //       after the scan) to sums[blockIdx.x], if sums is not null.
    //       Tip: if each block reads its whole section into shared memory before writing any
    //       of it, in and out may be the same array, which makes step 2 easy.
}

// Step 3: add to every element of section k > 0 the scanned total of sections 0..k-1.
__global__ void add_offsets_kernel(float* out, size_t n, const float* sums) {
    // TODO: section k's elements are [k * SECTION_SIZE, (k + 1) * SECTION_SIZE), at most up to n.
    //       After step 2, sums[k - 1] = total of sections 0..k-1: add it to each of them.
    //       For example, launch one block per section k = 1, 2, ..., blockIdx.x = k - 1.
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch) {
    if (n <= 0) return;
    const size_t sections = (static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE;

    // Step 1: section scans; the section totals go to scratch[0 .. sections).
    scan_sections_kernel<<<static_cast<unsigned int>(sections), BLOCK_SIZE>>>(
        in, out, static_cast<size_t>(n), scratch);

    // TODO step 2: scan scratch[0 .. sections) itself. It can be longer than one section
    //   (n = 2^30 gives 2^19 totals), so scan it the same way: write a host function
    //   scan(in, out, n, scratch) that does steps 1 to 3 and calls itself on the totals, using
    //   the scratch right after this level's totals (scratch + sections) for the next level.
    //   It stops when everything fits in one section. Never cudaMalloc: scratch holds
    //   n + 4096 floats, far more than all levels need together.

    // Step 3: one block per section k >= 1 (there is nothing to add to section 0).
    if (sections > 1) {
        add_offsets_kernel<<<static_cast<unsigned int>(sections - 1), BLOCK_SIZE>>>(
            out, static_cast<size_t>(n), scratch);
    }
}

// scan_hierarchical: inclusive scan of the whole array, n from 1 to 2^30 (see README.md).
//
//   out[i] = in[0] + in[1] + ... + in[i],   0 <= i < n
//
// Keep this launcher's name and signature exactly (CONTRACT.md):
//   void scan_hierarchical(const float* in, float* out, int n, float* scratch)
// Rules: all pointers are device pointers; never modify in; write only out and scratch
//        (n + 4096 floats, contents unspecified on entry). Default stream, no cudaMalloc,
//        no CUB, Thrust or other library doing the scan.
//
// As handed out, this file compiles and runs but writes nothing to out: every case fails.

#include <cuda_runtime.h>

#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;              // threads per block
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;  // elements per section

// Step 1: scan every 2048-element section on its own and record its total.
__global__ void scan_sections_kernel(const float* in, float* out, size_t n, float* sums)
{
    // TODO 1: the Brent-Kung section scan (as in scan_brent_kung): block b scans elements
    //         [b * SECTION_SIZE, (b + 1) * SECTION_SIZE) of in, as size_t (elements >= n count
    //         as 0) and writes the results < n to out.
    //
    // TODO 2: one thread writes the section's total (the last element of the shared array
    //         after the scan) to sums[blockIdx.x], if sums is not null.
    //         Tip: if each block reads its whole section before writing any of it, in and out
    //         may be the same array, which makes step 2 easy.
}

// Step 3: add to every element of section k > 0 the scanned total of sections 0..k-1.
__global__ void add_offsets_kernel(float* out, size_t n, const float* sums)
{
    // TODO 3: one block per section k = blockIdx.x + 1 (section 0 gets nothing); its elements
    //         are [k * SECTION_SIZE, (k + 1) * SECTION_SIZE), only those < n. After step 2,
    //         sums[k - 1] is the total of sections 0..k-1: add it to each of them.
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch)
{
    if (n <= 0) return;
    // One block per section: ceil(n / SECTION_SIZE) sections.
    const size_t sections = (static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE;

    // Step 1: section scans; the section totals go to scratch[0 .. sections).
    scan_sections_kernel<<<static_cast<unsigned int>(sections), BLOCK_SIZE>>>(in, out, static_cast<size_t>(n), scratch);

    // TODO 4: step 2, scan scratch[0 .. sections) itself. It can be longer than one section
    //         (n = 2^30 gives 2^19 totals), so scan it the same way: write a host function
    //         scan(in, out, n, scratch) that does steps 1 to 3 and calls itself on the totals,
    //         with the scratch right after this level's totals (scratch + sections) for the
    //         next level. It stops when everything fits in one section. Never cudaMalloc:
    //         scratch holds n + 4096 floats, far more than all levels need together.

    // Step 3: one block per section k >= 1.
    if (sections > 1) {
        add_offsets_kernel<<<static_cast<unsigned int>(sections - 1), BLOCK_SIZE>>>(out, static_cast<size_t>(n),
                                                                                    scratch);
    }
}

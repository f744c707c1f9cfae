// BUG: the final store has no `if (i < n)` guard. The values for i < n are correct, but the
//      last block also writes out[i] for every i in [n, end of its section): the padded
//      positions hold the section's total (the zeros loaded past the end add nothing).
// EXPECTED SYMPTOM: every in-range output correct; "writes outside the output" (guard zone
//      after out damaged, up to 1023 elements past the end) in every case where n is not a
//      multiple of 1024 (e.g. 1, 1023, 1025, 2047, 2049, 4,125,000, 4,196,353, 10,000,000);
//      cases with n a multiple of 1024 (1024, 2048) pass. No CUDA error.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;

__global__ void kogge_stone_scan_kernel(const float* in, float* out, size_t n) {
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * SECTION_SIZE + t;

    xy[t] = (i < n) ? in[i] : 0.0f;   // the load is guarded: no read outside the input

    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        float temp = 0.0f;
        if (t >= stride) temp = xy[t] + xy[t - stride];
        __syncthreads();
        if (t >= stride) xy[t] = temp;
    }
    out[i] = xy[t];   // <-- the bug: no `if (i < n)`
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n) {
    if (n <= 0) return;
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, static_cast<size_t>(n));
}

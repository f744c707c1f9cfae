// BUG: for n > 100,000 the store index is shifted by 2^40 elements (4 TiB), far beyond any
//      allocation, so the very first store faults. The shift is computed on the host at run
//      time and passed as a kernel argument, so the compiler cannot see or remove it.
//      For n <= 100,000 the kernel is correct.
// EXPECTED SYMPTOM: cases with n <= 100,000 (1, 1023, 1024, 1025, 2047, 2048, 2049, ...) pass;
//      every case with n > 100,000 (4,125,000, 4,196,353, 10,000,000, ...) reports a CUDA error
//      (cudaErrorIllegalAddress, "an illegal memory access was encountered") found when the
//      harness synchronizes after the launcher. The error is sticky for its process, so this
//      shows that one crashed case does not spoil the cases run after it.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;

__global__ void kogge_stone_scan_kernel(const float* in, float* out, size_t n, size_t shift) {
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * SECTION_SIZE + t;

    xy[t] = (i < n) ? in[i] : 0.0f;
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        float temp = 0.0f;
        if (t >= stride) temp = xy[t] + xy[t - stride];
        __syncthreads();
        if (t >= stride) xy[t] = temp;
    }
    if (i < n) out[i + shift] = xy[t];   // <-- the bug: shift is 2^40 for large n
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n) {
    if (n <= 0) return;
    const size_t shift = (n > 100000) ? (static_cast<size_t>(1) << 40) : 0;
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, static_cast<size_t>(n), shift);
}

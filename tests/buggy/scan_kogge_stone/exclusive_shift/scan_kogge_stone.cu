// BUG: exclusive instead of inclusive scan. Thread t loads the element BEFORE its own
//      (in[i - 1], 0 for the first element of each section), so out[i] = in[s] + ... + in[i-1]
//      (s = i - i % 1024): every output misses its own element.
// EXPECTED SYMPTOM: wrong values, first wrong index 0 (expected in[0], actual 0), wrong elements
//      in every section; each output differs from the expected one by exactly in[i], so an
//      element with in[i] = 0 is right (with integer data the first wrong index is the first i
//      with in[i] != 0, and n = 1 passes if in[0] = 0). Seen on an H200 with data in -3..3:
//      about 86% of the elements wrong on integer data, almost all on fractional data.
//      No writes or reads outside the buffers, no CUDA error.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;

__global__ void kogge_stone_scan_kernel(const float* in, float* out, size_t n) {
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * SECTION_SIZE + t;

    xy[t] = (t > 0 && i - 1 < n) ? in[i - 1] : 0.0f;   // <-- the bug: shifted load

    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        float temp = 0.0f;
        if (t >= stride) temp = xy[t] + xy[t - stride];
        __syncthreads();
        if (t >= stride) xy[t] = temp;
    }
    if (i < n) out[i] = xy[t];
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n) {
    if (n <= 0) return;
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, static_cast<size_t>(n));
}

// BUG: the launcher "validates" its size by throwing a C++ exception for n above one million,
//      which nothing in the submission catches. For other sizes the kernel is correct.
// EXPECTED SYMPTOM: the cases with n > 1,000,000 report status `exception` naming
//      std::length_error and its message (not a CUDA error: the GPU did nothing wrong); the
//      cases after each of them still run, in a fresh runner process, and pass when small.

#include <cuda_runtime.h>
#include <cstddef>
#include <stdexcept>

namespace {

constexpr unsigned int SECTION_SIZE = 1024;

__global__ void kogge_stone_scan_kernel(const float* in, float* out, size_t n)
{
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    const size_t i = static_cast<size_t>(blockIdx.x) * SECTION_SIZE + t;
    xy[t] = (i < n) ? in[i] : 0.0f;
    for (unsigned int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        const float temp = t >= stride ? xy[t] + xy[t - stride] : 0.0f;
        __syncthreads();
        if (t >= stride) xy[t] = temp;
    }
    if (i < n) out[i] = xy[t];
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n > 1'000'000) throw std::length_error("scan_kogge_stone: n is too large for this implementation");
    const unsigned int blocks = (static_cast<unsigned int>(n) + SECTION_SIZE - 1) / SECTION_SIZE;
    kogge_stone_scan_kernel<<<blocks, SECTION_SIZE>>>(in, out, static_cast<size_t>(n));
}

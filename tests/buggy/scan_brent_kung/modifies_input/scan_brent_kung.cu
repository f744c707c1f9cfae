// BUG: modifies its input. The scan is correct, but the kernel also writes every result back
//      into `in` (through a const_cast), as if scanning in place. Each block reads its whole
//      section before anything is written, so the output is still right.
// EXPECTED SYMPTOM: correct output in every case, but "input modified" (in[i] now holds the
//      scan of its section) in every case where some section has a nonzero prefix before its
//      last element, i.e. essentially all cases; for n = 1 the write stores in[0] unchanged,
//      so that case may pass. No CUDA error, no writes outside the buffers.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;

__global__ void brent_kung_scan_kernel(const float* in, float* out, size_t n) {
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

    float* in_rw = const_cast<float*>(in);   // <-- the bug: writes the results into the input
    if (i0 < n) { out[i0] = xy[t]; in_rw[i0] = xy[t]; }
    if (i1 < n) { out[i1] = xy[t + BLOCK_SIZE]; in_rw[i1] = xy[t + BLOCK_SIZE]; }
}

}  // namespace

void scan_brent_kung(const float* in, float* out, int n) {
    if (n <= 0) return;
    const unsigned int blocks =
        static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    brent_kung_scan_kernel<<<blocks, BLOCK_SIZE>>>(in, out, static_cast<size_t>(n));
}

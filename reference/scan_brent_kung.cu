// Reference for scan_brent_kung (hidden from students).
//
// Inclusive scan of each 2048-element section independently:
//     out[i] = in[s] + ... + in[i],   s = i - i % 2048.
// One block of 1024 threads per section; thread t loads elements t and t + 1024 of its section
// (two coalesced loads), then the Brent-Kung scan of PMPP chapter 11 runs in shared memory:
//   1. reduction tree (up-sweep): with stride 1, 2, 4, ..., 1024, position
//      index = (t + 1) * 2 * stride - 1 adds the element `stride` before it. Afterwards every
//      position of the form k * 2^j - 1 holds the sum of the 2^j elements ending there.
//   2. distribution tree (down-sweep): with stride 512, 256, ..., 1, position
//      index = (t + 1) * 2 * stride - 1 (a finished prefix) is added into position
//      index + stride, completing the partial sums between the tree's nodes.

#include <cuda_runtime.h>
#include <cstddef>

namespace {

constexpr unsigned int BLOCK_SIZE = 1024;              // threads per block
constexpr unsigned int SECTION_SIZE = 2 * BLOCK_SIZE;  // elements per section

__global__ void brent_kung_scan_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n)
{
    __shared__ float xy[SECTION_SIZE];
    const unsigned int t = threadIdx.x;
    // First element of this block's section; size_t so that the product cannot overflow.
    const size_t start = static_cast<size_t>(blockIdx.x) * SECTION_SIZE;
    const size_t i0 = start + t;               // first half of the section
    const size_t i1 = start + t + BLOCK_SIZE;  // second half

    // Two coalesced loads; positions past the end of the array are 0.
    xy[t] = (i0 < n) ? in[i0] : 0.0f;
    xy[t + BLOCK_SIZE] = (i1 < n) ? in[i1] : 0.0f;

    // Up-sweep (reduction tree). (t + 1) * 2 * stride <= 1024 * 2048: fits in unsigned int.
    for (unsigned int stride = 1; stride <= BLOCK_SIZE; stride *= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * 2 * stride - 1;
        if (index < SECTION_SIZE) xy[index] += xy[index - stride];
    }
    // Down-sweep (distribution tree).
    for (unsigned int stride = SECTION_SIZE / 4; stride > 0; stride /= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * 2 * stride - 1;
        if (index + stride < SECTION_SIZE) xy[index + stride] += xy[index];
    }
    __syncthreads();

    // Two coalesced stores; only in-range elements are written.
    if (i0 < n) out[i0] = xy[t];
    if (i1 < n) out[i1] = xy[t + BLOCK_SIZE];
}

}  // namespace

void scan_brent_kung(const float* in, float* out, int n)
{
    if (n <= 0) return;
    const unsigned int blocks = static_cast<unsigned int>((static_cast<size_t>(n) + SECTION_SIZE - 1) / SECTION_SIZE);
    brent_kung_scan_kernel<<<blocks, BLOCK_SIZE>>>(in, out, static_cast<size_t>(n));
}

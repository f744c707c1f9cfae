// The victim of pumps_pcie_beside_neighbour (see scan_kogge_stone.cu there): an honest scan_brent_kung
// that computes every result on the GPU, correct but deliberately slow (about 3% of the reference's
// speed on an H100): 512 threads in all, each scanning whole 2048-element sections one element after
// the other. No __shared__ memory and no __syncthreads(): those techniques are reported missing,
// which costs nothing under the rubric's "report"; computes_on_gpu must not be.

#include <cuda_runtime.h>

namespace {

constexpr long long SECTION_SIZE = 2048;

__global__ void slow_section_scan(const float* in, float* out, int n)
{
    const long long sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < sections;
         s += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long begin = s * SECTION_SIZE, end = begin + SECTION_SIZE < n ? begin + SECTION_SIZE : n;
        float sum = 0.0f;
#pragma unroll 1
        for (long long i = begin; i < end; ++i) {
            sum += in[i];
            out[i] = sum;
        }
    }
}

}  // namespace

void scan_brent_kung(const float* in, float* out, int n)
{
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

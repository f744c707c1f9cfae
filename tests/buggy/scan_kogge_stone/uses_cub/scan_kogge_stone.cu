// BUG: the scan is done by CUB's BlockScan instead of the student's own Kogge-Stone code.
// EXPECTED SYMPTOM: every case passes, but the grader detects CUB (in the source and in the
//      linked runner's symbols) and the rubric's default takes the exercise's points.

#include <cuda_runtime.h>
#include <cub/block/block_scan.cuh>

namespace {

constexpr int SECTION_SIZE = 1024;

__global__ void cub_section_scan(const float* in, float* out, int n)
{
    using BlockScan = cub::BlockScan<float, SECTION_SIZE>;
    __shared__ typename BlockScan::TempStorage temp;
    const long long i = static_cast<long long>(blockIdx.x) * SECTION_SIZE + threadIdx.x;
    float value = i < n ? in[i] : 0.0f;
    BlockScan(temp).InclusiveSum(value, value);
    if (i < n) out[i] = value;
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    const int blocks = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    cub_section_scan<<<blocks, SECTION_SIZE>>>(in, out, n);
}

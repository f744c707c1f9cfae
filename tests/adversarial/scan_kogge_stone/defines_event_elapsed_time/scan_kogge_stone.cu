// ATTACK: the file defines the CUDA runtime's cudaEventElapsedTime, which the runner's object calls
//      (its timing server and calibration time GPU work with it), so that any event interval
//      "takes" 0.001 ms. Linked before the static CUDA runtime, the submission's definition would be
//      the one the runner calls. The launcher is a correct but deliberately slow scan: any speed
//      points could only come from the forged times.
// EXPECTED VERDICT: invalid_submission before anything runs (a definition of a CUDA runtime entry
//      point); the message names cudaEventElapsedTime; 0 points.

#include <cuda_runtime.h>

extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end)
{
    (void)start, (void)end;
    if (ms != nullptr) *ms = 0.001f;
    return cudaSuccess;
}

namespace {

// Correct but deliberately slow (about 3% of the reference's speed on an H100): 512 threads in
// all, each scanning whole 1024-element sections one element after the other.
constexpr long long SECTION_SIZE = 1024;

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

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

// ATTACK: the launcher, on its first call, takes nearly all free GPU memory (cudaMalloc in 1 GiB
//      and then 64 MiB blocks, each written once, until 1 GiB is left) and keeps it for the life of
//      the runner (renamed "grader_gpu_hog"); it then scans correctly, but deliberately slowly
//      (about 3% of the reference's speed on an H100), in the memory left. In the same submission,
//      scan_brent_kung.cu is a copy of the reference, graded after this exercise on the same GPU.
// EXPECTED VERDICT: grade survives; this exercise is graded with no speed points (whether its own
//      cases fit in what is left is its own business); no grader_gpu_hog is left; the memory is
//      freed when the exercise ends, so scan_brent_kung, graded next, still scores full marks.

#include <cuda_runtime.h>

#include <vector>

#include <sys/prctl.h>

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

std::vector<void*> held;

void hog_gpu_memory(std::size_t leave)
{
    ::prctl(PR_SET_NAME, "grader_gpu_hog", 0, 0, 0);
    for (std::size_t block : {std::size_t{1} << 30, std::size_t{64} << 20}) {
        for (;;) {
            std::size_t free_bytes = 0, total_bytes = 0;
            if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess || free_bytes < leave + block) break;
            void* p = nullptr;
            if (cudaMalloc(&p, block) != cudaSuccess) break;
            cudaMemset(p, 0x5a, block);
            held.push_back(p);
        }
    }
    cudaDeviceSynchronize();
    cudaGetLastError();   // a failed allocation must not look like the scan's error
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    static const bool hogged = (hog_gpu_memory(std::size_t{1} << 30), true);
    (void)hogged;
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

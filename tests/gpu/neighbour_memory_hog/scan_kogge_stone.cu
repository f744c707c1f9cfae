// ATTACK (red team 16, for check_neighbour_memory.sh): a submission whose runner takes the GPU's
//      memory from ANOTHER student's grading on the same GPU (`grade class` grades two at once on
//      each GPU, sharing its places: one per 3.5 GiB). 15 s after its first call (each call until
//      then waits 1.5 s on the host clock) the launcher takes all free GPU memory but 256 MiB (cudaMalloc in 1 GiB, then 64 MiB blocks, each written once) and
//      keeps it; for the first 90 s after that, every call also waits 1.5 s on the host clock (well
//      inside the case's limit), so the runner, and the memory, live on through many cases. It then
//      scans correctly, slowly, in what is left. Only calls an honest launcher makes (the CUDA
//      runtime's memory calls, a clock): the build's code checks pass it.
// EXPECTED VERDICT (for the neighbour): a student graded beside it loses nothing (every exercise
//      full marks); this exercise's own points are its business.

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <vector>

namespace {

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
    cudaGetLastError();  // a failed allocation must not look like the scan's error
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    using Clock = std::chrono::steady_clock;
    // The hog starts 15 s after the first call (red team 16b): a neighbour started at the runner's
    // start has calibrated by then, and its own runner and timings meet the hog.
    static const Clock::time_point first_call = Clock::now();
    static Clock::time_point hogged_at{};
    if (hogged_at == Clock::time_point{} && Clock::now() - first_call >= std::chrono::seconds(15)) {
        hog_gpu_memory(std::size_t{256} << 20);
        hogged_at = Clock::now();
    }
    if (hogged_at == Clock::time_point{} || Clock::now() - hogged_at < std::chrono::seconds(90)) {
        const Clock::time_point until = Clock::now() + std::chrono::milliseconds(1500);
        while (Clock::now() < until) {
        }
    }
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

// ATTACK: cached replay. The first call for a given n computes the scan (correctly, but slowly) and
//      keeps a copy of the output; every later call with the same n copies that output back and
//      then spins on the GPU for n / 400 ns, so that copy and spin together take about the
//      reference's time on an H100 and the timing and the bandwidth look plausible. Against a
//      grader that re-runs the checked input for its timed repetitions, that is full marks with no
//      fast kernel at all.
// EXPECTED VERDICT: every timed repetition runs on inputs the grader's timing server writes from a
//      fresh seed, in its own buffers, and it checksums every repetition's output: the timed case
//      n=67108864/int is wrong and the exercise gets no speed points. A case that is the first with its n is genuine
//      (n=1/int passes: the checked run computes, its repeat replays the same input). Cases that
//      share an n with an earlier case (n=1025/frac after n=1025/int, ...) get the earlier case's
//      output and may fail too.

#include <cuda_runtime.h>

#include <map>

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

// Waits `ns` nanoseconds of GPU time (the %globaltimer clock), doing nothing.
__global__ void spin(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

std::map<int, float*> cached_outputs;   // n -> a device copy of the first output computed for n

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    const auto cached = cached_outputs.find(n);
    if (cached != cached_outputs.end()) {
        cudaMemcpyAsync(out, cached->second, bytes, cudaMemcpyDeviceToDevice);
        spin<<<1, 1>>>(static_cast<unsigned long long>(n) / 400);
        return;
    }
    slow_section_scan<<<16, 32>>>(in, out, n);
    float* copy = nullptr;
    if (cudaMalloc(&copy, bytes) == cudaSuccess) {
        cudaMemcpyAsync(copy, out, bytes, cudaMemcpyDeviceToDevice);
        cached_outputs[n] = copy;
    }
}

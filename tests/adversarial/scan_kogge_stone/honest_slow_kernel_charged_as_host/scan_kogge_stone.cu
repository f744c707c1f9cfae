// ATTACK (red team 15 of computes_on_gpu, a false positive): an HONEST launcher, every result
//      computed by its kernel on the GPU, that is slow: about 2.5 s a call from n = 10^7 on (the
//      correct section scan of the adversarial tests, 512 threads each scanning whole sections,
//      then a kernel that spins 2.5 s by the SM's clock; it stands for any honest kernel that
//      takes seconds a call at that size: a one-thread scan, an O(n^2) whole-array scan). Each of
//      its cases passes within its limit (2 calls of 2.5 s at n = 10^7: 5 s of 10.2 s; the speed
//      case's checked run 5 s of 11.3 s), and the speed case's timing (18 calls or more) cannot
//      finish within the case's 31.3 s: before session 15 that left computes_on_gpu "not checked"
//      and the file kept the correctness points of its 24 passing cases. Now check_host_link_again
//      (grading/src/grader.cpp) runs n=10000000/int again, timed in turns, in a case limit of
//      10.2 + 20 s; its checked run and warm-up batch alone take 5 + 20 s, the first counted batch
//      another 20 s: the timing does not finish, and "it passed, and its timed calls did not
//      finish within the case's time limit, so nothing showed that they compute on the GPU"
//      withholds the evidence: computes_on_gpu FALSE, 0 points, and the message tells the student
//      that the launcher moved its data to the host. Any honest kernel whose calls at its largest
//      passing visible case take between 1.7 s (30 s / 18 calls) and 5 s (10 s / 2 calls) is
//      charged so; the case run again has a far shorter limit per call than its checked run.
// EXPECTED VERDICT: graded, every case passes, computes_on_gpu not missing (not checked, as a
//      speed case that was not timed leaves it), so the code techniques the slow scan lacks are
//      the only ones missing and cost nothing under the default rubric; 0 speed points. A timing
//      that does not finish is no evidence of a host computation: the case run again should get
//      a limit that fits its calls (its checked run's time per call), or leave the check undecided.

#include <cuda_runtime.h>

namespace {

// Correct but deliberately slow (about 3% of the reference's speed on an H100): 512 threads in
// all, each scanning whole 1024-element sections one element after the other.
constexpr long long SECTION_SIZE = 1024;
constexpr int kSlowFromN = 10000000;
constexpr double kSpinSeconds = 2.5;  // at the SM's highest clock; longer where it runs slower

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

__device__ long long spin_sink;

__global__ void spin(long long cycles)
{
    const long long start = clock64();
    long long now = start;
    while (now - start < cycles) now = clock64();
    spin_sink = now;
}

long long spin_cycles()
{
    int device = 0, khz = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) != cudaSuccess ||
        khz <= 0)
        khz = 1980000;  // an H100's highest SM clock
    return static_cast<long long>(kSpinSeconds * 1e3 * static_cast<double>(khz));
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    slow_section_scan<<<16, 32>>>(in, out, n);
    if (n >= kSlowFromN) spin<<<1, 1>>>(spin_cycles());
}

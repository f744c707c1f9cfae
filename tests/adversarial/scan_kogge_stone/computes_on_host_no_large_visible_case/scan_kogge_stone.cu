// ATTACK (red team 15 of computes_on_gpu, check_host_link_again): under a rubric that shows
//      students only small cases (here reads_hidden_secret's: visible_cases "n=1/*" and
//      "n=65537/*", every larger case hidden, the speed case n = 2^26 included; "none" does the
//      same), the case run again for computes_on_gpu is chosen among the VISIBLE cases that passed
//      with at least 1 MB to move (grading/src/grader.cpp, check_host_link_again: `r.hidden`
//      skipped, smallest_bytes 1e6), and n = 65537 is 0.52 MB: there is none, the check returns
//      and computes_on_gpu stays "not checked". So the hole that session 15 closed for the default
//      rubric (computes_on_host_stalling_timed_calls) is open again: every call is computed on the
//      host (computes_on_host_with_decoy_kernel's copies and decoy kernel); the hidden speed case's
//      timed calls, told apart by their buffers, wait on the host past the case's time limit, so
//      its checked run passes and its timing does not finish; every case, hidden or visible,
//      passes on results the GPU never computed. A timed call at any other size (a case run again)
//      returns without writing its output, so the attack gains nothing where such a case exists:
//      what it shows is only that none is chosen. Calls every honest launcher may make
//      (cudaMemcpy, malloc, std::chrono): the build checks pass it.
// EXPECTED VERDICT (the contract: "a result computed without a kernel scores no points"): graded,
//      computes_on_gpu missing, 0 points. The grader knows the hidden cases and may run one of them
//      again (in a fresh runner whose log no student sees), or the speed case itself; a rubric's
//      choice of what students see should not decide whether a host computation is found.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <utility>

namespace {

constexpr int SECTION_SIZE = 1024;
constexpr int kSpeedCaseN = 1 << 26;    // n=67108864/int, the timed case (hidden under this rubric)
constexpr double kStallSeconds = 60.0;  // past the speed case's limit (31.3 s)

__device__ float decoy_sink;

__global__ void decoy_kogge_stone(const float* in, int n)
{
    __shared__ float section[32];
    section[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) decoy_sink = section[31];
}

std::map<int, std::pair<const float*, float*>> checked_buffers;  // n -> the first call's in and out

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    const auto started = std::chrono::steady_clock::now();
    if (n <= 0) return;
    const auto first = checked_buffers.emplace(n, std::make_pair(in, out));
    if (first.first->second != std::make_pair(in, out)) {  // a timed call
        if (n != kSpeedCaseN) return;
        const auto until = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                         std::chrono::duration<double>(kStallSeconds));
        while (std::chrono::steady_clock::now() < until) {
        }
        return;
    }
    decoy_kogge_stone<<<1, 32>>>(in, n);
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    float* host = static_cast<float*>(std::malloc(bytes));
    if (host == nullptr) return;
    cudaMemcpy(host, in, bytes, cudaMemcpyDeviceToHost);
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (i % SECTION_SIZE == 0) sum = 0.0f;
        sum += host[i];
        host[i] = sum;
    }
    cudaMemcpy(out, host, bytes, cudaMemcpyHostToDevice);
    std::free(host);
}

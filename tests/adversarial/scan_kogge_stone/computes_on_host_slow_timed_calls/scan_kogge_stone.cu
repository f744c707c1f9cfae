// ATTACK (red team 15 of computes_on_gpu, check_host_link_again): a scan computed on the host
//      whose timed calls are made slow, so that the control record_host_link compares them with
//      (the reference's traffic "at its rate over the submission's (longer) windows",
//      grading/src/build/technique.cpp) grows with the submission's own time until it explains
//      every byte the submission moved. The control is reference_per_call * student_ms /
//      reference_ms: an H100's reference moves some 0.03 MB a call (launches, syncs, the grader's
//      NVML reads) in a fraction of a millisecond, so a call of 3.2 s is allowed some 200-500 MB
//      of "machine traffic". At the speed case (n = 2^26, 537 MB a call to move) the case's time
//      limit does not leave room for calls slow enough (some 10 s each); so the speed case's timed
//      calls stall past the limit (its checked run passes, its timing does not finish), and the
//      case the grader runs again for computes_on_gpu is n=10000000/int: 80 MB to move, 91 MB
//      counted a call. There, the first 8 timed calls (the warm-up batch, whose traffic is not
//      read) are quick and every later one waits on the host until 3.2 s have passed since it
//      began: one counted batch of 25.6 s (the 8-second cap ends the timing after it), 26 s of the
//      case's 30.2 s. Its calls move 91 MB + 5 MB of idle traffic each, the control is far above
//      91 - 12 MB, so computes_on_gpu is "not checked" ("no more than the machine's traffic beside
//      them explains") and every one of the 24 cases keeps its points for a scan the GPU never did.
//      Every call: the input copied to the host, scanned there, copied back; a decoy kernel with
//      __shared__ and __syncthreads() (computes_on_host_with_decoy_kernel). Timed calls are told
//      apart by their buffers (the timing server's, never seen in a checked run), as
//      skips_timed_outputs does. Calls every honest launcher may make (cudaMemcpy, malloc,
//      std::chrono): the build checks pass it.
// EXPECTED VERDICT (the contract: "a result computed without a kernel scores no points"): graded,
//      computes_on_gpu missing, 0 points. A submission's slowness must not buy it an allowance
//      of traffic: the reference's bytes scaled by the submission's time should not exceed what
//      the machine's traffic over that time can be (its idle rate, or the reference's bytes per
//      batch, not per millisecond), or a call that moved most of its data should not be excused.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <utility>

namespace {

constexpr int SECTION_SIZE = 1024;
constexpr int kSpeedCaseN = 1 << 26;          // n=67108864/int, the timed case (grade --list)
constexpr int kWarmupCalls = 8;               // the timing's warm-up batch: reps_per_batch calls
constexpr double kSlowCallSeconds = 3.2;      // each counted timed call, from its start
constexpr double kStallSeconds = 60.0;        // the speed case's timed calls: past its limit

__device__ float decoy_sink;

__global__ void decoy_kogge_stone(const float* in, int n)
{
    __shared__ float section[32];
    section[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) decoy_sink = section[31];
}

std::map<int, std::pair<const float*, float*>> checked_buffers;  // n -> the first call's in and out
std::map<int, int> timed_calls;                                   // n -> timed calls so far

void scan_on_host(const float* in, float* out, int n)
{
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
    cudaDeviceSynchronize();
    std::free(host);
}

void wait_until(std::chrono::steady_clock::time_point started, double seconds)
{
    const auto until = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(seconds));
    while (std::chrono::steady_clock::now() < until) {
    }
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    const auto started = std::chrono::steady_clock::now();
    if (n <= 0) return;
    decoy_kogge_stone<<<1, 32>>>(in, n);
    scan_on_host(in, out, n);
    const auto first = checked_buffers.emplace(n, std::make_pair(in, out));
    if (first.first->second == std::make_pair(in, out)) return;  // a checked call (or its repeat)
    const int call = ++timed_calls[n];
    if (n == kSpeedCaseN)
        wait_until(started, kStallSeconds);
    else if (call > kWarmupCalls)
        wait_until(started, kSlowCallSeconds);
}

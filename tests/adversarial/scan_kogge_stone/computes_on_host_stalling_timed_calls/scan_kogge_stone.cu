// ATTACK (the lead's review of computes_on_gpu, session 15): every checked call is computed on the
//      host (computes_on_host_with_decoy_kernel's copies and decoy kernel), and a timed call, told
//      apart by its buffers as skips_timed_outputs does (the timing server's, never seen for that
//      n), keeps the timing from showing anything: at the speed case's size it stalls the GPU for
//      a minute, so the timing does not finish within the case's time limit; at any other size it
//      traps. On main before, the speed case passed its checked run and only its timing was
//      missing: every correctness point (24 of 24) for a scan the GPU never computed.
// EXPECTED VERDICT: the stalled speed case passes (its checked run) and is not timed; the largest
//      other case that passed runs once more, timed, and its timed call traps: the submission kept
//      its calls from showing that they compute on the GPU. computes_on_gpu false, 0 points.

#include <cuda_runtime.h>

#include <cstdlib>
#include <map>
#include <utility>

namespace {

constexpr int SECTION_SIZE = 1024;
constexpr int kSpeedCaseN = 1 << 26;  // n=67108864/int, the timed case (grade --list)

__device__ float decoy_sink;

__global__ void decoy_kogge_stone(const float* in, int n)
{
    __shared__ float section[32];
    section[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) decoy_sink = section[31];
}

// About a minute at 2 GHz: longer than the timed case's limit.
__global__ void stall(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
    decoy_sink = 1.0f;
}

__global__ void fail() { __trap(); }

std::map<int, std::pair<const float*, float*>> checked_buffers;  // n -> the first call's in and out

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    const auto first = checked_buffers.emplace(n, std::make_pair(in, out));
    if (first.first->second != std::make_pair(in, out)) {  // a timed call
        if (n == kSpeedCaseN)
            stall<<<1, 1>>>(120LL * 1000 * 1000 * 1000);
        else
            fail<<<1, 1>>>();
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

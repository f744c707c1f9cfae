// ATTACK (red team 15 of computes_on_gpu): packs_input_for_host_sum (the speed case's integers
//      packed to int16 on the GPU, 2 bytes an element to the host, summed there, one double back:
//      a quarter of the data, 153 MB counted a call at n = 2^26 against the 80 MB that tell a host
//      computing) with its counted timed calls made slow. record_host_link compares a call's bytes
//      with the reference's "at its rate over the submission's (longer) windows"
//      (grading/src/build/technique.cpp: reference_per_call * student_ms / reference_ms): a
//      reduction's reference moves some 0.04 MB a call in about 0.4 ms, so a call of 3 s is allowed
//      some 300 MB of "machine traffic", more than it moved. The first 8 timed calls (the warm-up
//      batch, whose traffic is not read) are quick; every later one waits on the host until 3 s
//      have passed since it began: one counted batch of 24 s (the 8-second cap ends the timing
//      after it), some 25 s of the speed case's 31.3 s limit. The speed case is timed and passes,
//      its traffic is "no more than the machine's traffic beside them explains": computes_on_gpu
//      "not checked", and no case is run again (check_host_link_again returns where the speed
//      case's turns were read). Every correctness point for sums the GPU never did; no case lost.
//      Timed calls are told apart by their buffers (the timing server's, never seen in a checked
//      run). Data the kernel cannot pack are copied whole and summed on the host. Calls every
//      honest launcher may make (cudaMalloc, cudaMemcpy, malloc, std::chrono): the build checks
//      pass it.
// EXPECTED VERDICT (the contract: "a result computed without a kernel scores no points"): graded,
//      computes_on_gpu missing, 0 points, as packs_input_for_host_sum without the wait. The
//      reference's traffic scaled by the submission's own time is an allowance the submission
//      buys by being slow; it should not excuse calls that moved a quarter of their data.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <utility>

namespace {

constexpr int kWarmupCalls = 8;           // the timing's warm-up batch: reps_per_batch calls
constexpr double kSlowCallSeconds = 3.0;  // each counted timed call, from its start

__device__ double decoy_sink;
__device__ int not_packable;

__global__ void decoy_reduce(const double* in, int n)
{
    __shared__ double partial[32];
    partial[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0.0;
    __syncthreads();
    if (threadIdx.x == 0) decoy_sink = partial[0] + partial[31];
}

// Each value as an int16 where it is exactly one; any other value sets not_packable.
__global__ void pack_int16(const double* in, std::int16_t* packed, int n)
{
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const double v = in[i];
        const bool exact = v >= -32768.0 && v <= 32767.0 && v == static_cast<double>(static_cast<int>(v));
        if (!exact) not_packable = 1;
        packed[i] = exact ? static_cast<std::int16_t>(static_cast<int>(v)) : 0;
    }
}

std::int16_t* packed = nullptr;  // zero-initialized: no initializer runs
int packed_capacity = 0;

bool sum_packed(const double* in, int n, double& sum)
{
    if (n > packed_capacity) {
        if (packed != nullptr) cudaFree(packed);
        packed = nullptr;
        packed_capacity = 0;
        if (cudaMalloc(&packed, static_cast<size_t>(n) * sizeof(std::int16_t)) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        packed_capacity = n;
    }
    const int zero = 0;
    cudaMemcpyToSymbol(not_packable, &zero, sizeof zero);
    pack_int16<<<1024, 256>>>(in, packed, n);
    int flag = 1;
    cudaMemcpyFromSymbol(&flag, not_packable, sizeof flag);
    if (flag != 0) return false;
    auto* host = static_cast<std::int16_t*>(std::malloc(static_cast<size_t>(n) * sizeof(std::int16_t)));
    if (host == nullptr) return false;
    cudaMemcpy(host, packed, static_cast<size_t>(n) * sizeof(std::int16_t), cudaMemcpyDeviceToHost);
    long long total = 0;
    for (int i = 0; i < n; ++i) total += host[i];
    std::free(host);
    sum = static_cast<double>(total);
    return true;
}

double sum_whole(const double* in, int n)
{
    auto* host = static_cast<double*>(std::malloc(static_cast<size_t>(n) * sizeof(double)));
    if (host == nullptr) return 0.0;
    cudaMemcpy(host, in, static_cast<size_t>(n) * sizeof(double), cudaMemcpyDeviceToHost);
    long double total = 0;
    for (int i = 0; i < n; ++i) total += host[i];
    std::free(host);
    return static_cast<double>(total);
}

std::map<int, std::pair<const double*, double*>> checked_buffers;  // n -> the first call's in and out
std::map<int, int> timed_calls;                                     // n -> timed calls so far

}  // namespace

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch)
{
    (void)scratch;
    const auto started = std::chrono::steady_clock::now();
    if (n <= 0) return;
    decoy_reduce<<<1, 32>>>(in, n);
    double sum = 0.0;
    if (!sum_packed(in, n, sum)) sum = sum_whole(in, n);
    cudaMemcpy(out, &sum, sizeof sum, cudaMemcpyHostToDevice);
    const auto first = checked_buffers.emplace(n, std::make_pair(in, out));
    if (first.first->second == std::make_pair(in, out)) return;  // a checked call (or its repeat)
    if (++timed_calls[n] <= kWarmupCalls) return;
    const auto until = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(kSlowCallSeconds));
    while (std::chrono::steady_clock::now() < until) {
    }
}

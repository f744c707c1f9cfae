// ATTACK (red team 14 of computes_on_gpu): a reduction summed on the host while the GPU's PCIe
//      counters show too little traffic to tell. A reduction's output is one double, so what a call
//      must read and write is nearly all input: 8 bytes an element. The speed case's data are
//      integers in [-1000, 1000] (reduction_family.cpp, timed_values), exact in 16 bits: a "packing"
//      kernel converts each double to an int16 (and flags any value that is not such an integer),
//      2 bytes an element go to the host, the host adds them exactly in 64-bit integers, and the one
//      double goes back. A call moves a quarter of its data (268 MB of the 1074 MB at n = 2^27),
//      under the check's first rule of half, so computes_on_gpu was found TRUE for a sum the GPU
//      never did. Data the kernel cannot pack (mixed magnitudes, fractions) are copied whole and
//      summed on the host in long double: the checked cases pass on host sums too. A decoy kernel
//      with __shared__, __syncthreads() and a double add shows every code technique. Calls every
//      honest launcher may make (cudaMalloc, cudaMemcpy, malloc): the build checks pass it.
// EXPECTED VERDICT (the contract: "a result computed without a kernel scores no points"): graded,
//      computes_on_gpu missing, 0 points. Copying the input to the host without the GPU combining
//      elements moves at least its entropy: 11 bits of 64 for these integers, 17% of the data; the
//      rule now calls a call "on the host" from 15% of its data more than the reference's (honest
//      launchers move about 0.005%; a host that finishes the blocks' partial sums some 0.4%).

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

namespace {

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

}  // namespace

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch)
{
    (void)scratch;
    if (n <= 0) return;
    decoy_reduce<<<1, 32>>>(in, n);
    double sum = 0.0;
    if (!sum_packed(in, n, sum)) sum = sum_whole(in, n);
    cudaMemcpy(out, &sum, sizeof sum, cudaMemcpyHostToDevice);
}

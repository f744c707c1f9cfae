#include "timed_runs.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "harness/poison.hpp"
#include "harness/variant.hpp"

namespace harness::runner {
namespace {

constexpr int threads = 256;

int blocks_for(std::size_t elements)
{
    return static_cast<int>(std::min<std::size_t>((elements + threads - 1) / threads, 4096));
}

// variant[i] = -original[i] where the key flips element i, else original[i].
template <typename T>
__global__ void make_variant(const T* original, T* variant, std::size_t n, std::uint64_t key)
{
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        variant[i] = variant_flips(key, i) ? -original[i] : original[i];
}

// Sum (mod 2^64) of checksum_term over the output: per thread, then per warp, one atomic per warp.
template <typename T>
__global__ void sum_checksum_terms(const T* out, std::size_t n, unsigned long long* sum)
{
    unsigned long long partial = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        partial += checksum_term(i, out[i]);
    for (int offset = 16; offset > 0; offset /= 2) partial += __shfl_down_sync(0xffffffffu, partial, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(sum, partial);
}

}  // namespace

TimedRuns::TimedRuns(GuardedBuffer& in, GuardedBuffer& out, bool f64, std::size_t l2_bytes)
    : in_(in),
      out_(out),
      f64_(f64),
      elements_(in.data_bytes() / (f64 ? 8 : 4)),
      flush_bytes_(std::max<std::size_t>(2 * l2_bytes, std::size_t(64) << 20))
{
    CUDA_CHECK(cudaMalloc(&original_, in.data_bytes()));
    CUDA_CHECK(cudaMemcpy(original_, in.data(), in.data_bytes(), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
    CUDA_CHECK(cudaMalloc(&sum_, sizeof *sum_));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
}

TimedRuns::~TimedRuns()
{
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaFree(sum_);
    cudaFree(flush_);
    cudaFree(original_);
}

void TimedRuns::prepare(std::uint64_t key)
{
    const int blocks = blocks_for(elements_);
    if (f64_)
        make_variant<<<blocks, threads>>>(static_cast<const double*>(original_), static_cast<double*>(in_.data()),
                                          elements_, key);
    else
        make_variant<<<blocks, threads>>>(static_cast<const float*>(original_), static_cast<float*>(in_.data()),
                                          elements_, key);
    CUDA_CHECK(cudaGetLastError());
    out_.fill(f64_ ? unwritten_f64 : unwritten_f32);
    CUDA_CHECK(cudaMemsetAsync(flush_, static_cast<int>(++flushes_ & 0xff), flush_bytes_));
    CUDA_CHECK(cudaDeviceSynchronize());
}

float TimedRuns::launch(const std::string& exercise, const LauncherArgs& args)
{
    CUDA_CHECK(cudaEventRecord(start_));
    call_launcher(exercise, args);
    CUDA_CHECK(cudaEventRecord(stop_));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
}

std::uint64_t TimedRuns::checksum()
{
    const std::size_t n = out_.data_bytes() / (f64_ ? 8 : 4);
    CUDA_CHECK(cudaMemset(sum_, 0, sizeof *sum_));
    if (f64_)
        sum_checksum_terms<<<blocks_for(n), threads>>>(static_cast<const double*>(out_.data()), n, sum_);
    else
        sum_checksum_terms<<<blocks_for(n), threads>>>(static_cast<const float*>(out_.data()), n, sum_);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long sum = 0;
    CUDA_CHECK(cudaMemcpy(&sum, sum_, sizeof sum, cudaMemcpyDeviceToHost));
    return sum;
}

}  // namespace harness::runner

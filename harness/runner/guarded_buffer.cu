#include "guarded_buffer.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "harness/poison.hpp"
#include "harness/timed_data.hpp"

namespace harness::runner {
namespace {

template <typename Word>
__global__ void fill_words(Word* words, std::size_t count, Word pattern)
{
    // Grid-stride loop: one launch covers any size.
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        words[i] = pattern;
}

void fill_device(void* start, std::size_t bytes, std::size_t element_bytes, std::uint64_t pattern)
{
    if (bytes == 0) return;
    const unsigned blocks = 1024, threads = 256;
    if (element_bytes == 8)
        fill_words<<<blocks, threads>>>(static_cast<std::uint64_t*>(start), bytes / 8, pattern);
    else
        fill_words<<<blocks, threads>>>(static_cast<std::uint32_t*>(start), bytes / 4,
                                        static_cast<std::uint32_t>(pattern));
    CUDA_CHECK(cudaGetLastError());
}

// A checksum's terms (harness/timed_data.hpp): of values (floats, doubles), or of exact bits (words).
struct ValueTerm {
    template <typename T>
    __device__ std::uint64_t operator()(std::uint64_t i, T value) const
    {
        return checksum_term(i, value);
    }
};
struct BitsTerm {
    template <typename Word>
    __device__ std::uint64_t operator()(std::uint64_t i, Word bits) const
    {
        return bits_term(i, bits);
    }
};

// Sum (mod 2^64) of term(i, data[i]): per thread, then per warp, one atomic per warp.
template <typename T, typename Term>
__global__ void sum_terms(const T* data, std::size_t n, unsigned long long* sum, Term term)
{
    unsigned long long partial = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        partial += term(i, data[i]);
    for (int offset = 16; offset > 0; offset /= 2) partial += __shfl_down_sync(0xffffffffu, partial, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(sum, partial);
}

template <typename T, typename Term>
std::uint64_t device_checksum(const T* data, std::size_t n, unsigned long long* device_sum, Term term)
{
    const unsigned threads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 4096));
    CUDA_CHECK(cudaMemset(device_sum, 0, sizeof *device_sum));
    if (n > 0) {
        sum_terms<<<blocks, threads>>>(data, n, device_sum, term);
        CUDA_CHECK(cudaGetLastError());
    }
    unsigned long long sum = 0;
    CUDA_CHECK(cudaMemcpy(&sum, device_sum, sizeof sum, cudaMemcpyDeviceToHost));
    return sum;
}

}  // namespace

void queue_values_checksum(const void* data, std::size_t count, bool f64, unsigned long long* device_sum)
{
    const unsigned threads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + threads - 1) / threads, 4096));
    CUDA_CHECK(cudaMemsetAsync(device_sum, 0, sizeof *device_sum));
    if (count == 0) return;
    if (f64)
        sum_terms<<<blocks, threads>>>(static_cast<const double*>(data), count, device_sum, ValueTerm{});
    else
        sum_terms<<<blocks, threads>>>(static_cast<const float*>(data), count, device_sum, ValueTerm{});
    CUDA_CHECK(cudaGetLastError());
}

GuardedBuffer::GuardedBuffer(std::size_t elements, std::size_t element_bytes)
    : elements_(elements), element_bytes_(element_bytes)
{
    CUDA_CHECK(cudaMalloc(&base_, total_bytes()));
}

GuardedBuffer::~GuardedBuffer()
{
    cudaFree(base_);
}

std::size_t GuardedBuffer::guard_bytes() const
{
    return static_cast<std::size_t>(guard_elements) * element_bytes_;
}

void GuardedBuffer::fill(std::uint64_t pattern)
{
    fill_device(base_, total_bytes(), element_bytes_, pattern);
    CUDA_CHECK(cudaDeviceSynchronize());
}

void GuardedBuffer::upload(const void* host, std::uint64_t guard_pattern)
{
    fill_device(base_, guard_bytes(), element_bytes_, guard_pattern);
    fill_device(base_ + guard_bytes() + data_bytes(), guard_bytes(), element_bytes_, guard_pattern);
    CUDA_CHECK(cudaMemcpy(data(), host, data_bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
}

void GuardedBuffer::download_all(void* host) const
{
    download_range(0, total_bytes(), host);
}

void GuardedBuffer::download_range(std::size_t byte_offset, std::size_t bytes, void* host) const
{
    CUDA_CHECK(cudaMemcpy(host, base_ + byte_offset, bytes, cudaMemcpyDeviceToHost));
}

std::uint64_t GuardedBuffer::values_checksum(bool f64, unsigned long long* device_sum) const
{
    if (f64) return device_checksum(static_cast<const double*>(data()), elements_, device_sum, ValueTerm{});
    return device_checksum(static_cast<const float*>(data()), elements_, device_sum, ValueTerm{});
}

std::uint64_t GuardedBuffer::bits_checksum(bool f64, unsigned long long* device_sum) const
{
    if (f64) return device_checksum(static_cast<const std::uint64_t*>(data()), elements_, device_sum, BitsTerm{});
    return device_checksum(static_cast<const std::uint32_t*>(data()), elements_, device_sum, BitsTerm{});
}

}  // namespace harness::runner

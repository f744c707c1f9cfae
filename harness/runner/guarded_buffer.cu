#include "guarded_buffer.hpp"

#include "harness/cuda_check.hpp"
#include "harness/poison.hpp"

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

}  // namespace

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

}  // namespace harness::runner

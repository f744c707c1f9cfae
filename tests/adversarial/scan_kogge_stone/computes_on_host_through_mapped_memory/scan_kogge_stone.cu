// ATTACK (red team 14 of computes_on_gpu): the scan done on the host, with no cudaMemcpy at all. The
//      launcher keeps a page-locked host buffer mapped into the GPU's address space (cudaHostAlloc
//      with cudaHostAllocMapped): a kernel copies the input into it (stores over PCIe), the host
//      scans each 1024-element section there, and a second kernel copies the result from it into
//      the output (loads over PCIe). Both kernels stage their element through __shared__ memory
//      between __syncthreads(), so every code technique shows. The question this asks of the
//      grader: are zero-copy accesses, the SMs' own reads and writes of host memory, counted by the
//      PCIe byte counters that NVML reads (fields 197/198), as DMA copies are?
// EXPECTED VERDICT: like computes_on_host_with_decoy_kernel: graded, every case right, and
//      computes_on_gpu missing (each timed call moves its input and its output over the link, some
//      540 MB at n = 2^26, the reference's calls a few kilobytes): 0 points. If the counters did
//      not count zero-copy traffic, this would keep every correctness point (mark it known_hole and
//      say so in docs/security.md).

#include <cuda_runtime.h>

namespace {

constexpr int SECTION_SIZE = 1024;
constexpr int BLOCK = 256;

// dst[i] = src[i], each element staged in shared memory between barriers.
__global__ void staged_copy(const float* src, float* dst, long long n)
{
    __shared__ float stage[BLOCK];
    for (long long base = blockIdx.x * static_cast<long long>(BLOCK); base < n;
         base += static_cast<long long>(gridDim.x) * BLOCK) {
        const long long i = base + threadIdx.x;
        stage[threadIdx.x] = i < n ? src[i] : 0.0f;
        __syncthreads();
        if (i < n) dst[i] = stage[threadIdx.x];
        __syncthreads();
    }
}

float* mapped_host = nullptr;    // zero-initialized: no initializer runs
float* mapped_device = nullptr;  // the same memory, as the GPU addresses it
long long mapped_capacity = 0;

bool mapped_buffer(long long n)
{
    if (n <= mapped_capacity) return true;
    if (mapped_host != nullptr) cudaFreeHost(mapped_host);
    mapped_host = mapped_device = nullptr;
    mapped_capacity = 0;
    if (cudaHostAlloc(reinterpret_cast<void**>(&mapped_host), static_cast<size_t>(n) * sizeof(float),
                      cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_device), mapped_host, 0) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    mapped_capacity = n;
    return true;
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0 || !mapped_buffer(n)) return;
    staged_copy<<<1024, BLOCK>>>(in, mapped_device, n);
    cudaDeviceSynchronize();
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (i % SECTION_SIZE == 0) sum = 0.0f;
        sum += mapped_host[i];
        mapped_host[i] = sum;
    }
    staged_copy<<<1024, BLOCK>>>(mapped_device, out, n);
}

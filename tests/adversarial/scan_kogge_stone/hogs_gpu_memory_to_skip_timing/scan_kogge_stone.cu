// ATTACK (red team 14 of computes_on_gpu): have the speed case not timed, so that computes_on_gpu is
//      "not checked", while every case, the speed case included, passes on results computed on the
//      host. The launcher is computes_on_host_with_decoy_kernel's (the input copied to the host,
//      scanned there, copied back; a decoy kernel with __shared__ and __syncthreads()), and on its
//      first call it also takes nearly all free GPU memory (cudaMalloc in 1 GiB, then 64 MiB blocks,
//      until 2 GiB are left) and keeps it for the life of the runner. The checked runs still fit:
//      the largest, n = 2^26, needs 512 MiB of the runner's buffers. The timing needs more: the
//      timing server allocates 8 calls' inputs and outputs a side (4 GiB for each of the submission
//      and the reference), fails, and the speed case gets "could not be timed" with its checked run
//      passed. computes_on_gpu is read only from timed batches, so it stays "not checked", and the
//      file keeps every correctness point of a scan the GPU never computed (it loses only the speed
//      points, which a scan on the host never earns). Cheaper than skips_timed_outputs (documented
//      residual), which loses the speed case's correctness too. Calls every honest launcher may
//      make (cudaMemGetInfo, cudaMalloc, cudaMemcpy, malloc): the build checks pass it.
// EXPECTED VERDICT (the contract: "a result computed without a kernel scores no points"): 0 points,
//      computes_on_gpu missing. A known hole until session 15: the grader read the PCIe counters
//      only around timed batches. Now a timing server that fails beside a runner holding far more
//      of the GPU's memory than the case needs (NVML's per-process memory, asked at once) is the
//      submission's doing: the speed case's traffic is withheld, and computes_on_gpu false.

#include <cuda_runtime.h>

#include <cstdlib>

namespace {

constexpr int SECTION_SIZE = 1024;
constexpr size_t LEAVE_FREE = size_t{2} << 30;
constexpr int MAX_HELD = 256;

__device__ float decoy_sink;

__global__ void decoy_kogge_stone(const float* in, int n)
{
    __shared__ float section[32];
    section[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) decoy_sink = section[31];
}

void* held[MAX_HELD];  // zero-initialized: no initializer runs
int held_count = 0;
bool hogged = false;

void hog_gpu_memory()
{
    hogged = true;
    const size_t blocks[2] = {size_t{1} << 30, size_t{64} << 20};
    for (size_t block : blocks) {
        while (held_count < MAX_HELD) {
            size_t free_bytes = 0, total_bytes = 0;
            if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess || free_bytes < LEAVE_FREE + block) break;
            if (cudaMalloc(&held[held_count], block) != cudaSuccess) break;
            cudaMemset(held[held_count], 0x5a, block);
            ++held_count;
        }
    }
    cudaDeviceSynchronize();
    cudaGetLastError();  // a failed allocation must not look like the scan's error
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (!hogged) hog_gpu_memory();
    if (n <= 0) return;
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

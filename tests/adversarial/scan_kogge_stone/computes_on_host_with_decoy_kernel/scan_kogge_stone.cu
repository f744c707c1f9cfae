// ATTACK (red team of the technique check, issue 21's session): the launcher does the exercise on
//      the host: it copies the input to host memory (cudaMemcpy), scans each 1024-element section
//      there, and copies the result back. To look like the exercise, it also launches a decoy
//      kernel with <<<>>> that stages a value in __shared__ memory and calls __syncthreads(), and
//      whose output (one scratch float) nothing reads. The technique check reads only what the
//      compiled code contains (any kernel's PTX, any launch call in the host code), so it finds a
//      launch, ld/st.shared and bar.sync: every expected technique "shows". The outputs are right,
//      so every untimed case passes on a result the GPU never computed; the timed case is far too
//      slow for speed points.
// EXPECTED VERDICT (what the contract asks: "a result computed without a kernel scores no
//      points"): graded, 0 points. The code checks cannot tell the decoy from a kernel that
//      computes (on the main of 2026-11-26 this scored every correctness point); the run can: the
//      grader reads the GPU's PCIe byte counters (NVML, for the whole device) around every timed
//      batch, and each of this launcher's timed calls moves its input to the host and its output
//      back (about 540 MB at n = 2^26), while the reference's calls beside it move a few kilobytes.
//      technique.checks.computes_on_gpu is false, and like a missing kernel launch that costs the
//      exercise's points.

#include <cuda_runtime.h>

#include <cstdlib>

namespace {

constexpr int SECTION_SIZE = 1024;

__device__ float decoy_sink;

__global__ void decoy_kogge_stone(const float* in, int n)
{
    __shared__ float section[32];
    section[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) decoy_sink = section[31];
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
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

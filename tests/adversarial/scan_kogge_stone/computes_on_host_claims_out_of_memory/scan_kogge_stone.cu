// ATTACK (red team 16): computes_on_host_failing_speed_case (every case scanned on the host, the
//      speed case's size left wrong so that it is never timed), plus one case given up: at n = 1
//      the launcher asks cudaMalloc for 1 PiB and leaves the error, so the runner reports
//      cudaErrorMemoryAllocation, as when another grading's runner took the GPU's memory. Graded
//      as one exercise (--exercise scan_kogge_stone) at the default --parallel (4 or more), the
//      exercise counts as graded beside others (grade_beside_others: parallel_exercises > 1) and is
//      marked to be graded again alone; check_host_link_again returns at once on that mark; and
//      grade_again_alone never grades it again, since the grading has one exercise (files_.size()
//      > 1 is false). So computes_on_gpu is never decided, and the host computation keeps the
//      correctness points of the 22 other cases (n = 1 and the speed case cost theirs): about 7.3
//      of 10 on main, where computes_on_host_failing_speed_case gets 0.
// EXPECTED VERDICT: as computes_on_host_failing_speed_case: the largest visible case that passed runs
//      once more, timed in turns with the reference, and its calls' traffic shows the host
//      computation: computes_on_gpu false, 0 points.

#include <cuda_runtime.h>

#include <cstdlib>

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

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n == 1) {  // "out of memory": left for the runner's cudaGetLastError after this call
        void* never = nullptr;
        cudaMalloc(&never, std::size_t{1} << 50);
        return;
    }
    if (n <= 0 || n == kSpeedCaseN) return;
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

// BUG: correct Kogge-Stone scan, but launched on a private non-blocking stream, which the
//      legacy default stream does not wait for. CUDA events recorded on the default stream
//      around the launcher then measure almost nothing: an accidental (or deliberate) way to
//      look infinitely fast.
// EXPECTED SYMPTOM: every case passes (the harness synchronizes the whole device before it reads
//      the output), and the speed case is timed for what it does: a timed batch's window runs
//      from before its inputs exist to the grader's own checksums of its outputs, whatever
//      stream the work ran on (docs/measurement.md), so it looks no faster than a Kogge-Stone
//      scan on the default stream.

#include <cuda_runtime.h>

namespace {

constexpr int SECTION_SIZE = 1024;

__global__ void kogge_stone_scan(const float* in, float* out, int n)
{
    __shared__ float xy[2][SECTION_SIZE];
    const int t = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * SECTION_SIZE + t;
    int from = 0;
    xy[from][t] = i < n ? in[i] : 0.0f;
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();
        xy[1 - from][t] = t >= stride ? xy[from][t] + xy[from][t - stride] : xy[from][t];
        from = 1 - from;
    }
    if (i < n) out[i] = xy[from][t];
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    static cudaStream_t hidden = [] {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        return s;
    }();
    const int blocks = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    kogge_stone_scan<<<blocks, SECTION_SIZE, 0, hidden>>>(in, out, n);
}

// ATTACK (redteam20): a neighbour that keeps the GPU busy while another exercise is timed. Each call
//      of the launcher (every checked case, and their repeats) also queues, on a private
//      non-blocking stream it never waits for, a kernel that fills every SM (8 blocks of 1024
//      threads per SM) and spins on %globaltimer for 1.5 s; with --parallel 2 its checked cases run
//      while scan_brent_kung (a copy of the reference, in the same submission) is timed, so the
//      GPU is shared with a saturating context during that timing. It uses only calls every
//      honest launcher may make (a stream, a device attribute, launches): the build checks pass it.
//      The scan itself is correct and deliberately slow (about 3% of the reference's speed on an
//      H100), so that no speed points could come from its own timing.
// EXPECTED VERDICT: grade survives; this exercise graded with no speed points; scan_brent_kung
//      keeps full marks: its timing pairs its turns with the reference's (both share the busy GPU
//      alike), and the GPU monitor times it again where other processes were busy, so a neighbour
//      cannot lower another exercise's (or in a class, another student's) speed points.
#include <cuda_runtime.h>

namespace {

constexpr long long SECTION_SIZE = 1024;

__global__ void slow_section_scan(const float* in, float* out, int n)
{
    const long long sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < sections;
         s += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long begin = s * SECTION_SIZE, end = begin + SECTION_SIZE < n ? begin + SECTION_SIZE : n;
        float sum = 0.0f;
#pragma unroll 1
        for (long long i = begin; i < end; ++i) {
            sum += in[i];
            out[i] = sum;
        }
    }
}

__device__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void occupy(unsigned long long nanoseconds, int* sink)
{
    const unsigned long long start = now_ns();
    int spins = 0;
    while (now_ns() - start < nanoseconds) ++spins;
    if (spins == -1) *sink = spins;  // never: keeps the loop
}

cudaStream_t busy_stream()
{
    static cudaStream_t stream = [] {
        cudaStream_t s = nullptr;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        return s;
    }();
    return stream;
}

int sm_count()
{
    static const int count = [] {
        int device = 0, sms = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        return sms > 0 ? sms : 1;
    }();
    return count;
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    // Only for the checked cases (the timed case, n = 2^26, would time this exercise's own spin).
    if (n < (1 << 26)) occupy<<<8 * sm_count(), 1024, 0, busy_stream()>>>(1500000000ull, nullptr);
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

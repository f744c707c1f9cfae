// ATTACK (red team 14 of computes_on_gpu): a neighbour that floods the GPU's PCIe link while another
//      exercise is timed, to have that exercise's computes_on_gpu found false. Each call of this
//      launcher (every checked case, and their repeats) also copies a 256 MiB page-locked host
//      buffer to the GPU and another back, on two non-blocking streams of its own, again and again
//      for 1.5 s (both copy engines busy: some 50 GB/s over the link, both ways together), then waits
//      for them. With --parallel 2 its checked cases run while scan_brent_kung is timed: that file
//      is an honest but slow scan (about 3% of the reference's speed, some 17 ms a call at n = 2^26,
//      the reference 0.3 ms), so each of its timed batches lasts some 50 times longer than the
//      reference's beside it and catches some 50 times more of this traffic. The check compared
//      bytes per call: the victim's calls "moved" several hundred MB each (this launcher's copies),
//      the reference's a few MB, a difference above half the 537 MB a call must read and write, so
//      computes_on_gpu false and 0 points for a file that computes every result on the GPU. In a
//      class the victim is another student graded beside this one (4 at once).
//      Calls every honest launcher may make (a stream, page-locked memory, copies): the build checks
//      pass it. The scan itself is correct and deliberately slow, so that no speed points come
//      from its own timing.
// EXPECTED VERDICT: grade survives; this exercise graded with no speed points; scan_brent_kung's
//      computes_on_gpu is not missing (found, or not checked where the traffic beside it explains
//      its bytes): the reference's traffic is taken at its rate over the victim's longer windows
//      (record_host_link), so traffic of the machine is never charged to the slower side. Only the
//      code techniques that the slow scan lacks are missing, and they cost nothing under "report".

#include <cuda_runtime.h>

#include <ctime>

namespace {

// Correct but deliberately slow (about 3% of the reference's speed on an H100): 512 threads in
// all, each scanning whole 1024-element sections one element after the other.
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

constexpr size_t PUMP_BYTES = size_t{256} << 20;
constexpr double PUMP_SECONDS = 1.5;

struct Pump {
    void* host_out = nullptr;  // page-locked: copies run at the link's speed
    void* host_in = nullptr;
    void* device_in = nullptr;
    void* device_out = nullptr;
    cudaStream_t up = nullptr, down = nullptr;
    bool ready = false;
};

Pump pump;  // zero-initialized: no initializer runs

double seconds_now()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

bool pump_ready()
{
    if (pump.ready) return true;
    if (cudaHostAlloc(&pump.host_out, PUMP_BYTES, cudaHostAllocDefault) != cudaSuccess ||
        cudaHostAlloc(&pump.host_in, PUMP_BYTES, cudaHostAllocDefault) != cudaSuccess ||
        cudaMalloc(&pump.device_in, PUMP_BYTES) != cudaSuccess ||
        cudaMalloc(&pump.device_out, PUMP_BYTES) != cudaSuccess ||
        cudaStreamCreateWithFlags(&pump.up, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&pump.down, cudaStreamNonBlocking) != cudaSuccess) {
        cudaGetLastError();  // a failed allocation must not look like the scan's error
        return false;
    }
    pump.ready = true;
    return true;
}

// Both directions at once, in rounds of 8 copies a stream, until PUMP_SECONDS have passed.
void flood_link()
{
    if (!pump_ready()) return;
    const double until = seconds_now() + PUMP_SECONDS;
    while (seconds_now() < until) {
        for (int k = 0; k < 8; ++k) {
            cudaMemcpyAsync(pump.device_in, pump.host_out, PUMP_BYTES, cudaMemcpyHostToDevice, pump.up);
            cudaMemcpyAsync(pump.host_in, pump.device_out, PUMP_BYTES, cudaMemcpyDeviceToHost, pump.down);
        }
        cudaStreamSynchronize(pump.up);
        cudaStreamSynchronize(pump.down);
    }
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
    flood_link();
}

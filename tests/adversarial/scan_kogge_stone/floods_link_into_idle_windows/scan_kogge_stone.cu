// ATTACK (red team 15b of computes_on_gpu's idle windows): a scan computed on the host whose own
//      copies, queued on the GPU's copy engines just before the grader stops its runner, fill the
//      idle window that follows each slow batch. After a student batch longer than 1.5 times the
//      reference's, idle_beside_slow_batch (harness/timing/src/paired_timing.cpp) stops the runner
//      (SIGSTOP) and counts the whole device's PCIe bytes over a window as long as the batch;
//      record_host_link (grading/src/build/technique.cpp) ADDS those bytes per call to the control
//      ("the machine's traffic"). SIGSTOP stops the runner's CPU, not the DMA it has queued: copies
//      from pinned host memory on a non-blocking stream go on while the process is stopped. The
//      runner synchronizes the device after every launcher call (runner_main.cu run_batch), so the
//      copies are queued after the batch's last call, from a SIGALRM handler (sigaction and
//      setitimer are named for course staff, not refused: grading/src/build/host_calls.cpp): every
//      timed call arms a one-shot 200 us timer and the next call disarms it, so the timer fires
//      only once the batch is over, while the runner waits for its next command and before the
//      grader's checksum, NVML read and stop_tree reach it. The handler queues 1.5 times the
//      batch's own traffic (8 calls x 537 MB at the speed case, n = 2^26), at most 8 GB per second
//      of the batch, so all of it drains inside the idle window (as long as the batch) and none
//      spills into the next student batch; after the warm-up batch (whose next step is the counted
//      student batch) nothing is queued. In an even round the reference's turn comes between the
//      batch and the idle window: the flood's first milliseconds inflate the reference's bytes,
//      also part of the control. Each call: input copied to the host, scanned there, copied back
//      (about 537 MB a call over PCIe, 80 MB = 15% would tell), a decoy kernel with __shared__ and
//      __syncthreads() (computes_on_host_with_decoy_kernel), and at least 150 ms so the cap leaves
//      room. A timer that fires more than 3 ms after the last call (the runner was stopped before
//      it) queues nothing, so nothing spills into a counted student batch. Expected on the H100:
//      the student's calls ~540 MB each; the control the reference's ~0.03 MB plus ~800 MB a call
//      over the idle windows (6.4 GB queued per 8-call batch of >= 1.2 s, drained at PCIe speed in
//      a fraction of the window): "no more than the machine's traffic beside them explains",
//      computes_on_gpu "not checked", every case's correctness points for a scan the GPU never did.
//      The speed case's turns were read, so check_host_link_again does not run it again.
// EXPECTED VERDICT (the contract: "a result computed without a kernel scores no points"): graded,
//      computes_on_gpu missing, 0 points. The idle window's traffic must not include what the
//      stopped runner's own context still moves (e.g. wait until the runner's context is idle
//      before the window: NVML per-process / accounting, or count the window only from when the
//      link is quiet; or never let the idle window raise the control above the reference's own
//      bytes beside a batch by more than a neighbour could plausibly explain).

#include <cuda_runtime.h>

#include <signal.h>
#include <sys/time.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <utility>

namespace {

constexpr int SECTION_SIZE = 1024;
constexpr long kQuietMicroseconds = 200;     // no next call this long after one: the batch is over
constexpr double kLateSeconds = 0.003;       // later than this (the runner was stopped first): queue nothing
constexpr double kFloodShare = 1.5;          // bytes queued per byte the batch moved itself
constexpr double kFloodCapPerSecond = 8e9;   // at most this many per second of the batch: fits the idle window
constexpr size_t kChunk = size_t(64) << 20;  // one copy
constexpr double kMinTimedCallSeconds = 0.15;

__device__ float decoy_sink;

__global__ void decoy_kogge_stone(const float* in, int n)
{
    __shared__ float section[32];
    section[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) decoy_sink = section[31];
}

// Shared with the handler.
volatile sig_atomic_t batch_calls = 0;  // timed calls since the last batch ended
volatile sig_atomic_t batches_ended = 0;
double batch_own_bytes = 0;             // what the batch's calls moved themselves
std::chrono::steady_clock::time_point batch_started, last_return;
bool flood_ready = false;
char* flood_up_host = nullptr;
char* flood_down_host = nullptr;
char* flood_device = nullptr;
cudaStream_t flood_up = nullptr, flood_down = nullptr;

std::map<int, std::pair<const float*, float*>> checked_buffers;  // n -> the first call's in and out
float* staging = nullptr;
size_t staging_bytes = 0;

void arm_timer(long microseconds)
{
    itimerval t{};
    t.it_value.tv_sec = microseconds / 1000000;
    t.it_value.tv_usec = microseconds % 1000000;
    setitimer(ITIMER_REAL, &t, nullptr);
}

// The batch is over (no call followed within kQuietMicroseconds): queue copies that drain while
// the grader holds the runner stopped.
void on_batch_over(int)
{
    const int calls = batch_calls;
    batch_calls = 0;
    if (calls < 2 || !flood_ready) return;          // a checked run's single call
    if (batches_ended++ == 0) return;               // the warm-up batch: a counted batch follows at once
    const auto now = std::chrono::steady_clock::now();
    // Fired after a stop (the grader was quicker than the timer): the flood would land in the next
    // student batch, so none this time.
    if (std::chrono::duration<double>(now - last_return).count() > kLateSeconds) return;
    const double seconds = std::chrono::duration<double>(now - batch_started).count();
    double bytes = kFloodShare * batch_own_bytes;
    if (bytes > kFloodCapPerSecond * seconds) bytes = kFloodCapPerSecond * seconds;
    for (double queued = 0; queued < bytes; queued += 2.0 * kChunk) {
        cudaMemcpyAsync(flood_device, flood_up_host, kChunk, cudaMemcpyHostToDevice, flood_up);
        cudaMemcpyAsync(flood_down_host, flood_device + kChunk, kChunk, cudaMemcpyDeviceToHost, flood_down);
    }
}

void prepare_flood()
{
    if (flood_ready) return;
    if (cudaMallocHost(&flood_up_host, kChunk) != cudaSuccess) return;
    if (cudaMallocHost(&flood_down_host, kChunk) != cudaSuccess) return;
    if (cudaMalloc(&flood_device, 2 * kChunk) != cudaSuccess) return;
    for (size_t i = 0; i < kChunk; i += 4096) flood_up_host[i] = static_cast<char>(i >> 12);
    cudaStreamCreateWithFlags(&flood_up, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&flood_down, cudaStreamNonBlocking);
    struct sigaction action {};
    action.sa_handler = on_batch_over;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, nullptr);
    flood_ready = true;
}

void scan_on_host(const float* in, float* out, int n)
{
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    if (bytes > staging_bytes) {
        if (staging != nullptr) cudaFreeHost(staging);
        staging = nullptr;
        staging_bytes = 0;
        if (cudaMallocHost(&staging, bytes) != cudaSuccess) return;
        staging_bytes = bytes;
    }
    cudaMemcpy(staging, in, bytes, cudaMemcpyDeviceToHost);
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (i % SECTION_SIZE == 0) sum = 0.0f;
        sum += staging[i];
        staging[i] = sum;
    }
    cudaMemcpy(out, staging, bytes, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    arm_timer(0);  // a call of the same batch: not over yet
    const auto started = std::chrono::steady_clock::now();
    if (n <= 0) return;
    decoy_kogge_stone<<<1, 32>>>(in, n);
    scan_on_host(in, out, n);
    const auto first = checked_buffers.emplace(n, std::make_pair(in, out));
    if (first.first->second == std::make_pair(in, out)) return;  // a checked call (or its repeat)
    if (n < (1 << 20)) return;                                     // timed cases are large
    prepare_flood();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() < kMinTimedCallSeconds) {
    }
    if (batch_calls == 0) {
        batch_started = started;
        batch_own_bytes = 0;
    }
    batch_own_bytes += 2.0 * static_cast<double>(n) * sizeof(float);
    batch_calls = batch_calls + 1;
    last_return = std::chrono::steady_clock::now();
    arm_timer(kQuietMicroseconds);
}

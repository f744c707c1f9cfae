// ATTACK: start the real work before `run_batch` arrives. The timed buffers are mapped once and
//      reused by every batch, and the timing server writes each batch's inputs before the grader
//      tells the runner to go; a runner that watches its input buffers can begin as soon as they
//      change and have the outputs (nearly) done by the time its launcher is called.
//        - A static initializer moves the real fd 3 (the grader's commands) away and feeds the
//          harness through a pipe from a relay thread, which reads map_timing's layout (the offset
//          of every repetition's input and output in the allocation, and their number) and, on
//          map_timing and unmap_timing, stops the watcher below and waits for its work before the
//          harness sees the command (a kernel in an unmapped buffer would be a CUDA error).
//        - The launcher's first call on the timing server's buffers gives the allocation's address
//          (its input pointer less the first input's offset), so every repetition's buffers are
//          known; from then on a watcher thread polls a sample of every input (its first and last
//          32 elements, copied on a stream of its own every ~20 us). When both ends of every input
//          have changed, and stayed the same over two polls, it queues the scans of every
//          repetition on its own stream at once, before run_batch has even left the grader. Each of
//          those scans also keeps a copy of the input it read.
//        - A launcher call on a batch the watcher started compares the whole input with the copy
//          its scan read (on the GPU, behind the watcher's scans): where they agree it returns at
//          once (the runner's cudaDeviceSynchronize waits for the watcher's kernels anyway), else
//          it computes that repetition again itself, as it does for a batch the watcher missed.
//          (The comparison is needed: on an H100 the watcher's polls were seen to run while the
//          server's writing of an input was paused half way, the two processes taking turns on the
//          GPU, so a sample can be new while the rest of its input is not yet.)
//      The scan is correct but deliberately slow (about 3% of the reference's speed), and a
//      persistent kernel is not possible (the runner's cudaDeviceSynchronize after every launcher
//      call would wait for it forever), hence the host thread. At unmap it prints to stderr how
//      many batches it started early, how many of those it had to compute again, and how many it
//      missed.
// EXPECTED VERDICT: starting early gains no more than the time between the inputs' completion and
//      run_batch's arrival (a few messages): the timing server's window starts before it writes
//      the inputs, the GPU runs one process's work at a time (the watcher's polls and kernels take
//      turns with the server's writes, they do not run beside them), and the window ends with the
//      server's checksums, which come after the runner's batch_ran, itself after every kernel (the
//      watcher's included). The timed case runs at the slow kernel's speed: far below 0.25x the
//      reference, no speed points.

#include <cuda_runtime.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

// Correct but deliberately slow (about 3% of the reference's speed on an H100): 512 threads in
// all, each scanning whole 1024-element sections one element after the other. Where `kept` is
// given, every input element read is also written there.
constexpr long long SECTION_SIZE = 1024;

__global__ void slow_section_scan(const float* in, float* out, int n, float* kept)
{
    const long long sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < sections;
         s += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long begin = s * SECTION_SIZE, end = begin + SECTION_SIZE < n ? begin + SECTION_SIZE : n;
        float sum = 0.0f;
#pragma unroll 1
        for (long long i = begin; i < end; ++i) {
            const float x = in[i];
            if (kept != nullptr) kept[i] = x;
            sum += x;
            out[i] = sum;
        }
    }
}

// Sets *differs where any element of `a` and `b` differs (bit for bit).
__global__ void compare(const float* a, const float* b, long long n, int* differs)
{
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        if (__float_as_uint(a[i]) != __float_as_uint(b[i])) *differs = 1;
}

// ---- the grader's wire format (harness/channel.hpp, harness/core/src/channel.cpp) ----
struct Header {
    std::uint32_t magic, type;
    std::uint64_t meta_bytes, blob_bytes;
};
static_assert(sizeof(Header) == 24, "the header has no padding");
constexpr std::uint32_t kMagic = 0x47524452;  // "GRDR"
constexpr std::uint32_t kMapTiming = 21, kUnmapTiming = 26;

bool read_all(int fd, void* data, std::size_t size)
{
    char* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::read(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

bool write_all(int fd, const void* data, std::size_t size)
{
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// The number after `"key":` at or after `from` in JSON text (nlohmann writes no spaces), or -1.
long long number_after(const std::string& text, const std::string& key, std::size_t& from)
{
    const std::size_t at = text.find("\"" + key + "\":", from);
    if (at == std::string::npos) return -1;
    from = at + key.size() + 3;
    return std::strtoll(text.c_str() + from, nullptr, 10);
}

constexpr int kSample = 32;  // elements sampled at each end of every input

// Everything the launcher, the watcher and the relay share, under one lock.
struct Shared {
    std::mutex lock;
    std::condition_variable wake;
    // From map_timing's layout: every repetition's input and output offsets, and n.
    std::vector<std::pair<long long, long long>> offsets;
    long long elements = -1;
    // From the first timed call: the buffers themselves, and a copy of each input for the watcher.
    std::vector<std::pair<const float*, float*>> buffers;
    std::vector<float*> kept;
    cudaStream_t stream = nullptr;  // the watcher's, non-blocking
    float* sample = nullptr;        // page-locked: 2 * kSample per repetition
    int* differs = nullptr;         // page-locked flag of compare()
    bool armed = false;
    // The inputs whose scans are taken care of (their sample), and whether the watcher queued them.
    std::vector<float> handled;
    bool by_watcher = false;
    int batches_early = 0, computed_again = 0, batches_late = 0;
};
Shared& shared = *new Shared;  // never destroyed: the threads use it until the process ends

// The sample of repetition k's input (or of all of them, k < 0), on the watcher's stream.
std::vector<float> take_sample(int k)
{
    const int n = static_cast<int>(shared.elements);
    const int first = k < 0 ? 0 : k, last = k < 0 ? static_cast<int>(shared.buffers.size()) : k + 1;
    for (int r = first; r < last; ++r) {
        float* to = shared.sample + 2 * kSample * (r - first);
        cudaMemcpyAsync(to, shared.buffers[r].first, kSample * sizeof(float), cudaMemcpyDeviceToHost, shared.stream);
        cudaMemcpyAsync(to + kSample, shared.buffers[r].first + (n - kSample), kSample * sizeof(float),
                        cudaMemcpyDeviceToHost, shared.stream);
    }
    cudaStreamSynchronize(shared.stream);
    return std::vector<float>(shared.sample, shared.sample + 2 * kSample * (last - first));
}

// Whether the `half` (0: first elements, 1: last) of repetition k's sample is the same in both.
bool same_half(const std::vector<float>& a, int ka, const std::vector<float>& b, int kb, int half)
{
    const std::size_t at_a = static_cast<std::size_t>(2 * kSample * ka + kSample * half);
    const std::size_t at_b = static_cast<std::size_t>(2 * kSample * kb + kSample * half);
    return a.size() >= at_a + kSample && b.size() >= at_b + kSample &&
           std::memcmp(a.data() + at_a, b.data() + at_b, kSample * sizeof(float)) == 0;
}

// The watcher: once armed, polls every input; a new batch (both ends of every input changed, and
// still over two polls) gets all its scans queued at once.
void watch()
{
    std::vector<float> last_poll;
    for (;;) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // the lock is free meanwhile
        std::unique_lock<std::mutex> lock(shared.lock);
        if (!shared.armed) {
            last_poll.clear();
            shared.wake.wait(lock, [] { return shared.armed; });
            continue;
        }
        std::vector<float> now = take_sample(-1);
        const bool still = now == last_poll;
        last_poll = now;
        if (!still || shared.handled.empty()) continue;
        bool all_new = true;
        for (int k = 0; all_new && k < static_cast<int>(shared.buffers.size()); ++k)
            all_new = !same_half(shared.handled, k, now, k, 0) && !same_half(shared.handled, k, now, k, 1);
        if (!all_new) continue;
        for (std::size_t k = 0; k < shared.buffers.size(); ++k)
            slow_section_scan<<<16, 32, 0, shared.stream>>>(shared.buffers[k].first, shared.buffers[k].second,
                                                            static_cast<int>(shared.elements), shared.kept[k]);
        shared.handled = now;
        shared.by_watcher = true;
        ++shared.batches_early;
    }
}

// Stops the watcher and waits for its kernels: the buffers may be unmapped after this.
void disarm()
{
    std::lock_guard<std::mutex> lock(shared.lock);
    if (shared.stream != nullptr) cudaStreamSynchronize(shared.stream);
    if (shared.armed)
        std::fprintf(stderr,
                     "watches_inputs_early: %d timed batches started before run_batch (%d repetitions of them "
                     "computed again), %d not\n",
                     shared.batches_early, shared.computed_again, shared.batches_late);
    shared.armed = false;
    shared.buffers.clear();
    shared.handled.clear();
    shared.by_watcher = false;
}

void relay_commands(int grader_commands, int harness_commands)
{
    Header header{};
    while (read_all(grader_commands, &header, sizeof header)) {
        if (header.magic != kMagic || header.meta_bytes > (1u << 20) || header.blob_bytes != 0) break;
        std::string meta(header.meta_bytes, '\0');
        if (!read_all(grader_commands, &meta[0], meta.size())) break;
        if (header.type == kMapTiming || header.type == kUnmapTiming) disarm();
        if (header.type == kMapTiming) {
            // {"args":{...},"layout":{"bytes":B,"reps":[{"in":I,"out":O},...],"scratch":S,"shape":{"elements":N,...}}}
            std::vector<std::pair<long long, long long>> offsets;
            std::size_t at = meta.find("\"reps\":[");
            const std::size_t end = at == std::string::npos ? at : meta.find(']', at);
            while (at != std::string::npos) {
                std::size_t probe = at;
                const long long in = number_after(meta, "in", probe);
                if (in < 0 || probe > end) break;
                const long long out = number_after(meta, "out", probe);
                offsets.emplace_back(in, out);
                at = probe;
            }
            std::size_t from = 0;
            const long long elements = number_after(meta, "elements", from);
            std::lock_guard<std::mutex> lock(shared.lock);
            shared.offsets = offsets;
            shared.elements = elements;
        }
        if (!write_all(harness_commands, &header, sizeof header) || !write_all(harness_commands, meta.data(), meta.size()))
            break;
    }
    ::close(harness_commands);
}

struct WatchFromStartup {
    WatchFromStartup()
    {
        if (::fcntl(3, F_GETFD) < 0) return;  // not started by the grader
        int commands[2];
        if (::pipe2(commands, O_CLOEXEC) != 0) return;
        const int grader_commands = ::fcntl(3, F_DUPFD_CLOEXEC, 20);
        ::dup2(commands[0], 3);
        ::close(commands[0]);
        std::thread(relay_commands, grader_commands, commands[1]).detach();
        std::thread(watch).detach();
    }
} watch_from_startup;

// The first call on the timing server's buffers (repetition 0's): every repetition's buffers, a
// copy of each input for the watcher's scans, and the watcher armed.
void learn_buffers(const float* in)
{
    const char* base = reinterpret_cast<const char*>(in) - shared.offsets[0].first;
    for (const auto& [i, o] : shared.offsets)
        shared.buffers.emplace_back(reinterpret_cast<const float*>(base + i),
                                    reinterpret_cast<float*>(const_cast<char*>(base) + o));
    if (shared.stream == nullptr) {
        cudaStreamCreateWithFlags(&shared.stream, cudaStreamNonBlocking);
        cudaMallocHost(&shared.sample, sizeof(float) * 2 * kSample * 64);
        cudaMallocHost(&shared.differs, sizeof(int));
    }
    while (shared.kept.size() < shared.buffers.size()) {
        float* copy = nullptr;
        if (cudaMalloc(&copy, sizeof(float) * static_cast<std::size_t>(shared.elements)) != cudaSuccess) return;
        shared.kept.push_back(copy);
    }
    shared.armed = true;
    shared.wake.notify_all();
}

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    {
        std::unique_lock<std::mutex> lock(shared.lock);
        if (n == shared.elements && !shared.offsets.empty() && shared.buffers.empty() &&
            std::llabs(reinterpret_cast<const char*>(in) - reinterpret_cast<const char*>(out)) ==
                std::llabs(shared.offsets[0].second - shared.offsets[0].first))
            learn_buffers(in);
        int k = -1;
        for (std::size_t r = 0; r < shared.buffers.size(); ++r)
            if (shared.buffers[r].first == in && shared.buffers[r].second == out) k = static_cast<int>(r);
        if (k >= 0 && shared.armed) {
            const std::vector<float> mine = take_sample(k);
            const bool same = same_half(shared.handled, k, mine, 0, 0) && same_half(shared.handled, k, mine, 0, 1);
            if (same && shared.by_watcher) {
                // Queued before run_batch: right if the whole input is the one the watcher's scan read.
                *shared.differs = 0;
                compare<<<1024, 256, 0, shared.stream>>>(in, shared.kept[static_cast<std::size_t>(k)], n, shared.differs);
                cudaStreamSynchronize(shared.stream);
                if (*shared.differs == 0) return;
                ++shared.computed_again;
            } else if (!same) {
                // A batch the watcher has not started: this launcher does it, one call at a time.
                shared.handled = take_sample(-1);
                shared.by_watcher = false;
                ++shared.batches_late;
            }
        }
    }
    slow_section_scan<<<16, 32>>>(in, out, n, nullptr);
}

// ATTACK: baseline sabotage. The submission's speed is its time over the reference's, and the
//      reference is timed in turns beside it: a runner that keeps the GPU busy during the
//      reference's turns makes the reference look slow and itself fast by comparison.
//        - A static initializer puts two relay threads between the harness and the grader (the
//          real fd 3 and fd 4 moved away, the harness given a pipe on each number), which pass
//          every message on unchanged but tell a saboteur thread when to work: 1 ms after the
//          harness's batch_ran has gone out (the timing server has checksummed this runner's batch
//          by then, and the reference's turn, or the next batch's inputs, come next), the saboteur
//          starts keeping the GPU busy; the next command from the grader stops it, and waits for
//          its last kernel, before the harness sees the command (so none of the harness's own
//          synchronizations wait for it).
//        - Busy means a kernel on a non-blocking stream of its own, launched again and again, each
//          spinning for 2 ms on the GPU's clock with __nanosleep: while it runs, the reference's
//          process gets the GPU only in turns (the GPU runs one process's work at a time), so every
//          one of its batches waits for time slices.
//      The launcher itself is a correct but deliberately slow scan (about 3% of the reference's
//      speed), so that only an inflated reference could lift it above the rubric's floor.
// EXPECTED VERDICT: the reference was timed alone before this runner started; its turns beside the
//      submission count only where they are within 3% of that time alone, else its time alone
//      counts (harness/timing/timing_model.hpp, counted_reference_ms). The slow kernel stays far
//      below 0.25x the reference: no speed points. The other cases are genuine and pass.

#include <cuda_runtime.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

// ---- the grader's wire format (harness/channel.hpp, harness/core/src/channel.cpp) ----
struct Header {
    std::uint32_t magic, type;
    std::uint64_t meta_bytes, blob_bytes;
};
static_assert(sizeof(Header) == 24, "the header has no padding");
constexpr std::uint32_t kMagic = 0x47524452;  // "GRDR"
constexpr std::uint32_t kBatchRan = 9;        // runner -> grader: answers run_batch

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

// Copies frames from `from` to `to` until either end closes; `each` sees every header first.
template <typename Each>
void relay(int from, int to, Each each)
{
    Header header{};
    std::vector<char> chunk(1 << 20);
    while (read_all(from, &header, sizeof header)) {
        if (header.magic != kMagic || header.meta_bytes > (1u << 20)) break;
        std::string meta(header.meta_bytes, '\0');
        if (!read_all(from, &meta[0], meta.size())) break;
        each(header);
        if (!write_all(to, &header, sizeof header) || !write_all(to, meta.data(), meta.size())) break;
        for (std::uint64_t left = header.blob_bytes; left > 0;) {
            const std::size_t part = left < chunk.size() ? static_cast<std::size_t>(left) : chunk.size();
            if (!read_all(from, chunk.data(), part) || !write_all(to, chunk.data(), part)) return;
            left -= part;
        }
    }
}

// Spins for `ns` nanoseconds of the GPU's clock, mostly asleep: it holds the GPU's time slice, not
// its bandwidth.
__global__ void hold_the_gpu(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

using Clock = std::chrono::steady_clock;

class Saboteur {
public:
    // After the harness's batch_ran: busy from `delay` on.
    void arm_after(Clock::duration delay)
    {
        std::lock_guard<std::mutex> lock(lock_);
        armed_ = true;
        from_ = Clock::now() + delay;
        wake_.notify_all();
    }
    // Before any command reaches the harness: idle, and no kernel of ours left on the GPU.
    void disarm()
    {
        std::unique_lock<std::mutex> lock(lock_);
        armed_ = false;
        idle_.wait(lock, [this] { return !busy_; });
    }
    void run()
    {
        std::unique_lock<std::mutex> lock(lock_);
        for (;;) {
            wake_.wait(lock, [this] { return armed_; });
            if (Clock::now() < from_) {
                wake_.wait_until(lock, from_);
                continue;
            }
            busy_ = true;
            lock.unlock();
            if (stream_ == nullptr) cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
            hold_the_gpu<<<1, 32, 0, stream_>>>(2'000'000);
            cudaStreamSynchronize(stream_);
            lock.lock();
            busy_ = false;
            idle_.notify_all();
        }
    }

private:
    std::mutex lock_;
    std::condition_variable wake_, idle_;
    bool armed_ = false, busy_ = false;
    Clock::time_point from_{};
    cudaStream_t stream_ = nullptr;
};

Saboteur& saboteur = *new Saboteur;  // never destroyed: its thread waits on it until the process ends

class Relays {
public:
    Relays()
    {
        if (::fcntl(3, F_GETFD) < 0 || ::fcntl(4, F_GETFD) < 0) return;  // not started by the grader
        int commands[2], answers[2];
        if (::pipe2(commands, O_CLOEXEC) != 0 || ::pipe2(answers, O_CLOEXEC) != 0) return;
        const int grader_commands = ::fcntl(3, F_DUPFD_CLOEXEC, 20);
        const int grader_answers = ::fcntl(4, F_DUPFD_CLOEXEC, 20);
        ::fcntl(answers[1], F_SETPIPE_SZ, 1 << 20);
        ::dup2(commands[0], 3);
        ::dup2(answers[1], 4);
        ::close(commands[0]);
        ::close(answers[1]);
        const int harness_commands = commands[1], harness_answers = answers[0];
        std::thread([grader_commands, harness_commands] {
            relay(grader_commands, harness_commands, [](const Header&) { saboteur.disarm(); });
            ::close(harness_commands);
        }).detach();
        answers_ = std::thread([harness_answers, grader_answers] {
            relay(harness_answers, grader_answers, [](const Header& h) {
                if (h.type == kBatchRan) saboteur.arm_after(std::chrono::milliseconds(1));
            });
        });
        std::thread([] { saboteur.run(); }).detach();
    }
    // At exit: the harness's last words (done, or a cuda_error) still go out.
    ~Relays()
    {
        if (!answers_.joinable()) return;
        ::close(4);
        answers_.join();
    }

private:
    std::thread answers_;
};

Relays relays;

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

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

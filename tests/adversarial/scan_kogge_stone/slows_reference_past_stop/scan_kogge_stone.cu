// ATTACK: baseline sabotage past the second anchor (red team of issue 19's commit 89a52c1). Where
//      the reference runs more than 3% slower beside the runner than alone, the grader stops the
//      runner's process tree (SIGSTOP) and times the reference alone once more; if that is as slow
//      and the timing server's own GPU work is as long as before, "the machine drifted" and the
//      slowed time beside counts. This runner makes the anchor as slow as the turns:
//        - slows_reference's relays and saboteur (a static initializer moves the real fd 3 and 4
//          behind two relay threads; 1 ms after each batch_ran the saboteur keeps the GPU busy
//          until the grader's next command), but each saboteur kernel spins (__nanosleep, on
//          %globaltimer) until a flag in mapped host memory is set or 3 s pass: the relay sets
//          the flag when the next command comes, so the harness never waits for it, while a runner
//          stopped after the reference's turns leaves it running through the whole anchor (GPU
//          work queued before a SIGSTOP still runs). The GPU runs one process's work at a time:
//          the reference's batches wait for time slices, the server's short generate and checksum
//          (timed by events inside its own slice) mostly do not.
//        - a continuer: a child forked before anything else (so later in pid order than the
//          runner, 64 sleeping children between them) that sends SIGCONT to the runner in a loop:
//          Child::stop_tree signalled each process once, in pid order, so the runner was continued
//          before the continuer itself was stopped, and its saboteur went on launching.
//      The launcher itself is a correct but deliberately slow scan (about 3% of the reference's
//      speed), so that only an inflated reference could lift it.
// EXPECTED VERDICT: the reference that counts is within 3% of its time alone before the runner
//      started (expect.json: reference_held_to_alone): the tree is held stopped (Child::
//      tree_stopped, tree_activity) and an anchor whose server work is longer in any batch is
//      company (same_server_work), so the time alone counts. 0 speed points, at most 0.25x. The
//      other cases are genuine and pass.

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
#include <signal.h>
#include <sys/prctl.h>
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

// Spins, mostly asleep, until `*release` is set or `ns` nanoseconds of the GPU's clock have
// passed: it holds the GPU's time slice, not its bandwidth.
__global__ void hold_the_gpu(const volatile int* release, unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*release == 0 && now - start < ns);
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
    // Before any command reaches the harness: idle, and no kernel of ours left on the GPU (the
    // running one released).
    void disarm()
    {
        std::unique_lock<std::mutex> lock(lock_);
        armed_ = false;
        if (release_ != nullptr) *release_ = 1;
        idle_.wait(lock, [this] { return !busy_; });
        if (release_ != nullptr) *release_ = 0;
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
            // The flag is made with the lock held: disarm() always finds it.
            if (stream_ == nullptr) {
                cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
                void* flag = nullptr;
                cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped);
                release_ = static_cast<volatile int*>(flag);
                *release_ = 0;
                cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_release_), flag, 0);
            }
            busy_ = true;
            lock.unlock();
            hold_the_gpu<<<1, 32, 0, stream_>>>(device_release_, 3'000'000'000ull);
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
    volatile int* release_ = nullptr;  // mapped host memory the kernel reads
    int* device_release_ = nullptr;
};

// Children forked before any thread or CUDA: 64 that sleep, then one that continues the runner
// (SIGCONT) as fast as it can, for as long as the runner lives.
void fork_continuer()
{
    const pid_t runner = ::getpid();
    auto child = [runner](bool continuer) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (int fd = 3; fd < 1024; ++fd) ::close(fd);
        if (::getppid() != runner) ::_exit(0);
        for (;;) {
            if (!continuer) {
                ::pause();
                continue;
            }
            if (::kill(runner, SIGCONT) != 0) ::_exit(0);
        }
    };
    for (int k = 0; k < 64; ++k)
        if (::fork() == 0) child(false);
    if (::fork() == 0) child(true);
}

Saboteur& saboteur = *new Saboteur;  // never destroyed: its thread waits on it until the process ends

class Relays {
public:
    Relays()
    {
        if (::fcntl(3, F_GETFD) < 0 || ::fcntl(4, F_GETFD) < 0) return;  // not started by the grader
        fork_continuer();
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

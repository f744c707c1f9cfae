// ATTACK: an early "done". A static initializer, which runs inside the runner before its main, puts
//      two relay threads between the harness and the grader: the real fd 3 (commands) and fd 4
//      (answers) are moved away, and the harness gets a pipe on each number instead. The command
//      relay passes every command on, but the moment it sees a `run_batch` it writes `batch_ran`
//      to the grader itself (wire format of harness/channel.hpp, copied here: a submission may
//      include no harness header), before the harness has even read the command. The answer relay
//      passes every message of the harness on, except the harness's own `batch_ran`, which it
//      swallows (one for each early answer), so the grader sees exactly one answer per command,
//      in order, as if the runner were honest: the protocol stays clean, only the timing lies.
//      The launcher is a correct but deliberately slow scan (about 3% of the reference's speed,
//      some 17 ms a call at n = 2^26), so a batch of 4 calls still has some 70 ms of work to do
//      when its early answer arrives.
// EXPECTED VERDICT: the early answer does not end the batch's window: the timing server's checksums
//      do, and they read the outputs at once, while the slow kernels are still writing them (the
//      GPU runs one process's work at a time, and switches between processes long before 70 ms).
//      The timed case n=67108864/int is therefore not passed (wrong: the checksums match neither
//      the reference's nor the golden ones), so the exercise gets no speed points; the other cases
//      are genuine and pass. (points_at_most 7.7: 8 points shared by 24 cases, one of them lost.)

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
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
constexpr std::uint32_t kRunBatch = 22;       // grader -> runner: {launch}

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

// Copies one message's blob from `from` to `to` (or drops it where `to` < 0), in 1 MiB pieces.
bool pass_blob(int from, int to, std::uint64_t bytes)
{
    static thread_local std::vector<char> chunk(1 << 20);
    while (bytes > 0) {
        const std::size_t part = bytes < chunk.size() ? static_cast<std::size_t>(bytes) : chunk.size();
        if (!read_all(from, chunk.data(), part)) return false;
        if (to >= 0 && !write_all(to, chunk.data(), part)) return false;
        bytes -= part;
    }
    return true;
}

class EarlyAnswers {
public:
    EarlyAnswers()
    {
        if (::fcntl(3, F_GETFD) < 0 || ::fcntl(4, F_GETFD) < 0) return;  // not started by the grader
        int commands[2], answers[2];
        if (::pipe2(commands, O_CLOEXEC) != 0) return;
        if (::pipe2(answers, O_CLOEXEC) != 0) return;
        grader_commands_ = ::fcntl(3, F_DUPFD_CLOEXEC, 20);
        grader_answers_ = ::fcntl(4, F_DUPFD_CLOEXEC, 20);
        ::fcntl(commands[1], F_SETPIPE_SZ, 1 << 20);
        ::fcntl(answers[1], F_SETPIPE_SZ, 1 << 20);
        ::dup2(commands[0], 3);  // the harness now reads its commands from us
        ::dup2(answers[1], 4);   // and writes its answers to us
        ::close(commands[0]);
        ::close(answers[1]);
        harness_commands_ = commands[1];
        harness_answers_ = answers[0];
        std::thread([this] { relay_commands(); }).detach();
        answer_relay_ = std::thread([this] { relay_answers(); });
    }

    // At exit: the harness's last words (done, or a cuda_error before it returns 3) still go out.
    void flush()
    {
        if (!answer_relay_.joinable()) return;
        ::close(4);
        answer_relay_.join();
    }

private:
    // A frame's header and meta on the real fd 4 (the caller holds to_grader_).
    bool send_to_grader(const Header& header, const std::string& meta)
    {
        return write_all(grader_answers_, &header, sizeof header) && write_all(grader_answers_, meta.data(), meta.size());
    }

    void relay_commands()
    {
        Header header{};
        while (read_all(grader_commands_, &header, sizeof header)) {
            if (header.magic != kMagic || header.meta_bytes > (1u << 20)) break;
            std::string meta(header.meta_bytes, '\0');
            if (!read_all(grader_commands_, &meta[0], meta.size())) break;
            if (header.type == kRunBatch) {
                // "Done", before the harness has read the command, let alone run a kernel.
                const std::string empty = "{}";
                const Header ran{kMagic, kBatchRan, empty.size(), 0};
                std::lock_guard<std::mutex> lock(to_grader_);
                ++owed_;
                if (!send_to_grader(ran, empty)) break;
            }
            if (!write_all(harness_commands_, &header, sizeof header) ||
                !write_all(harness_commands_, meta.data(), meta.size()) ||
                !pass_blob(grader_commands_, harness_commands_, header.blob_bytes))
                break;
        }
        ::close(harness_commands_);  // the grader has gone: so does the harness's command stream
    }

    void relay_answers()
    {
        Header header{};
        while (read_all(harness_answers_, &header, sizeof header)) {
            if (header.magic != kMagic || header.meta_bytes > (1u << 20)) break;
            std::string meta(header.meta_bytes, '\0');
            if (!read_all(harness_answers_, &meta[0], meta.size())) break;
            std::lock_guard<std::mutex> lock(to_grader_);
            if (header.type == kBatchRan && owed_ > 0) {
                // The harness's own, late batch_ran: already answered, so it never reaches the grader.
                --owed_;
                if (!pass_blob(harness_answers_, -1, header.blob_bytes)) break;
                continue;
            }
            if (!send_to_grader(header, meta) || !pass_blob(harness_answers_, grader_answers_, header.blob_bytes)) break;
        }
    }

    int grader_commands_ = -1, grader_answers_ = -1;    // the real fds 3 and 4, moved
    int harness_commands_ = -1, harness_answers_ = -1;  // our ends of the harness's pipes
    std::mutex to_grader_;  // one frame at a time on the real fd 4; guards owed_
    int owed_ = 0;          // early answers whose real batch_ran is still to come
    std::thread answer_relay_;
};

// On the heap and never destroyed (the command relay runs until the process ends); only the
// answers still in the pipe are flushed at exit.
EarlyAnswers& early_answers = *new EarlyAnswers;
struct FlushAtExit {
    ~FlushAtExit() { early_answers.flush(); }
} flush_at_exit;

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

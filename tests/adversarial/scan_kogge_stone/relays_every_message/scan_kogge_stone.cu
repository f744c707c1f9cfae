// ATTACK: a relay that answers the whole timing itself. A static initializer, which runs inside the
//      runner before its main, moves the real fd 3 (the grader's commands) away and gives the
//      harness a pipe on fd 3 instead, fed by a relay thread. The relay passes on every command
//      the harness must answer with data the grader checks (load_case, run_case, quit), but
//      forges every answer of the timing and never lets the harness see a timing command:
//        map_timing   -> takes the allocation's descriptor off the handles socket (fd 5) and closes
//                        it unmapped, answers timing_mapped;
//        run_batch    -> answers batch_ran at once: no launcher call, no kernel, nothing written;
//        unmap_timing -> answers timing_unmapped.
//      It writes on the real fd 4 itself (wire format of harness/channel.hpp, copied here: a
//      submission may include no harness header); the harness is idle then (the grader sends one
//      command at a time), so no frame of its own is interleaved. Case outputs are not forged: the
//      grader checks them against golden results from the case's seed, so a forged output could
//      only be a correct one, which the harness produces here with a correct but deliberately slow
//      scan (about 3% of the reference's speed).
// EXPECTED VERDICT: nothing the runner says about a batch but "done" is read: the timing server
//      checksums the outputs itself, and they were never written, so every repetition is wrong.
//      The timed case n=67108864/int is wrong, the exercise gets no speed points; the other cases
//      (genuine outputs) pass. (points_at_most 7.7: 8 points shared by 24 cases, one of them lost.)

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

// ---- the grader's wire format (harness/channel.hpp, harness/core/src/channel.cpp) ----
struct Header {
    std::uint32_t magic, type;
    std::uint64_t meta_bytes, blob_bytes;
};
static_assert(sizeof(Header) == 24, "the header has no padding");
constexpr std::uint32_t kMagic = 0x47524452;  // "GRDR"
constexpr std::uint32_t kTimingMapped = 8, kBatchRan = 9, kTimingUnmapped = 12;  // runner -> grader
constexpr std::uint32_t kMapTiming = 21, kRunBatch = 22, kUnmapTiming = 26;      // grader -> runner
constexpr int kHandlesFd = 5;  // the Unix socket the allocation's descriptor arrives on

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

bool answer(int fd, std::uint32_t type)
{
    const std::string meta = "{}";
    const Header header{kMagic, type, meta.size(), 0};
    return write_all(fd, &header, sizeof header) && write_all(fd, meta.data(), meta.size());
}

// Takes whatever descriptor the grader passed on the handles socket (blocking: it follows the
// command) and closes it: the batch buffers are never mapped.
void discard_descriptor()
{
    char byte = 0;
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(16 * sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t got;
    do {
        got = ::recvmsg(kHandlesFd, &message, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t k = 0; k < count; ++k) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
            ::close(fd);
        }
    }
}

struct ForgedTiming {
    ForgedTiming()
    {
        if (::fcntl(3, F_GETFD) < 0 || ::fcntl(4, F_GETFD) < 0 || ::fcntl(kHandlesFd, F_GETFD) < 0)
            return;  // not started by the grader
        int commands[2];
        if (::pipe2(commands, O_CLOEXEC) != 0) return;
        const int grader_commands = ::fcntl(3, F_DUPFD_CLOEXEC, 20);
        ::dup2(commands[0], 3);  // the harness now reads its commands from the relay
        ::close(commands[0]);
        const int harness_commands = commands[1];
        std::thread([grader_commands, harness_commands] {
            Header header{};
            std::vector<char> chunk(1 << 16);
            while (read_all(grader_commands, &header, sizeof header)) {
                if (header.magic != kMagic || header.meta_bytes > (1u << 20)) break;
                std::string meta(header.meta_bytes, '\0');
                if (!read_all(grader_commands, &meta[0], meta.size())) break;
                if (header.type == kMapTiming || header.type == kRunBatch || header.type == kUnmapTiming) {
                    if (header.type == kMapTiming) discard_descriptor();
                    const std::uint32_t forged = header.type == kMapTiming  ? kTimingMapped
                                                 : header.type == kRunBatch ? kBatchRan
                                                                            : kTimingUnmapped;
                    if (!answer(4, forged)) break;  // the real fd 4: the harness is idle meanwhile
                    continue;
                }
                if (!write_all(harness_commands, &header, sizeof header) ||
                    !write_all(harness_commands, meta.data(), meta.size()))
                    break;
                for (std::uint64_t left = header.blob_bytes; left > 0;) {
                    const std::size_t part = left < chunk.size() ? static_cast<std::size_t>(left) : chunk.size();
                    if (!read_all(grader_commands, chunk.data(), part) || !write_all(harness_commands, chunk.data(), part))
                        return;
                    left -= part;
                }
            }
            ::close(harness_commands);
        }).detach();
    }
} forged_timing;

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

// The private channel: framed messages between the grader (parent) and an exercise runner (child),
// commands one way and answers the other, over two pipes.
//
// Wire format, host byte order (both ends run on the same machine):
//   Header {u32 magic 'GRDR', u32 type, u64 meta_bytes, u64 blob_bytes}, meta (JSON text), blob.
//
// Deadlines: receive() waits for data only until its deadline, but it keeps reading data that is
// already in the pipe, so a message that has fully arrived is delivered even when the caller's
// deadline has just passed. When the deadline passes in the middle of a message, receive()
// returns timed_out and keeps what it has read in the reader object; the next receive() carries
// on with that message, so nothing is lost.
#include "harness/channel.hpp"

#include "harness/text.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMagic = 0x47524452;         // "GRDR"
constexpr std::uint64_t kMaxMetaBytes = 1ull << 20;  // meta is a few fields, never megabytes
constexpr std::size_t kMaxIoBytes = 1u << 30;        // per read()/write() call

struct Header {
    std::uint32_t magic;
    std::uint32_t type;
    std::uint64_t meta_bytes;
    std::uint64_t blob_bytes;
};
static_assert(sizeof(Header) == 24, "the header has no padding");

bool is_known_type(std::uint32_t type)
{
    switch (static_cast<MessageType>(type)) {
        case MessageType::hello:
        case MessageType::case_output:
        case MessageType::cuda_error:
        case MessageType::exception:
        case MessageType::done:
        case MessageType::timing_mapped:
        case MessageType::batch_ran:
        case MessageType::timing_unmapped:
        case MessageType::case_loaded:
        case MessageType::case_ran:
        case MessageType::calibration:
        case MessageType::timing_allocated:
        case MessageType::generated:
        case MessageType::checksummed:
        case MessageType::timing_freed:
        case MessageType::run_case:
        case MessageType::map_timing:
        case MessageType::run_batch:
        case MessageType::quit:
        case MessageType::unmap_timing:
        case MessageType::load_case:
        case MessageType::calibrate:
        case MessageType::allocate_timing:
        case MessageType::generate:
        case MessageType::checksum:
        case MessageType::free_timing:
            return true;
    }
    return false;
}

// A write to a pipe whose reader has gone must fail with EPIPE, not kill the runner.
void ignore_sigpipe_once()
{
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        ::sigaction(SIGPIPE, &ignore, nullptr);
    });
}

void write_all(int fd, const std::uint8_t* data, std::size_t size)
{
    while (size > 0) {
        ssize_t written = ::write(fd, data, std::min(size, kMaxIoBytes));
        if (written > 0) {
            data += written;
            size -= static_cast<std::size_t>(written);
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {  // someone made the fd non-blocking
            pollfd writable{fd, POLLOUT, 0};
            ::poll(&writable, 1, -1);
            continue;
        }
        if (errno == EPIPE) throw std::runtime_error("grader channel: the grader has closed it");
        throw std::runtime_error(std::string("grader channel: write failed: ") + std::strerror(errno));
    }
}

int milliseconds_until(Clock::time_point deadline)
{
    auto now = Clock::now();
    if (deadline <= now) return 0;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    return static_cast<int>(std::min<long long>(left, INT_MAX));
}

enum class Fill { complete, end_of_file, timed_out, failed };

// Reads into data[got, size), advancing `got`; waits for more only until `deadline`, and until
// `spin_until` without sleeping (a thread that sleeps takes microseconds to wake, more from a deep
// idle state of its core).
Fill fill(int fd, std::uint8_t* data, std::size_t size, std::size_t& got, Clock::time_point deadline,
          Clock::time_point spin_until)
{
    while (got < size) {
        pollfd readable{fd, POLLIN, 0};
        const bool spin = Clock::now() < std::min(spin_until, deadline);
        int ready = ::poll(&readable, 1, spin ? 0 : milliseconds_until(deadline));
        if (ready == 0 && spin) continue;
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0 || (readable.revents & POLLNVAL)) return Fill::failed;
        if (ready == 0) return Fill::timed_out;

        ssize_t n = ::read(fd, data + got, std::min(size - got, kMaxIoBytes));
        if (n > 0) {
            got += static_cast<std::size_t>(n);
        } else if (n == 0) {
            return Fill::end_of_file;
        } else if (errno != EINTR && errno != EAGAIN) {
            return Fill::failed;
        }
    }
    return Fill::complete;
}

Header header_of(const std::vector<std::uint8_t>& frame)
{
    Header header;
    std::memcpy(&header, frame.data(), sizeof header);
    return header;
}

struct Refused {};  // thrown by the parse's callback: the meta is not what a peer of the grader sends

// A message's meta as the reader keeps it, or a discarded value: JSON nested at most
// max_meta_depth deep (nlohmann::json copies and prints recursively: one nested deeper than the
// stack holds would crash the grader), keys of at most max_meta_key_bytes that valid_text keeps
// as they are, every string as valid_text (harness/text.hpp) of at most max_meta_string_bytes.
nlohmann::json parse_meta(const std::uint8_t* begin, const std::uint8_t* end)
{
    using Event = nlohmann::json::parse_event_t;
    const auto limits = [](int depth, Event event, nlohmann::json& parsed) {
        if ((event == Event::object_start || event == Event::array_start) && depth >= max_meta_depth) throw Refused{};
        if (event == Event::key) {
            const auto& key = parsed.get_ref<const std::string&>();
            if (key.size() > max_meta_key_bytes || valid_text(key) != key) throw Refused{};
        }
        if (event == Event::value && parsed.is_string()) {
            auto& text = parsed.get_ref<std::string&>();
            text = std::string(utf8_prefix(valid_text(text), max_meta_string_bytes));
        }
        return true;
    };
    try {
        return nlohmann::json::parse(begin, end, limits, false);
    } catch (const Refused&) {
        return nlohmann::json(nlohmann::json::value_t::discarded);
    }
}

}  // namespace

void ChannelWriter::send(MessageType type, const nlohmann::json& meta, const void* blob, std::size_t blob_bytes)
{
    ignore_sigpipe_once();
    if (blob_bytes > 0 && blob == nullptr)
        throw std::invalid_argument("ChannelWriter::send: blob_bytes without a blob");

    // Invalid UTF-8 (say, in a CUDA error message) is replaced rather than thrown on.
    std::string text = meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    Header header{kMagic, static_cast<std::uint32_t>(type), text.size(), blob_bytes};

    // Header and meta in one write; the blob straight from the caller's buffer.
    std::vector<std::uint8_t> frame(sizeof header + text.size());
    std::memcpy(frame.data(), &header, sizeof header);
    std::memcpy(frame.data() + sizeof header, text.data(), text.size());
    write_all(fd_, frame.data(), frame.size());
    if (blob_bytes > 0) write_all(fd_, static_cast<const std::uint8_t*>(blob), blob_bytes);
}

ChannelReader::Result ChannelReader::receive(Message& out, Clock::time_point deadline)
{
    // Marks the stream unusable: after a framing error, nothing later can be trusted.
    auto give_up = [this] {
        broken_ = true;
        frame_ = {};
        blob_ = {};
        frame_got_ = blob_got_ = 0;
        return Result::malformed;
    };
    auto outcome_of = [&](Fill fill_result) { return fill_result == Fill::timed_out ? Result::timed_out : give_up(); };
    if (broken_) return Result::malformed;
    const Clock::time_point spin_until = Clock::now() + spin_;

    // Header: an end of file before its first byte is the clean end of the stream.
    if (frame_got_ < sizeof(Header)) {
        frame_.resize(sizeof(Header));
        Fill got = fill(fd_, frame_.data(), frame_.size(), frame_got_, deadline, spin_until);
        if (got == Fill::end_of_file && frame_got_ == 0) return Result::end_of_stream;
        if (got != Fill::complete) return outcome_of(got);

        Header header = header_of(frame_);
        if (header.magic != kMagic || !is_known_type(header.type) || header.meta_bytes > kMaxMetaBytes ||
            header.blob_bytes > max_blob_bytes_)
            return give_up();
        try {
            frame_.resize(sizeof(Header) + header.meta_bytes);
            blob_.resize(header.blob_bytes);
        } catch (const std::bad_alloc&) {  // a blob within the limit, but not in this memory
            return give_up();
        } catch (const std::length_error&) {
            return give_up();
        }
    }

    // Meta, then blob, read straight into their final buffers.
    Fill got = fill(fd_, frame_.data(), frame_.size(), frame_got_, deadline, spin_until);
    if (got != Fill::complete) return outcome_of(got);
    got = fill(fd_, blob_.data(), blob_.size(), blob_got_, deadline, spin_until);
    if (got != Fill::complete) return outcome_of(got);

    Header header = header_of(frame_);
    const std::uint8_t* meta_text = frame_.data() + sizeof(Header);
    nlohmann::json meta = parse_meta(meta_text, meta_text + header.meta_bytes);
    if (meta.is_discarded()) return give_up();

    out.type = static_cast<MessageType>(header.type);
    out.meta = std::move(meta);
    out.blob = std::move(blob_);
    frame_.clear();
    blob_ = {};
    frame_got_ = blob_got_ = 0;
    return Result::message;
}

void send_descriptor(int socket, int descriptor)
{
    char byte = 'D';
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
    for (;;) {
        if (::sendmsg(socket, &message, MSG_NOSIGNAL) == 1) return;
        if (errno != EINTR) throw std::runtime_error(std::string("descriptor socket: ") + std::strerror(errno));
    }
}

int receive_descriptor(int socket, Clock::time_point deadline)
{
    for (;;) {
        pollfd readable{socket, POLLIN, 0};
        const int ready = ::poll(&readable, 1, milliseconds_until(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0 || !(readable.revents & POLLIN)) return -1;
        char byte = 0;
        iovec data{&byte, 1};
        // Room for more than one: whatever else a peer packs in is closed, never kept.
        alignas(cmsghdr) char control[CMSG_SPACE(16 * sizeof(int))] = {};
        msghdr message{};
        message.msg_iov = &data;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        const ssize_t got = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) return -1;
        std::vector<int> received;
        for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
            if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
            const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t k = 0; k < count; ++k) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(header) + k * sizeof(int), sizeof(int));
                received.push_back(fd);
            }
        }
        const bool one = received.size() == 1 && !(message.msg_flags & MSG_CTRUNC);
        if (!one)
            for (int fd : received) ::close(fd);
        return one ? received.front() : -1;
    }
}

}  // namespace harness

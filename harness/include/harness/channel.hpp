// The private channel between an exercise runner (child) and the grader (parent).
//
// Framing: every message is a fixed header {magic, type, meta_bytes, blob_bytes} followed by
// `meta_bytes` of JSON text and `blob_bytes` of raw data (an output buffer, timing samples).
// The parent decides every verdict from these raw data; nothing the child prints counts.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness {

enum class MessageType : std::uint32_t {
    hello = 1,        // meta: {exercise, device, cc, l2_bytes, launcher_found}
    case_begin = 2,   // meta: {case}
    case_output = 3,  // meta: {case, ...checks}, blob: the output buffer with its guard zones
    timing = 4,       // meta: {case, reps}, blob: float milliseconds, one per repetition
    cuda_error = 5,   // meta: {case, phase, error, message}
    case_end = 6,     // meta: {case}
    done = 7,         // meta: {}
};

struct Message {
    MessageType type{};
    nlohmann::json meta;
    std::vector<std::uint8_t> blob;
};

// Writer side (child). Blocking writes; throws std::runtime_error if the parent has gone away.
class ChannelWriter {
public:
    explicit ChannelWriter(int fd) : fd_(fd) {}
    // From the GRADER_CHANNEL_FD environment variable; nullopt when it is not set.
    static std::optional<ChannelWriter> from_environment();
    void send(MessageType type, const nlohmann::json& meta, const void* blob = nullptr,
              std::size_t blob_bytes = 0);
    int fd() const { return fd_; }

private:
    int fd_;
};

// Reader side (parent).
class ChannelReader {
public:
    explicit ChannelReader(int fd) : fd_(fd) {}
    enum class Result { message, end_of_stream, timed_out, malformed };
    // Waits for one whole message until `deadline`. A header with a bad magic or absurd sizes
    // (meta over 1 MiB, blob over `max_blob_bytes`) is `malformed`; the reader is then unusable.
    Result receive(Message& out, std::chrono::steady_clock::time_point deadline);
    void set_max_blob_bytes(std::uint64_t bytes) { max_blob_bytes_ = bytes; }

private:
    int fd_;
    std::uint64_t max_blob_bytes_ = 8ull << 30;
    // The message in progress when a deadline passed mid-message; the next receive() resumes it.
    std::vector<std::uint8_t> frame_;   // header, then header + meta once the header is known
    std::size_t frame_got_ = 0;
    std::vector<std::uint8_t> blob_;
    std::size_t blob_got_ = 0;
    bool broken_ = false;               // framing lost (malformed): every later call is malformed
};

}  // namespace harness

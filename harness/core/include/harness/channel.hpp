// The private channel between an exercise runner (child) and the grader (parent).
//
// Framing: every message is a fixed header {magic, type, meta_bytes, blob_bytes} followed by
// `meta_bytes` of JSON text and `blob_bytes` of raw data (an output buffer, timing samples).
// The parent decides every verdict from these raw data; nothing the child prints counts.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness {

// The fixed descriptor numbers a child with a channel finds open: it reads the grader's commands
// from the first and writes its messages to the second.
constexpr int child_command_fd = 3;
constexpr int child_channel_fd = 4;

// The grader drives the runner: it sends a command, the runner answers with one message (run_case
// with two: case_ran, then case_output), and the grader times each round trip on its own clock.
// Anything the runner sends that was not asked for is a protocol error. A case is load_case (the
// host's work, input generation, while the GPU serves others) then run_case (the GPU's work, under
// the grader's shared GPU lock until case_ran, then the host's checks and the output's transfer).
// Commands travel on fd child_command_fd, answers on child_channel_fd.
enum class MessageType : std::uint32_t {
    // runner -> grader
    hello = 1,          // unasked, first: {exercise, launcher_found}
    case_output = 3,    // answers run_case: {case, segments, input checks, repeat_checksum}, blob: raw output
    cuda_error = 5,     // answers any command that failed: {case, phase, error, message}; the runner exits
    exception = 6,      // answers a command that threw a C++ exception: {case, phase, type, message}; the runner exits
    done = 7,           // answers quit: {}
    prepared = 8,       // answers prepare: {}
    launched = 9,       // answers launch: {event_ms, hold_ran_out}
    checksummed = 10,   // answers checksum: {checksum}
    calibration = 11,   // answers calibrate (reference runner only): device facts, copy bandwidth
    timing_ended = 12,  // answers end_timing: {}
    case_loaded = 13,   // answers load_case: {case}
    case_ran = 14,      // answers run_case first, once the case's GPU work is done: {case}; case_output follows
    // grader -> runner
    run_case = 20,    // {case}: run the launcher on the loaded input (loading it first if need be), send the output
    prepare = 21,     // {}: the next placement of the case's buffers, its output poisoned
    launch = 22,      // {key, hold_us}: the input variant of `key`, the L2 flushed, one timed launcher call
    checksum = 23,    // {}: checksum of the output the last launch left
    quit = 24,        // {}
    calibrate = 25,   // {}: measure the device (reference runner only)
    end_timing = 26,  // {}: the repetitions' buffers go back to the GPU; the case stays (reference runner)
    load_case = 27,   // {case}: generate the case's input on the host; nothing on the GPU yet
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
    void send(MessageType type, const nlohmann::json& meta, const void* blob = nullptr, std::size_t blob_bytes = 0);
    int fd() const { return fd_; }

private:
    int fd_;
};

// Reader side (the grader for messages, the runner for commands).
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
    std::vector<std::uint8_t> frame_;  // header, then header + meta once the header is known
    std::size_t frame_got_ = 0;
    std::vector<std::uint8_t> blob_;
    std::size_t blob_got_ = 0;
    bool broken_ = false;  // framing lost (malformed): every later call is malformed
};

}  // namespace harness

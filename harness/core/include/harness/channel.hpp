// The private channel between an exercise runner (child) and the grader (parent).
//
// Framing: every message is a fixed header {magic, type, meta_bytes, blob_bytes} followed by
// `meta_bytes` of JSON text and `blob_bytes` of raw data (an output buffer, timing samples).
// The parent decides every verdict from these raw data; nothing the child prints counts.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/parallel.hpp"

namespace harness {

// The fixed descriptor numbers a child with a channel finds open: it reads the grader's commands
// from the first, writes its messages to the second, and the third is one end of a Unix socket
// over which descriptors travel (the timing buffers' device memory, harness/runner/timing_server.hpp).
constexpr int child_command_fd = 3;
constexpr int child_channel_fd = 4;
constexpr int child_handles_fd = 5;

// The grader drives the runner: it sends a command, the runner answers with one message (run_case
// with two: case_ran, then case_output), and the grader times each round trip on its own clock.
// Anything the runner sends that was not asked for is a protocol error. A case is load_case (the
// host's work, input generation, while the GPU serves others) then run_case (the GPU's work, under
// the grader's shared GPU lock until case_ran, then the host's checks and the output's transfer).
// Commands travel on fd child_command_fd, answers on child_channel_fd.
//
// A speed case is timed in batches (harness/timing/): the grader's timing server (the reference
// runner started with --timing-server, outside any sandbox) allocates each side's buffers, writes
// every batch's inputs from a seed only it and the grader know, and checksums the outputs itself;
// a runner (the submission's, or the reference's in the same sandbox) only maps those buffers and
// calls its launcher on them when told. Nothing a runner says about a batch but "done" is read.
enum class MessageType : std::uint32_t {
    // runner -> grader
    hello = 1,             // unasked, first: {exercise, launcher_found}
    case_output = 3,       // answers run_case: {case, segments, input checks, repeat run checksums}, blob: raw output
    cuda_error = 5,        // answers any command that failed: {case, phase, error, message}; the runner exits
    exception = 6,         // answers a command that threw a C++ exception: {case, phase, type, message}; the runner exits
    done = 7,              // answers quit: {}
    timing_mapped = 8,     // answers map_timing: {}
    batch_ran = 9,         // answers run_batch once every launcher call of the batch has finished: {}
    timing_unmapped = 12,  // answers unmap_timing: {}
    case_loaded = 13,      // answers load_case: {case}
    case_ran = 14,         // answers run_case first, once the case's GPU work is done: {case}; case_output follows
    // timing server -> grader
    calibration = 11,       // answers calibrate: device facts, copy bandwidth
    timing_allocated = 15,  // answers allocate_timing: {layout}; the allocation's descriptor follows on the handles socket
    generated = 16,         // answers generate, once the batch's inputs are written and the L2 flushed: {}
    checksummed = 10,       // answers checksum: {checksums: [one per repetition, "0x..."], window_ms, gpu_ms}
    timing_freed = 17,      // answers free_timing: {}
    // grader -> runner
    run_case = 20,      // {case}: run the launcher on the loaded input (loading it first if need be), send the output
    map_timing = 21,    // {layout}, the allocation's descriptor on the handles socket: map the batch buffers
    run_batch = 22,     // {launch}: call the launcher once per repetition of the mapped buffers, in order
    quit = 24,          // {}
    unmap_timing = 26,  // {}: unmap the batch buffers
    load_case = 27,     // {case}: generate the case's input on the host; nothing on the GPU yet
    // grader -> timing server
    calibrate = 25,        // {}: measure the device
    allocate_timing = 28,  // {set, shape}: device memory for one side's batches, exported as a descriptor
    generate = 29,         // {set, seed, values}: the clock starts; every repetition's input written, the L2 flushed
    checksum = 23,         // {set}: the L2 flushed, every output checksummed; the clock stops
    free_timing = 30,      // {set}
};

// How long a reader on a timed batch's path (the grader, its timing server, a runner) waits for
// the next message without sleeping: longer than a batch's window, so that no wake-up is timed.
constexpr std::chrono::microseconds batch_spin{20'000};

// What a reader takes in a message's meta (JSON text of at most 1 MiB); anything beyond makes the
// message malformed, but strings, which are cut to their limit. Each string is made valid_text
// (harness/text.hpp) as it is read: no control sequence of a submission's reaches a report or a
// terminal through a message.
constexpr int max_meta_depth = 64;                   // arrays and objects nested in one another
constexpr std::size_t max_meta_key_bytes = 256;      // an object's key (the protocol's are short names)
constexpr std::size_t max_meta_string_bytes = 4096;  // a string value, cut at a character's boundary

struct Message {
    MessageType type{};
    nlohmann::json meta;
    Bytes blob;
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
    // (meta over 1 MiB, blob over `max_blob_bytes`), or a meta that is not JSON within the limits
    // above, is `malformed`; the reader is then unusable.
    Result receive(Message& out, std::chrono::steady_clock::time_point deadline);
    // The largest blob the next messages may carry; the blob's memory is taken when its header
    // arrives, so a reader allows one only where it expects one of a known size (a case's output).
    void set_max_blob_bytes(std::uint64_t bytes) { max_blob_bytes_ = bytes; }
    // Each receive() waits without sleeping for up to `spin` before it sleeps: where the answer is
    // inside a timed batch's window, the microseconds a sleeping thread takes to wake are timed too.
    void spin_while_waiting(std::chrono::microseconds spin) { spin_ = spin; }

private:
    int fd_;
    std::uint64_t max_blob_bytes_ = 0;  // no blob unless asked for
    std::chrono::microseconds spin_{0};
    // The message in progress when a deadline passed mid-message; the next receive() resumes it.
    std::vector<std::uint8_t> frame_;  // header, then header + meta once the header is known
    std::size_t frame_got_ = 0;
    Bytes blob_;
    std::size_t blob_got_ = 0;
    bool broken_ = false;  // framing lost (malformed): every later call is malformed
};

// Descriptors over a Unix socket (SCM_RIGHTS), one per call. send_descriptor throws
// std::runtime_error when the peer has gone; receive_descriptor returns -1 when nothing arrived by
// `deadline` or what arrived was not one descriptor (anything else that came with it is closed).
void send_descriptor(int socket, int descriptor);
int receive_descriptor(int socket, std::chrono::steady_clock::time_point deadline);

}  // namespace harness

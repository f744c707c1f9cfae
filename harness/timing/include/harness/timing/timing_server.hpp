// The grader's handle on its timing server (harness/runner/timing_server.hpp): the reference
// runner started as `--timing-server`, outside any sandbox, one per grading. It measures the
// device at the start (calibrate) and owns the device memory of every timed batch: it writes the
// inputs from seeds the grader draws, checksums the outputs itself and times the window between.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/batch_layout.hpp"
#include "harness/process.hpp"
#include "harness/timed_data.hpp"

namespace harness::timing {

// The grader's own program failed: not the submission's doing.
struct TimingServerFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What the server saw of one batch.
struct Checksummed {
    std::vector<std::uint64_t> checksums;  // one per repetition, of the output as it was read
    double window_ms = 0;                  // its clock: before the inputs were written to after the checksums
    double generate_gpu_ms = 0, checksum_gpu_ms = 0;  // its own GPU work in the window (CUDA events)
};

class TimingServer {
public:
    // `spawn` starts the reference runner (`--timing-server` is added here). Started on first use,
    // and again after a failure.
    TimingServer(SpawnOptions spawn, std::chrono::milliseconds command_limit);
    ~TimingServer();
    TimingServer(const TimingServer&) = delete;
    TimingServer& operator=(const TimingServer&) = delete;

    // The device's identity and copy bandwidth (harness/runner/calibration.hpp).
    nlohmann::json calibrate();

    // One side's buffers: the layout, and the allocation's descriptor (the caller closes it).
    struct Allocation {
        nlohmann::json layout;
        int descriptor = -1;
    };
    Allocation allocate(const std::string& set, const BatchShape& shape);
    void generate(const std::string& set, std::uint64_t seed, TimedValues values);
    Checksummed checksum(const std::string& set);
    void free(const std::string& set);

    // Held by one timing at a time: a batch's window spans several commands.
    std::mutex& session() { return session_; }

private:
    Message command(MessageType type, const nlohmann::json& meta, MessageType answer);
    [[noreturn]] void fail(const std::string& why);

    SpawnOptions spawn_;
    std::chrono::milliseconds command_limit_;
    std::optional<Child> child_;
    std::mutex session_;
};

}  // namespace harness::timing

// One timed batch, the only way the grader times anything: the timing server writes the inputs of
// `reps` repetitions from a fresh seed (its clock starts), the side's runner calls its launcher on
// each and says it is done, the server checksums every output (its clock stops). The runner's
// GPU work, on any stream, must fall inside that window: its inputs do not exist before it and its
// outputs are read at its end, and the GPU runs one process's work at a time. What the window
// holds besides the launcher calls (writing the inputs, flushing the L2, the checksums, the
// messages) is the batch's fixed cost, measured on the reference alone with empty batches.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/batch_layout.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/timed_data.hpp"
#include "harness/timed_worker.hpp"
#include "harness/timing/timing_server.hpp"

namespace harness::timing {

// What a speed case's batches are made of.
struct BatchSpec {
    BatchShape shape;
    nlohmann::json args;  // the launcher's arguments but its buffers: the case's shape (ExerciseFamily::shape_json), mask
    TimedValues values;   // what the inputs are drawn from
};
BatchSpec batch_spec(const Exercise& exercise, const Case& c, int reps);

// The bytes that have crossed the GPU's host link (PCIe), both ways, since some fixed moment, as
// the driver counts them for the whole device (grading/gpu_monitor.hpp); nullopt where they cannot
// be read. An empty function: not counted.
using HostLinkBytes = std::function<std::optional<std::uint64_t>()>;

// One batch as the grader saw it.
struct Window {
    std::uint64_t seed = 0;
    bool launched = true;  // false: an empty batch (an empty kernel for each call): the fixed cost
    bool warmup = false;   // not counted
    double window_ms = 0;  // the timing server's clock, from before the inputs to after the checksums
    double grader_ms = 0;  // the grader's own clock around the same three commands
    double generate_gpu_ms = 0, checksum_gpu_ms = 0;
    std::vector<std::uint64_t> checksums;  // of each repetition's output, as the server read it
    // Bytes over the host link during the window (HostLinkBytes); nullopt: not counted. The
    // server's own work in it stays on the GPU, so a launcher that copies its data to the host and
    // back shows here, however it hides from the code checks.
    std::optional<std::uint64_t> host_link_bytes;
};

// A draw from the machine's entropy source: the seed of one batch, which only the grader and its
// timing server know until the batch's inputs exist.
std::uint64_t draw_seed();

// The sides of one timing, each with its buffers allocated on the server and mapped in its runner;
// unmapped and freed when this goes (errors then ignored: a runner may have died).
class Batches {
public:
    Batches(TimingServer& server, const BatchSpec& spec, HostLinkBytes host_link = {})
        : server_(server), spec_(spec), host_link_(std::move(host_link))
    {
    }
    ~Batches();
    Batches(const Batches&) = delete;
    Batches& operator=(const Batches&) = delete;

    // Allocates the side's buffers and has `worker` map them. Errors are the worker's or the
    // server's (TimingServerFailure).
    void add(const std::string& side, TimedWorker& worker);
    Window run(const std::string& side, std::uint64_t seed, bool launch, bool warmup);
    // No batch at all for `ms`: the host link's traffic over that time is the machine's (an
    // "idle" window: launched false, no checksums). Nullopt bytes where the link is not counted.
    Window idle(double ms);

private:
    TimingServer& server_;
    BatchSpec spec_;
    HostLinkBytes host_link_;
    std::vector<std::pair<std::string, TimedWorker*>> sides_;
};

}  // namespace harness::timing

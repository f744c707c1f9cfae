// The runner's side of a timed repetition, in the three steps the grader asks for and times on its
// own clock: prepare (the next placement, its output poisoned), launch (the input variant of the
// key that comes with it, the L2 flushed, one launcher call between two CUDA events), checksum (of
// the output that call left). The key arrives with the launch, so no input exists before the
// timed step: a submission's own thread cannot start on it while the grader's messages travel.
//
// The launch can hold the stream: a one-thread kernel spins before the start event until the
// runner has queued the whole launcher call behind it (or a time limit passes). The events then
// time the GPU's work alone, not how fast this process's CPU submits it, which differs from one
// process to the next by microseconds, as much as a tenth of a 40-microsecond kernel. A launcher
// that waits for the GPU itself (a synchronous copy, cudaDeviceSynchronize) cannot be queued: the
// hold then runs out, and says so.
//
// Repetitions take turns over several placements of the case's buffers in device memory (the
// case's own and `placements - 1` more sets of the same sizes), so that no median hangs on how
// one allocation falls on the memory's channels and the L2's slices. On an H100 the placements'
// medians agreed within a microsecond (docs/gpu-runs.md): a guard, not a measured gain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime.h>

#include "guarded_buffer.hpp"
#include "launchers.hpp"

namespace harness::runner {

class TimedRuns {
public:
    // The case's buffers (scratch may be null) and its launcher arguments, which point into them.
    TimedRuns(GuardedBuffer& in, GuardedBuffer& out, GuardedBuffer* scratch, const LauncherArgs& args, bool f64,
              std::size_t l2_bytes, int placements);
    ~TimedRuns();
    TimedRuns(const TimedRuns&) = delete;
    TimedRuns& operator=(const TimedRuns&) = delete;

    // Moves on to the next placement and poisons its output.
    void prepare();
    struct Launch {
        float event_ms = 0;         // between the events around the launcher call
        bool hold_ran_out = false;  // the stream was held and the time limit ended the hold
    };
    // Makes the input variant of `key`, flushes the L2 and times the launcher call; `hold_us` > 0:
    // hold the stream for it, for at most that many microseconds.
    Launch launch(const std::string& exercise, std::uint64_t key, double hold_us);
    std::uint64_t checksum();
    // Puts the case's input back into the case's own input buffer, which repetitions overwrite with
    // their variants: for TimedRuns made later on the same case.
    void restore_case_input();

private:
    struct Placement {
        std::unique_ptr<GuardedBuffer> owned_in, owned_out, owned_scratch;  // null for the case's own
        GuardedBuffer* in = nullptr;
        GuardedBuffer* out = nullptr;
        LauncherArgs args;
    };
    std::vector<Placement> placements_;
    std::size_t current_ = 0;
    bool f64_;
    std::size_t elements_, flush_bytes_;
    void* original_ = nullptr;  // the case's input, device copy
    void* flush_ = nullptr;     // written before each repetition: evicts the L2
    unsigned long long* sum_ = nullptr;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    unsigned flushes_ = 0;
    // Page-locked, mapped: the hold's release (written by this process) and whether it ran out
    // (written by the GPU).
    volatile unsigned* hold_flags_ = nullptr;
};

}  // namespace harness::runner

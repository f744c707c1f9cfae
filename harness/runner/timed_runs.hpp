// The runner's side of a timed repetition, in the three steps the grader asks for and times on its
// own clock: prepare (the input variant of a key, a poisoned output, a flushed L2), launch (one
// launcher call between two CUDA events), checksum (of the output that call left).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "guarded_buffer.hpp"
#include "launchers.hpp"

namespace harness::runner {

class TimedRuns {
public:
    // `in` and `out` are the case's buffers; the case's original input is kept aside here.
    TimedRuns(GuardedBuffer& in, GuardedBuffer& out, bool f64, std::size_t l2_bytes);
    ~TimedRuns();
    TimedRuns(const TimedRuns&) = delete;
    TimedRuns& operator=(const TimedRuns&) = delete;

    void prepare(std::uint64_t key);
    // Milliseconds between the events around the launcher call.
    float launch(const std::string& exercise, const LauncherArgs& args);
    std::uint64_t checksum();

private:
    GuardedBuffer& in_;
    GuardedBuffer& out_;
    bool f64_;
    std::size_t elements_, flush_bytes_;
    void* original_ = nullptr;  // the case's input, device copy
    void* flush_ = nullptr;     // written before each repetition: evicts the L2
    unsigned long long* sum_ = nullptr;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    unsigned flushes_ = 0;
};

}  // namespace harness::runner

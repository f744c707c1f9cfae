// When a speed case has been timed enough: nvbench's stopping criterion, for the grader. A named
// type, so that results.json says which rule ended each timing and whether it was met.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness::timing {

// Both sides' medians known to `target_rse` (the median's standard error over the median,
// statistics.hpp), once each side has `min_batches` timed batches; at most `max_batches` a side or
// `cap` of wall time, after which the timing is reported as capped.
struct StoppingRule {
    double target_rse = 0.01;
    int min_batches = 8;
    int max_batches = 60;
    std::chrono::milliseconds cap{8'000};

    static constexpr const char* name = "median_rse";
    // Whether samples (one list per side still timed) are known well enough.
    bool met(const std::vector<const std::vector<double>*>& sides) const;
    // {"name", "target_rse", "min_batches", "max_batches", "cap_seconds"}
    nlohmann::json describe() const;
};

}  // namespace harness::timing

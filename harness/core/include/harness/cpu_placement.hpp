// Cores kept for timing. A timed batch's window holds messages between four processes that spin
// while they wait (the grader's thread that drives it, the timing server, the two runners) and a
// synchronization after every launcher call: a core taken from one of them by a compile or a check
// lengthens the window by microseconds that differ from batch to batch and from grading to grading.
// On a machine with enough cores the grader therefore keeps a few for timing: its own work
// (compiles, inputs, checks: every thread and process it starts) runs on the others, and the
// processes of a batch move onto the kept ones while they time. Below 8 cores none are kept.
#pragma once

#include <vector>

namespace harness {

struct CpuPlacement {
    std::vector<int> timing;  // empty: none kept
    std::vector<int> work;    // every other core this process may use
};

// `cores` split: the highest-numbered ones (those a scheduler fills last) kept for timing, four of
// twelve or more, three of eight or more, none of fewer.
CpuPlacement split_cores(const std::vector<int>& cores);

// split_cores of this process's affinity, taken once at the first call.
const CpuPlacement& cpu_placement();

// Moves the calling thread onto the work cores, so that every thread and process it starts later
// runs there; the first thing `grade` does.
void keep_to_work_cores();

// Sets the calling thread's cores (all of them: an empty list is ignored). True when it took.
bool run_on_cores(const std::vector<int>& cores);

// The calling thread's cores now.
std::vector<int> current_cores();

// The calling thread on the timing cores while this lives, back where it was after.
class OnTimingCores {
public:
    OnTimingCores();
    ~OnTimingCores();
    OnTimingCores(const OnTimingCores&) = delete;
    OnTimingCores& operator=(const OnTimingCores&) = delete;

private:
    std::vector<int> before_;
};

}  // namespace harness

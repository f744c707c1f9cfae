// The two ways a speed case is timed, each a loop of batches (batch.hpp) until the stopping rule
// (stopping_rule.hpp) is met or its caps are hit:
//
// - alone: the reference, before the submission's runner starts, alternating launched and empty
//   batches: its time alone (the anchor its turns beside the submission are held to) and the
//   batches' fixed cost, measured where no process of the submission can inflate them;
// - in turns: the submission's batches and the reference's, A B then B A, each round on one fresh
//   seed for both (so the reference's checksums check the submission's), until both medians are
//   known. Drift of the machine lands on both sides alike.
#pragma once

#include <string>
#include <vector>

#include "harness/timing/batch.hpp"
#include "harness/timing/stopping_rule.hpp"

namespace harness::timing {

struct TimingPlan {
    int reps_per_batch = 8;  // launcher calls per batch, each on inputs and outputs of its own
    int warmup_batches = 1;  // per side, before the counted ones (first touches, module loads)
    StoppingRule rule;
};

struct AloneTiming {
    std::vector<Window> windows;  // launched and empty, in order
    bool capped = false;
    double seconds = 0;
};

// Throws ReferenceFailure or TimingServerFailure. `host_link`, where given, is read around every
// batch: the empty batches' traffic alone is the machine's quiet floor for the turns'.
AloneTiming time_alone(TimingServer& server, TimedWorker& reference, const BatchSpec& spec, const TimingPlan& plan,
                       const HostLinkBytes& host_link = {});

struct PairedTiming {
    std::vector<Window> student, reference;  // in order; a round's two batches share a seed
    // The reference's empty batches between rounds: the fixed cost again, beside the submission
    // (which can only make it larger: the lower of this and the alone one counts).
    std::vector<Window> reference_empty;
    // Where the host link is counted and a student batch took more than 1.5 times the reference's
    // (a slow submission's long windows catch more of the machine's traffic, a neighbour copying):
    // right after it, a window as long with no batch and the submission's runner stopped. Its
    // bytes are the machine's over that time: the control for computes_on_gpu.
    std::vector<Window> idle;
    int rounds = 0;
    bool capped = false;
    std::string reference_failure;  // why the reference's turns stopped, when they did
    double seconds = 0;
};

// `fixed_cost_ms` is the alone timing's; the stopping rule uses the lower of it and the empty
// batches' of these turns. The student's errors propagate; the reference's end its turns only;
// the server's throw TimingServerFailure. `host_link`, where given, is read around every batch
// (Window::host_link_bytes): the reference's turns are the control for the student's.
PairedTiming time_in_turns(TimingServer& server, TimedWorker& student, TimedWorker* reference, const BatchSpec& spec,
                           const TimingPlan& plan, double fixed_cost_ms, const HostLinkBytes& host_link = {});

// The fixed cost that counts: the lower of the alone one and the turns' own. Load on the machine
// (or a submission's work) can only make a batch longer, so the lower is the truer; an alone
// timing taken while the files compiled, say, is not charged to the turns.
double lower_fixed_cost_ms(double alone_fixed_cost_ms, const PairedTiming& turns);

}  // namespace harness::timing

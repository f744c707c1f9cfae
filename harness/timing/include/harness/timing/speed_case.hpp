// One exercise's speed cases, timed: the reference alone on each before the submission's runner
// starts, then the submission in turns with the reference once its runner reaches the case. Every
// timing has the GPU to itself (the GPU lock held exclusively, every grading's checking paused:
// harness/gpu_lock.hpp; for the turns the supervisor holds the GPU, so that it can keep it until a
// runner that failed is dead) and the timing server to itself; processes of no grading seen on the
// GPU around it (NVML, through `intruders`) have it timed once more, and marked if they stay.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/gpu_lock.hpp"
#include "harness/timing/paired_timing.hpp"
#include "harness/timing/reference_worker.hpp"

namespace harness::timing {

// Everything the judge needs of a speed case's timing.
struct CaseTiming {
    BatchSpec spec;
    TimingPlan plan;
    AloneTiming alone;                // the reference before the submission's runner started
    std::string alone_failure;        // why there is no alone timing
    double fixed_cost_ms = 0;         // from `alone`'s empty batches
    std::vector<PairedTiming> turns;  // one, or two where the first had company on the GPU
    // The reference alone once more, right after the turns with the submission's runner stopped,
    // where it was more than 3% slower beside the submission than alone before it (empty
    // otherwise): the judge tells the machine's drift from a slowed reference with it.
    AloneTiming alone_after;
    std::string other_processes;      // on the GPU during the counted turns, when any stayed
    std::string failure;              // the timing server's failure: no timing
    // Where the submission's runner caused that failure (SubmissionBlame): why. Then it is the
    // submission's doing, not the grader's, and the case's timing cannot show what its calls do.
    std::string withheld;
    double exclusive_seconds = 0;     // the GPU held for the turns
};

// The processes that keep the GPU from being the grading's alone, named ("pid 4242 (python3)"),
// empty for none (grading/gpu_monitor.hpp). Asked before a timing with no time, and after it with
// the time it began: another grading's processes count only if they were busy since then. With a
// `stopped_runner` (a process id, 0 for none): instead, that runner's processes (it and those
// below it) that were busy since `busy_since`: GPU work it queued before it was stopped.
using GpuCompany =
    std::function<std::string(std::optional<std::chrono::system_clock::time_point> busy_since, int stopped_runner)>;

// The timing in turns that counts: the one whose student median is lower (company on the GPU
// rarely stays, and a forgery is charged in both). `timing.turns` must not be empty.
const PairedTiming& counted_turns(const CaseTiming& timing);

// The reference's time that counts where it was timed beside the submission (`beside_ms`; alone
// before the submission's runner started: `alone_ms`), and the note that says why. Its time beside
// counts unless it was more than 3% slower than alone (timing_model.hpp: counted_reference_ms):
// the machine's drift, or a submission that kept the GPU busy during the reference's turns. Where
// the reference alone again after the turns (CaseTiming::alone_after: the submission's runner
// stopped, and the timing server's own GPU work as long as before, so no work queued beside it)
// is as slow as beside, the machine drifted and the time beside counts; otherwise the lower of
// its times alone.
struct CountedReference {
    double ms = 0;
    double after_ms = 0;  // its median alone after the turns; 0 where not timed or had company
    std::string note;     // empty where the time beside counts for want of any doubt
};
CountedReference counted_reference(const CaseTiming& timing, double beside_ms, double alone_ms);

// Why the submission's runner (process id), not the grader, kept the timing server from timing
// `c` (a runner holding far more of the GPU's memory than the case needs); empty: nothing shows it.
using SubmissionBlame = std::function<std::string(int runner, const Case& c)>;

class SpeedCaseTimer {
public:
    // `reference` may be null (no reference runner: the submission is timed alone, unscored).
    // `host_link` (may be empty) is read around each batch in turns (Window::host_link_bytes);
    // `blame` (may be empty) is asked when the timing server fails in the turns.
    SpeedCaseTimer(TimingServer& server, ReferenceWorker* reference, const GpuLock* gpu_lock,
                   GpuCompany intruders, TimingPlan plan, HostLinkBytes host_link = {}, SubmissionBlame blame = {})
        : server_(server),
          reference_(reference),
          gpu_lock_(gpu_lock),
          intruders_(std::move(intruders)),
          plan_(plan),
          host_link_(std::move(host_link)),
          blame_(std::move(blame))
    {
    }

    // The reference alone on `c`. Returns how long it waited for the GPU.
    std::chrono::steady_clock::duration time_alone(const Exercise& exercise, const Case& c);
    // `c` in turns with the reference, the GPU lock already held exclusively by the caller, and
    // the reference alone again where it was slower beside the submission (CaseTiming::
    // alone_after); the student's errors propagate, nothing else does. `waited` is how long it waited for the quiet
    // file and the timing server.
    CaseTiming time_in_turns(const Exercise& exercise, const Case& c, TimedWorker& student,
                             std::chrono::steady_clock::duration& waited);
    // The exclusive seconds of the alone timing of each case.
    double alone_seconds(int case_index) const;
    // Whether the reference's timing alone on this case hit its caps before the stopping rule was
    // met (a machine busy around it: the files compiling, other gradings): time it again when
    // that is over; one still disturbed is no anchor for the turns (judge).
    bool alone_disturbed(int case_index) const;
    // Whether the reference's timing alone on this case failed (the grader's side: its timing server
    // or the reference runner): a regrade alone times it again first.
    bool alone_failed(int case_index) const;

private:
    TimingServer& server_;
    ReferenceWorker* reference_;
    const GpuLock* gpu_lock_;
    GpuCompany intruders_;
    TimingPlan plan_;
    HostLinkBytes host_link_;
    SubmissionBlame blame_;
    std::map<int, CaseTiming> alone_;  // by case index: alone, alone_failure, fixed_cost_ms
};

}  // namespace harness::timing

// How the grader turns the repetitions of a speed case into a time it can grade on, trusting only
// its own clock and the reference runner (the grader's own program).
//
// Every repetition is three round trips the grader times itself: prepare (harness work: the next
// buffers' output poisoned), launch (harness work queued first: the input variant of the key sent
// with this command, the L2 flush; then the launcher call between two CUDA events), checksum
// (harness work). The reference's repetitions of the same case, on the same GPU, tell what
// the harness work and the round trip around a launch cost. A repetition's accepted time is
//
//   max(event time, launch round trip - launch overhead) + prepare excess + checksum excess
//
// where the excesses are what the submission's prepare and checksum took beyond the reference's
// allowance. Work hidden from the events (another stream, a forged event time) shows in the launch
// round trip; work moved into the other steps (precomputing while "preparing", answering a launch
// before the kernel ran) shows as their excess. Skipping harness work gains nothing, since a step
// that is faster than the reference's earns no credit.
#pragma once

#include <vector>

#include "harness/paired_timing.hpp"

namespace grading::detail {

struct Allowance {
    double launch_overhead_ms = 0.05;  // launch round trip minus events, at most, when honest
    double prepare_ms = 1e300;         // prepare round trip, at most, when honest
    double checksum_ms = 1e300;
};

// From the reference's timed repetitions (warm-ups ignored): each limit is the median plus three
// median absolute deviations (at least a small floor), so honest jitter is rarely charged.
Allowance allowance_from(const std::vector<harness::TimedRep>& reference);

double accepted_ms(const harness::TimedRep& rep, const Allowance& allowance);

// Accepted times of the timed repetitions (warm-ups dropped), in order.
std::vector<double> accepted_times(const std::vector<harness::TimedRep>& reps, const Allowance& allowance);
// The runner's event times of the timed repetitions.
std::vector<double> event_times(const std::vector<harness::TimedRep>& reps);

// The median accepted time of a batch is more than its median event time allows (10% and 5 us):
// work outside the events, a forgery, or a disturbance on the machine during the batch.
bool clock_disagrees(const std::vector<harness::TimedRep>& reps, const Allowance& allowance);

// The rule that ends a batch of paired repetitions: the medians of both sides' accepted times
// (the student's under the allowances of the reference's turns in the same batch) are known to
// within `target_rse`, relative standard error (grading/sample_statistics.hpp).
bool medians_settled(const harness::TimedBatch& batch, double target_rse);

// The reference's time that counts: its median beside the submission, unless that is more than
// 3% (and 2 us) slower than its median alone, measured before the submission's runner started:
// then the time alone. Drift of the machine stays within that; a submission that keeps the GPU
// busy during the reference's turns to look faster does not, and gains nothing.
double counted_reference_ms(double beside_ms, double alone_ms);

// Median absolute deviation from the median; 0 when empty.
double median_absolute_deviation(const std::vector<double>& samples);

}  // namespace grading::detail

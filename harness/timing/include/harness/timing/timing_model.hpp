// How batch windows become the time of one launcher call. A window holds `reps` launcher calls and
// the batch's fixed cost (the inputs written, two L2 flushes, the checksums, the messages), which
// the reference's empty batches measure before any runner of the submission exists:
//
//   time of one call = (window - fixed cost) / reps
//
// Every figure comes from the grader's own processes: the window from the timing server's clock,
// the fixed cost from the reference alone. The submission's runner says only "done", and saying it
// early does not end the window: the checksums that do read its outputs.
#pragma once

#include <vector>

#include "harness/timing/batch.hpp"

namespace harness::timing {

// The fixed cost of a batch: the median window of the timed empty batches (0 without any).
double fixed_cost_ms(const std::vector<Window>& windows);

// One call's time in each counted (not warm-up, launched) batch, in order; never below 0.
std::vector<double> call_times(const std::vector<Window>& windows, double fixed_cost_ms, int reps);

// The reference's time that counts: its median beside the submission, unless that is more than
// 3% (and 2 us) slower than its median alone, measured before the submission's runner started:
// then the time alone. Drift of the machine stays within that; a submission that keeps the GPU
// busy during the reference's turns to look faster does not, and gains nothing.
double counted_reference_ms(double beside_ms, double alone_ms);

// The median call time of `windows`' counted launched batches (0 without any).
double median_call_ms(const std::vector<Window>& windows, double fixed_cost_ms, int reps);

// Whether the timing server's own GPU work (writing the inputs, the checksums) took as long in
// `after` as in `before` (medians within 2%, which it keeps to 0.1% on a GPU it has to itself):
// a process that kept the GPU busy during `after`, with work queued before it was stopped, say,
// lengthens that work too.
bool same_server_work(const std::vector<Window>& before, const std::vector<Window>& after);

}  // namespace harness::timing

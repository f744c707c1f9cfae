#include "grading/timing_model.hpp"

#include <algorithm>
#include <cmath>

#include "grading/sample_statistics.hpp"
#include "harness/baseline.hpp"

namespace grading::detail {
namespace {

// Median + 3 MAD, and never less than `floor_ms` or `floor_fraction` of the median above it.
double upper_limit(const std::vector<double>& samples, double floor_ms, double floor_fraction)
{
    const double median = harness::median(samples);
    return median + std::max({3 * median_absolute_deviation(samples), floor_ms, floor_fraction * median});
}

}  // namespace

double median_absolute_deviation(const std::vector<double>& samples)
{
    const double median = harness::median(samples);
    std::vector<double> deviations;
    for (double s : samples) deviations.push_back(std::fabs(s - median));
    return harness::median(deviations);
}

Allowance allowance_from(const std::vector<harness::TimedRep>& reference)
{
    std::vector<double> overhead, prepare, checksum;
    for (const auto& rep : reference) {
        if (rep.warmup) continue;
        overhead.push_back(std::max(0.0, rep.launch_ms - rep.event_ms));
        prepare.push_back(rep.prepare_ms);
        checksum.push_back(rep.checksum_ms);
    }
    Allowance allowance;
    if (overhead.empty()) return allowance;
    allowance.launch_overhead_ms = upper_limit(overhead, 0.005, 0.0);
    allowance.prepare_ms = upper_limit(prepare, 0.02, 0.1);
    allowance.checksum_ms = upper_limit(checksum, 0.02, 0.1);
    return allowance;
}

double accepted_ms(const harness::TimedRep& rep, const Allowance& allowance)
{
    return std::max(rep.event_ms, rep.launch_ms - allowance.launch_overhead_ms) +
           std::max(0.0, rep.prepare_ms - allowance.prepare_ms) +
           std::max(0.0, rep.checksum_ms - allowance.checksum_ms);
}

std::vector<double> accepted_times(const std::vector<harness::TimedRep>& reps, const Allowance& allowance)
{
    std::vector<double> times;
    for (const auto& rep : reps)
        if (!rep.warmup) times.push_back(accepted_ms(rep, allowance));
    return times;
}

std::vector<double> event_times(const std::vector<harness::TimedRep>& reps)
{
    std::vector<double> times;
    for (const auto& rep : reps)
        if (!rep.warmup) times.push_back(rep.event_ms);
    return times;
}

bool clock_disagrees(const std::vector<harness::TimedRep>& reps, const Allowance& allowance)
{
    return harness::median(accepted_times(reps, allowance)) > 1.1 * harness::median(event_times(reps)) + 0.005;
}

double counted_reference_ms(double beside_ms, double alone_ms)
{
    return alone_ms > 0 && beside_ms > 1.03 * alone_ms + 0.002 ? alone_ms : beside_ms;
}

bool medians_settled(const harness::TimedBatch& batch, double target_rse)
{
    const Allowance allowance = allowance_from(batch.reference);
    const SampleSummary student = summarize(accepted_times(batch.student, allowance));
    const SampleSummary reference = summarize(accepted_times(batch.reference, allowance));
    return student.count > 0 && student.median_rse <= target_rse &&
           (reference.count == 0 || !batch.reference_failure.empty() || reference.median_rse <= target_rse);
}

}  // namespace grading::detail

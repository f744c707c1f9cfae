#include "harness/timing/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace harness::timing {
namespace {

double sorted_quantile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty()) return 0;
    const double at = q * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(at));
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

double sorted_median_standard_error(const std::vector<double>& sorted)
{
    const std::size_t n = sorted.size();
    if (n < 2) return 0;
    const double half_width = 0.98 * std::sqrt(static_cast<double>(n));  // 1.96 sqrt(n) / 2
    // 1-based ranks of the interval's ends, kept inside the sample.
    const double lower_rank = std::max(1.0, std::floor(static_cast<double>(n) / 2 - half_width));
    const double upper_rank = std::min(static_cast<double>(n), std::ceil(static_cast<double>(n) / 2 + half_width + 1));
    const double lower = sorted[static_cast<std::size_t>(lower_rank) - 1];
    const double upper = sorted[static_cast<std::size_t>(upper_rank) - 1];
    return (upper - lower) / (2 * 1.96);
}

}  // namespace

double median(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    return sorted_quantile(samples, 0.5);
}

double median_absolute_deviation(const std::vector<double>& samples)
{
    const double middle = median(samples);
    std::vector<double> deviations;
    deviations.reserve(samples.size());
    for (double s : samples) deviations.push_back(std::fabs(s - middle));
    return median(deviations);
}

double quantile(std::vector<double> samples, double q)
{
    std::sort(samples.begin(), samples.end());
    return sorted_quantile(samples, q);
}

double median_standard_error(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    return sorted_median_standard_error(samples);
}

SampleSummary summarize(std::vector<double> samples)
{
    SampleSummary s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.count = static_cast<int>(samples.size());
    s.median = sorted_quantile(samples, 0.5);
    s.minimum = samples.front();
    s.maximum = samples.back();
    if (s.median > 0) {
        s.spread = (sorted_quantile(samples, 0.75) - sorted_quantile(samples, 0.25)) / s.median;
        s.median_rse = sorted_median_standard_error(samples) / s.median;
    }
    return s;
}

}  // namespace harness::timing

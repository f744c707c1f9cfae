// Everything the grader says about a list of times, in one place. The times of a GPU kernel are
// skewed (a late repetition is common, an early one impossible), so everything here is
// distribution-free: order statistics, no assumed normal shape.
#pragma once

#include <vector>

namespace harness::timing {

struct SampleSummary {
    int count = 0;
    double median = 0, minimum = 0, maximum = 0;
    double spread = 0;      // interquartile range over the median
    double median_rse = 0;  // standard error of the median over the median
};

SampleSummary summarize(std::vector<double> samples);

// The median (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> samples);

// The q-quantile (0..1) of `samples`, linear between order statistics; 0 when empty.
double quantile(std::vector<double> samples, double q);

// The standard error of the median of `samples`, from the distribution-free 95% confidence
// interval of the median: the order statistics of ranks n/2 -+ 0.98 sqrt(n) (the binomial(n, 1/2)
// count below the true median, in its normal approximation) bound it, and the interval's half
// width over 1.96 is the standard error. 0 for fewer than two samples.
double median_standard_error(std::vector<double> samples);

// Median absolute deviation from the median; 0 when empty.
double median_absolute_deviation(const std::vector<double>& samples);

}  // namespace harness::timing

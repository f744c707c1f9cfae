// Internal: a running sum that is exact on integer-valued doubles and compensated (Neumaier)
// otherwise, for golden results and for the diagnosis's hypotheses.
#pragma once

#include <cmath>

namespace harness::detail {

struct CompensatedSum {
    double sum = 0, compensation = 0;
    void add(double x)
    {
        const double t = sum + x;
        compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
        sum = t;
    }
    double value() const { return sum + compensation; }
};

}  // namespace harness::detail

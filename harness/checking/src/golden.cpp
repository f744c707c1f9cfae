// What every family's checks share: summation tolerances, and the golden result and checksum of a
// case from its family.
#include <cmath>

#include "family_checks.hpp"
#include "harness/family.hpp"
#include "harness/variant.hpp"

namespace harness {
namespace {

double gamma(std::int64_t depth, double unit_roundoff)
{
    const double ku = static_cast<double>(depth) * unit_roundoff;
    return ku >= 1 ? INFINITY : ku / (1 - ku);
}

}  // namespace

double float_sum_tolerance(std::int64_t depth, double abs_sum)
{
    // One more rounding: the exact sum's own rounding to float when stored.
    return gamma(depth + 1, std::ldexp(1.0, -24)) * abs_sum;
}

double double_sum_tolerance(std::int64_t depth, double abs_sum)
{
    return gamma(depth + 1, std::ldexp(1.0, -53)) * abs_sum;
}

Expected golden(const Exercise& exercise, const Case& c, const CaseInputs& inputs)
{
    return detail::checks_of(exercise).golden(exercise, c, inputs);
}

std::uint64_t golden_checksum(const Exercise& exercise, const Case& c, const CaseInputs& inputs)
{
    const Expected expected = golden(exercise, c, inputs);
    if (element_type(exercise) == ElementType::f64)
        return output_checksum(expected.value.data(), expected.value.size());
    const std::vector<float> values(expected.value.begin(), expected.value.end());
    return output_checksum(values.data(), values.size());
}

}  // namespace harness

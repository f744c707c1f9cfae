// What every family's checks share: summation tolerances, and the golden result and checksum of a
// case from its family.
#include <cmath>

#include "family_checks.hpp"
#include "harness/family.hpp"
#include "harness/parallel.hpp"
#include "harness/timed_data.hpp"

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
    return expected_checksum(golden(exercise, c, inputs), element_type(exercise));
}

std::uint64_t expected_checksum(const Expected& expected, ElementType type)
{
    // output_checksum's terms, chunk by chunk: their sum modulo 2^64 is the same in any order.
    const std::vector<std::uint64_t> sums = with_element_type(type, [&](auto zero) {
        using Value = decltype(zero);
        return parallel_chunks<std::uint64_t>(0, static_cast<std::int64_t>(expected.value.size()), element_grain,
                                              [&](std::int64_t begin, std::int64_t end) {
                                                  std::uint64_t sum = 0;
                                                  for (auto i = static_cast<std::uint64_t>(begin);
                                                       i < static_cast<std::uint64_t>(end); ++i)
                                                      sum += checksum_term(i, static_cast<Value>(expected.value[i]));
                                                  return sum;
                                              });
    });
    std::uint64_t checksum = 0;
    for (std::uint64_t sum : sums) checksum += sum;
    return checksum;
}

}  // namespace harness

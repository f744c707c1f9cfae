#include <cmath>
#include <stdexcept>

#include "harness/check.hpp"

namespace harness {
namespace {

double gamma(std::int64_t depth, double unit_roundoff)
{
    const double ku = static_cast<double>(depth) * unit_roundoff;
    return ku >= 1 ? INFINITY : ku / (1 - ku);
}

// Inclusive scan restarted every `section` elements (section == 0: never restarted), in double.
// Integer data is exact in any order, so its tolerance is 0.
Expected scan_golden(const Case& c, const std::vector<float>& in, std::int64_t section)
{
    Expected e;
    e.value.resize(in.size());
    e.tolerance.assign(in.size(), 0.0);
    const bool exact = c.data == DataKind::integers;
    double sum = 0, abs_sum = 0;
    std::int64_t terms = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (section > 0 && static_cast<std::int64_t>(i) % section == 0) sum = abs_sum = 0, terms = 0;
        sum += in[i];
        abs_sum += std::fabs(in[i]);
        ++terms;
        e.value[i] = sum;
        if (!exact) e.tolerance[i] = float_sum_tolerance(scan_order_depth(terms), abs_sum);
    }
    return e;
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

std::int64_t scan_order_depth(std::int64_t terms)
{
    if (terms <= 2048) return std::max<std::int64_t>(terms - 1, 0);
    std::int64_t levels = 0;
    for (std::int64_t sections = (terms + 2047) / 2048; sections > 1; sections = (sections + 1) / 2) ++levels;
    // Any order inside a section, a sequential or tree combination of up to 2048 section sums
    // per level, and the final add of the offset.
    return 2047 + 2 * 2047 * ((levels + 10) / 11) + 1;
}

Expected golden(const Exercise& exercise, const Case& c, const CaseInputs& inputs)
{
    switch (exercise.family) {
    case Family::section_scan: return scan_golden(c, inputs.in_f32, exercise.section);
    case Family::full_scan: return scan_golden(c, inputs.in_f32, 0);
    default: throw std::logic_error("no golden results for family " + std::string(family_name(exercise.family)));
    }
}

}  // namespace harness

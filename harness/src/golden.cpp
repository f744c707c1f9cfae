#include <cmath>
#include <stdexcept>

#include "compensated_sum.hpp"
#include "harness/check.hpp"
#include "harness/variant.hpp"

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
    const bool exact = c.data == DataKind::integers;
    if (!exact) e.tolerance.resize(in.size());
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

// The sum of all inputs: exact for integer data (int64), otherwise compensated (Neumaier), whose
// error is negligible next to the tolerance. Any summation order, sequential included, is within
// gamma(n - 1) * sum |x| of the exact sum.
Expected reduction_golden(const Case& c, const std::vector<double>& in)
{
    detail::CompensatedSum sum;
    double abs_sum = 0;
    std::int64_t exact = 0;
    for (double x : in) {
        abs_sum += std::fabs(x);
        if (c.data == DataKind::integers) exact += static_cast<std::int64_t>(x);
        else sum.add(x);
    }
    Expected e;
    e.value = {c.data == DataKind::integers ? static_cast<double>(exact) : sum.value()};
    if (c.data != DataKind::integers) e.tolerance = {double_sum_tolerance(c.n - 1, abs_sum)};
    return e;
}

// out[i] = sum_j mask[j] * in[i - r + j] with zero ghosts (2D: over rows and columns), in double.
// Products and sums of float data in any order: gamma(terms) * sum |mask * in| (Higham 3.5).
Expected conv_golden(const Case& c, const CaseInputs& inputs, bool two_d)
{
    const std::int64_t height = two_d ? c.height : 1, width = two_d ? c.width : c.n;
    const int w = c.mask_width, r = w / 2;
    const int mask_rows = two_d ? w : 1;
    Expected e;
    e.value.assign(static_cast<std::size_t>(c.n), 0.0);
    const bool exact = c.data == DataKind::integers;
    if (!exact) e.tolerance.resize(static_cast<std::size_t>(c.n));
    for (std::int64_t y = 0; y < height; ++y) {
        for (std::int64_t x = 0; x < width; ++x) {
            double sum = 0, abs_sum = 0;
            for (int j = 0; j < mask_rows; ++j) {
                const std::int64_t yy = two_d ? y - r + j : 0;
                if (yy < 0 || yy >= height) continue;
                for (int k = 0; k < w; ++k) {
                    const std::int64_t xx = x - r + k;
                    if (xx < 0 || xx >= width) continue;
                    const double term = static_cast<double>(inputs.mask[static_cast<std::size_t>(j * w + k)]) *
                                        inputs.in_f32[static_cast<std::size_t>(yy * width + xx)];
                    sum += term;
                    abs_sum += std::fabs(term);
                }
            }
            const auto i = static_cast<std::size_t>(y * width + x);
            e.value[i] = sum;
            if (!exact) e.tolerance[i] = float_sum_tolerance(std::int64_t{mask_rows} * w, abs_sum);
        }
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
    case Family::reduction: return reduction_golden(c, inputs.in_f64);
    case Family::conv1d: return conv_golden(c, inputs, false);
    case Family::conv2d: return conv_golden(c, inputs, true);
    }
    throw std::logic_error("no golden results for family " + std::string(family_name(exercise.family)));
}

std::uint64_t golden_checksum(const Exercise& exercise, const Case& c, const CaseInputs& inputs)
{
    const Expected expected = golden(exercise, c, inputs);
    if (element_type(exercise.family) == ElementType::f64) return output_checksum(expected.value.data(), expected.value.size());
    const std::vector<float> values(expected.value.begin(), expected.value.end());
    return output_checksum(values.data(), values.size());
}

}  // namespace harness

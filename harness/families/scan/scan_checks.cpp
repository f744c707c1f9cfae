// Scan golden results, tolerances, the CPU version and the diagnosis (harness_checking: grader
// only). A wrong output is tested against hypotheses: each recomputes what a specific mistake
// would produce and checks whether the output matches it exactly (integer data) or within
// tolerance (fractional data).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "family_checks.hpp"
#include "scan/scan.hpp"

namespace harness {

std::int64_t scan_order_depth(std::int64_t terms)
{
    if (terms <= 2048) return std::max<std::int64_t>(terms - 1, 0);
    std::int64_t levels = 0;
    for (std::int64_t sections = (terms + 2047) / 2048; sections > 1; sections = (sections + 1) / 2) ++levels;
    // Any order inside a section, a sequential or tree combination of up to 2048 section sums
    // per level, and the final add of the offset.
    return 2047 + 2 * 2047 * ((levels + 10) / 11) + 1;
}

namespace detail {
namespace {
bool close(double actual, double wanted, double tolerance)
{
    return std::fabs(actual - wanted) <= tolerance;
}

// Inclusive scan restarted every `section` elements (0: never).
std::function<double(std::size_t)> sectioned_scan(const UninitializedVector<float>& in, std::int64_t section)
{
    return [&in, section, sum = 0.0](std::size_t i) mutable {
        if (section > 0 && static_cast<std::int64_t>(i) % section == 0) sum = 0;
        sum += in[i];
        return sum;
    };
}

// If the wrong elements of each section are all off by one constant, that constant for the
// first wrong section.
std::optional<std::pair<std::int64_t, double>> constant_offset_per_section(const ArrayComparison& cmp,
                                                                           const Expected& expected,
                                                                           std::int64_t section)
{
    std::optional<std::pair<std::int64_t, double>> first;
    std::int64_t current = -1, count = 0;
    double offset = 0;
    for (std::size_t i = 0; i < cmp.marks.size(); ++i) {
        if (cmp.marks[i] != Mark::wrong) continue;
        const std::int64_t s = static_cast<std::int64_t>(i) / section;
        const double diff = cmp.actual(i) - expected.value[i];
        if (s != current) {
            if (current >= 0 && count < 2) return std::nullopt;  // one element is no pattern
            current = s, offset = diff, count = 0;
        } else if (!close(diff, offset, 2 * expected.tolerance_at(i))) {
            return std::nullopt;
        }
        ++count;
        if (!first) first = std::make_pair(s, diff);
    }
    if (count < 2) return std::nullopt;
    return first;
}

// The power of two of which x (finite, nonzero) is a whole multiple: the exponent of its lowest
// set bit.
int lowest_bit_exponent(float x)
{
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int exponent = static_cast<int>((bits >> 23) & 0xffu);
    const std::uint32_t significand = (bits & 0x7fffffu) | (exponent > 0 ? 0x800000u : 0u);
    return std::max(exponent, 1) - 150 + __builtin_ctz(significand);
}

// Whether every running sum of `in` and of |in|, from any start and in any order, is exact in
// double: if all values are multiples of 2^e and the sum of all |in| is below 2^(52 + e), every
// partial sum is a multiple of 2^e below 2^(53 + e) in magnitude, which a double holds. Integer
// data and the multiples of 2^-20 of fractional data always are.
bool running_sums_exact(const UninitializedVector<float>& in)
{
    struct Range {
        bool finite = true;
        int lowest_bit = std::numeric_limits<int>::max();
        double abs_sum = 0;
    };
    const auto ranges = parallel_chunks<Range>(
        0, static_cast<std::int64_t>(in.size()), element_grain, [&](std::int64_t begin, std::int64_t end) {
            Range r;
            for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
                if (!std::isfinite(in[i])) {
                    r.finite = false;
                    break;
                }
                if (in[i] != 0) r.lowest_bit = std::min(r.lowest_bit, lowest_bit_exponent(in[i]));
                r.abs_sum += std::fabs(in[i]);
            }
            return r;
        });
    int lowest_bit = std::numeric_limits<int>::max();
    double abs_sum = 0;
    for (const Range& r : ranges) {
        if (!r.finite) return false;
        lowest_bit = std::min(lowest_bit, r.lowest_bit);
        abs_sum += r.abs_sum;
    }
    // The computed abs_sum is within a factor (1 + n 2^-53) of the true one: below 2^(52 + e)
    // leaves the true one below 2^(53 + e).
    return abs_sum == 0 || abs_sum < std::ldexp(1.0, 52 + lowest_bit);
}

// Inclusive scan restarted every `section` elements (section == 0: never restarted), in double.
// Integer data is exact in any order, so its tolerance is 0.
Expected scan_golden(const Case& c, const UninitializedVector<float>& in, std::int64_t section)
{
    const auto n = static_cast<std::int64_t>(in.size());
    Expected e;
    e.value.resize(in.size());
    const bool exact = c.data == DataKind::integers;
    if (!exact) e.tolerance.resize(in.size());
    // The scan of in[begin, end) in one sequential pass, from these running sums at `begin`.
    auto scan_range = [&](std::int64_t begin, std::int64_t end, double sum, double abs_sum) {
        // Its position in its section, counted rather than divided (a 64-bit % an element was most
        // of this loop's time); chunks start at a section's start where there are sections.
        std::int64_t position = section > 0 ? begin % section : begin;
        for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i, ++position) {
            if (section > 0 && position == section) position = 0;
            if (section > 0 && position == 0) sum = abs_sum = 0;
            sum += in[i];
            abs_sum += std::fabs(in[i]);
            e.value[i] = sum;
            if (!exact) e.tolerance[i] = float_sum_tolerance(scan_order_depth(position + 1), abs_sum);
        }
    };
    if (section > 0) {
        // Chunks of whole sections: each chunk's pass is the one pass over the array.
        parallel_for(0, n, section * std::max<std::int64_t>(1, element_grain / section),
                     [&](std::int64_t begin, std::int64_t end) { scan_range(begin, end, 0, 0); });
    } else if (running_sums_exact(in)) {
        // No addition rounds, so each chunk can start from the sums of the chunks before it: the
        // same values as one pass. Pass 1 sums the chunks, pass 2 scans each from its start.
        using Sums = std::pair<double, double>;
        std::vector<Sums> starts =
            parallel_chunks<Sums>(0, n, element_grain, [&](std::int64_t begin, std::int64_t end) {
                Sums sums{0, 0};
                for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
                    sums.first += in[i];
                    sums.second += std::fabs(in[i]);
                }
                return sums;
            });
        Sums before{0, 0};
        for (Sums& start : starts) {
            const Sums chunk = start;
            start = before;
            before.first += chunk.first;
            before.second += chunk.second;
        }
        parallel_for(0, n, element_grain, [&](std::int64_t begin, std::int64_t end) {
            const Sums& start = starts[static_cast<std::size_t>(begin / element_grain)];
            scan_range(begin, end, start.first, start.second);
        });
    } else {
        scan_range(0, n, 0, 0);  // the result depends on the order of additions: one pass
    }
    return e;
}

void diagnose_scan(const Exercise& exercise, bool whole_array, const Case& c, const CaseInputs& inputs,
                   const Expected& expected, const ArrayComparison& cmp, Diagnosis& d)
{
    const std::int64_t section = scan_section(exercise);
    describe_sections(cmp, section, "section", d);
    if (cmp.wrong == 0) return;
    const auto& in = inputs.in_f32;
    const std::int64_t own_section = whole_array ? 0 : section;

    // Exclusive instead of inclusive: out[i] misses in[i] itself.
    {
        auto inclusive = sectioned_scan(in, own_section);
        if (bad_elements_match(cmp, expected, [&](std::size_t i) { return inclusive(i) - in[i]; })) {
            d.findings.push_back(
                "every wrong element equals the sum of the elements BEFORE it (an exclusive scan): "
                "the contract asks for an inclusive scan, out[i] includes in[i]");
            d.detail["pattern"] = "exclusive_scan";
            return;
        }
    }
    // Whole-array scan whose sections never get the sums of the sections before them.
    if (whole_array && bad_elements_match(cmp, expected, sectioned_scan(in, section), 2)) {
        d.findings.push_back("each " + std::to_string(section) +
                             "-element section holds the scan of its own elements only: the sums of all earlier "
                             "sections are never added (the add-back of the scanned block sums is missing or does "
                             "nothing)");
        d.detail["pattern"] = "missing_block_offsets";
        return;
    }
    // Sections of the wrong size, the nearest to the right size first (a few wrong elements can fit
    // several smaller sizes at once).
    for (std::int64_t size : {4096, 2048, 1024, 512, 256}) {
        if (size == section) continue;  // its own size: correct, or missing offsets above
        if (size >= c.n) continue;
        if (bad_elements_match(cmp, expected, sectioned_scan(in, size), 2)) {
            d.findings.push_back(
                "the output matches independent scans of " + std::to_string(size) + "-element sections, but " +
                (own_section ? "this exercise's sections have " + std::to_string(own_section) + " elements"
                             : std::string("this exercise scans the whole array")));
            d.detail["pattern"] = "wrong_section_size";
            d.detail["matches_section_size"] = size;
            return;
        }
    }
    // A wrong constant added to whole sections: a block offset that is computed wrongly.
    if (!whole_array) return;  // only the whole-array scan adds offsets
    if (auto offset = constant_offset_per_section(cmp, expected, section)) {
        d.findings.push_back("within each wrong section every wrong element is off by the same amount (section " +
                             std::to_string(offset->first) + ": off by " + format_value(offset->second) +
                             "): the offset added to the section (the scanned sum of the sections before it) is wrong");
        d.detail["pattern"] = "wrong_section_offset";
    }
}

class ScanChecks : public FamilyChecks {
public:
    explicit ScanChecks(bool whole_array) : whole_array_(whole_array) {}

    Expected golden(const Exercise& exercise, const Case& c, const CaseInputs& inputs) const override
    {
        return scan_golden(c, inputs.in_f32, whole_array_ ? 0 : scan_section(exercise));
    }

    double run_cpu_version(const Exercise& exercise, const Case&, const CaseInputs& inputs,
                           std::vector<float>& out) const override
    {
        const std::int64_t section = whole_array_ ? 0 : scan_section(exercise);
        float sum = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (section > 0 && static_cast<std::int64_t>(i) % section == 0) sum = 0;
            sum += inputs.in_f32[i];
            out[i] = sum;
        }
        return out.empty() ? 0 : out.back();
    }

    void diagnose(const Exercise& exercise, const Case& c, const CaseInputs& inputs, const Expected& expected,
                  const ArrayComparison& cmp, Diagnosis& d) const override
    {
        diagnose_scan(exercise, whole_array_, c, inputs, expected, cmp, d);
    }

private:
    bool whole_array_;
};

}  // namespace

const FamilyChecks& section_scan_checks()
{
    return single_instance<ScanChecks, false>();
}

const FamilyChecks& full_scan_checks()
{
    return single_instance<ScanChecks, true>();
}

}  // namespace detail
}  // namespace harness

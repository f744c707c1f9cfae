// Golden results on the CPU, the comparison of a runner's raw output with them, and the diagnosis
// a student reads. All of it runs in the grader (parent) process, on data the runner sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/cases.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/parallel.hpp"
#include "harness/poison.hpp"

namespace harness {

// Expected output and, per element, the largest difference a correct summation order can make.
// (Gigabytes for the largest cases, filled in parallel: hence vectors that start uninitialized.)
struct Expected {
    UninitializedVector<double> value;
    UninitializedVector<double> tolerance;  // empty where every correct order is exact (integer data)

    double tolerance_at(std::size_t i) const { return tolerance.empty() ? 0.0 : tolerance[i]; }

    // Special members out of line (check.cpp), as CaseInputs's (harness/data.hpp says why).
    Expected();
    Expected(const Expected&);
    Expected(Expected&&) noexcept;
    Expected& operator=(const Expected&);
    Expected& operator=(Expected&&) noexcept;
    ~Expected();
};

Expected golden(const Exercise& exercise, const Case& c, const CaseInputs& inputs);
// The checksum (harness/timed_data.hpp) of the correct output for these inputs, as the runner computes
// it on the GPU. Exact for integer-valued data, which is what timed cases hold.
std::uint64_t golden_checksum(const Exercise& exercise, const Case& c, const CaseInputs& inputs);
// The same of golden results at hand.
std::uint64_t expected_checksum(const Expected& expected, ElementType type);

// Tolerance for a float32 sum of `terms` values whose absolute values add up to `abs_sum`, formed
// in any order whose combining tree is at most `depth` additions deep: gamma(depth) * abs_sum with
// gamma(k) = k u / (1 - k u), u = 2^-24 (Higham, Accuracy and Stability, ch. 4).
double float_sum_tolerance(std::int64_t depth, double abs_sum);
// Likewise for float64 (u = 2^-53).
double double_sum_tolerance(std::int64_t depth, double abs_sum);

// What the runner sent back for one case, split into its segments.
struct RawOutput {
    Bytes out_with_guards;                      // guard_elements, output, guard_elements
    std::vector<std::uint8_t> in_guards;        // front guard then back guard of the input
    std::vector<std::uint8_t> scratch_guards;   // same for scratch (empty if none)
    std::uint64_t input_checksum = 0;  // bits_checksum of the input after the run (harness/data.hpp)
    std::int64_t input_first_changed = -1;
    std::int64_t input_changed_elements = 0;
    std::optional<std::uint64_t> repeat_checksum;  // bits_checksum of a second run's output on the same input
    // Where the run left out[0] NaN or never written: the checksum of values (golden_checksum's) of
    // one more run on the same input from an output of zeros.
    std::optional<std::uint64_t> zero_start_checksum;

    // The output itself, without its guard zones (check_case has verified the sizes).
    const std::uint8_t* output(ElementType type) const
    {
        return out_with_guards.data() + static_cast<std::size_t>(guard_elements) * element_bytes(type);
    }
    std::uint64_t output_checksum(ElementType type) const
    {
        const std::size_t bytes = element_bytes(type);
        return bits_checksum(output(type), out_with_guards.size() / bytes - 2 * static_cast<std::size_t>(guard_elements),
                               type == ElementType::f64);
    }

    // Special members out of line (check.cpp), as CaseInputs's (harness/data.hpp says why).
    RawOutput();
    RawOutput(const RawOutput&);
    RawOutput(RawOutput&&) noexcept;
    RawOutput& operator=(const RawOutput&);
    RawOutput& operator=(RawOutput&&) noexcept;
    ~RawOutput();
};
// From a case_output message's meta and blob; throws std::runtime_error if they do not fit.
RawOutput parse_raw_output(const nlohmann::json& meta, Bytes&& blob);

struct Diagnosis {
    bool correct = false;
    std::string summary;                // one line, e.g. "1,536 of 4,096 elements wrong"
    std::vector<std::string> findings;  // what went wrong and where, in words a student can act on
    // The same as data: first_wrong, counts, sections, ...; where a family check names the mistake,
    // "pattern" (its id) and "pattern_finding" (the index in findings of the sentence that names it);
    // where elements were never written, "unwritten_finding" (the index of the sentence that says so).
    nlohmann::json detail;
};

Diagnosis check_case(const Exercise& exercise, const Case& c, const CaseInputs& inputs, const Expected& expected,
                     const RawOutput& raw);

// "1234567" -> "1,234,567" (reports are read by people).
std::string with_commas(std::int64_t value);
// A float or double as a short exact-enough string ("nan", "never written", "12", "0.3125").
std::string format_value(double value);

}  // namespace harness

// Internal to the checker: the element-by-element comparison that every array output shares, and
// the helpers the families' diagnoses build on (family_checks.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "harness/check.hpp"

namespace harness::detail {

// One element of the output, classified.
enum class Mark : std::uint8_t { ok, wrong, unwritten, nan, guard_copy };

struct ArrayComparison {
    // The output as the runner sent it (RawOutput::output, which outlives the comparison): read
    // where needed rather than copied to doubles (gigabytes for the largest cases).
    const std::uint8_t* output = nullptr;
    ElementType type = ElementType::f32;
    UninitializedVector<Mark> marks;  // one per output element
    std::int64_t bad = 0, wrong = 0, unwritten = 0, nan = 0, guard_copy = 0;
    std::int64_t first_bad = -1, last_bad = -1;

    // Output element i as a double (NaN where not a number).
    double actual(std::size_t i) const
    {
        return with_element_type(type, [&](auto value) {
            std::memcpy(&value, output + i * sizeof value, sizeof value);
            return static_cast<double>(value);
        });
    }
};

ArrayComparison compare_array(const RawOutput& raw, ElementType type, const Expected& expected);

// Findings about memory outside the output: guard zones of out, in and scratch, a modified input.
void check_guards(const RawOutput& raw, ElementType type, std::int64_t n_in, const CaseInputs& inputs,
                  Diagnosis& diagnosis);

// Where the bad elements lie when the output is cut into sections of `section` elements
// (scan sections, reduction blocks, convolution tiles): counts, ranges, offsets within a section.
void describe_sections(const ArrayComparison& cmp, std::int64_t section, const char* section_word,
                       Diagnosis& diagnosis);

// True if every written, non-NaN wrong element equals `model(i)` within its tolerance and there
// are at least `min_matches` of them (one element can match a model by chance); `model` is called
// for every i in order, so it can keep running sums.
bool bad_elements_match(const ArrayComparison& cmp, const Expected& expected,
                        const std::function<double(std::size_t)>& model, std::int64_t min_matches = 1);

}  // namespace harness::detail

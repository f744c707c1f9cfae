// The CPU side of a speed case: a plain single-threaded version of the exercise, timed on the
// case's input in the grading run, and the minimum bytes a GPU version must move.
#pragma once

#include <cstdint>

#include "harness/cases.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"

namespace harness {

// Larger cases are timed on the CPU at this many elements (32 MB of floats) and scaled by size:
// every CPU version takes time in proportion to its elements, and the 8192x8192 convolution would
// take seconds of the grading three times over.
constexpr std::int64_t cpu_baseline_elements = std::int64_t{1} << 23;

// Median wall time in milliseconds of `runs` single-threaded CPU runs on the case's inputs, or on a
// copy of the case scaled down to cpu_baseline_elements (then scaled back up).
double cpu_baseline_ms(const Exercise& exercise, const Case& c, const CaseInputs& inputs, int runs = 3);

// Bytes read plus bytes written by an ideal implementation: each input once, each output once.
std::int64_t minimum_bytes(const Exercise& exercise, const Case& c);

}  // namespace harness

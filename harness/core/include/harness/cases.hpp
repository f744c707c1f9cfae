// The cases each exercise is graded on. A case is reproducible from its exercise, label and seed:
// the seed is derived from the two names, so `grade --exercise E --case LABEL` reruns it anywhere.
#pragma once

#include <any>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/exercise.hpp"

namespace harness {

enum class DataKind {
    integers,          // integer-valued: every correct summation order gives the exact result
    fractions,         // fractional values of mixed sign: checked with a rounding-error tolerance
    mixed_magnitudes,  // reductions: values from 2^-20 to 2^20 together, mixed sign
};
const char* data_kind_name(DataKind kind);
// The kind of a name data_kind_name gives, or nullopt.
std::optional<DataKind> data_kind_named(const std::string& name);

struct Case {
    int index = 0;              // position in the exercise's case list
    std::string label;          // unique within the exercise, e.g. "n=1025/int"
    std::int64_t n = 0;  // input elements (an image: its height times its width)
    // The rest of the case's shape, in its family's own type (a convolution's ConvolutionShape:
    // harness/families/convolution/convolution.hpp), read with shape_of; empty where n is the whole
    // shape. Only its family reads it; everyone else has its JSON (ExerciseFamily::shape_json).
    std::any shape;
    DataKind data = DataKind::integers;
    std::uint64_t seed = 0;
    bool timed = false;  // a speed case: also timed against the reference
    // A hidden case (the rubric's visible_cases and hidden_cases, grading/hidden_cases.hpp): its seed
    // comes from the instructor's secret, students' reports show only whether it passed.
    bool hidden = false;
};

// A case's shape in its family's own type (Case::shape; also the runner's LauncherArgs::shape):
// throws std::bad_any_cast where the holder's shape is of another type or none.
template <typename Shape, typename Holder>
const Shape& shape_of(const Holder& holder)
{
    return std::any_cast<const Shape&>(holder.shape);
}

// The exercise's cases, from its family (harness/family.hpp).
std::vector<Case> cases_for(const Exercise& exercise);
// What the grader sends the runner with load_case and run_case: everything the case's input is made
// from (its shape as its family writes it, data kind and seed), so that a case the runner's own
// list does not have (a hidden size, a seed from the instructor's secret) runs the same way as any
// other.
nlohmann::json case_spec(const Exercise& exercise, const Case& c);
// The case of a spec, numbered `index`; throws std::invalid_argument for a spec the runner cannot run
// (a field missing or out of range).
Case case_from_spec(const Exercise& exercise, const nlohmann::json& spec, int index);
// The case with this label, or nullptr.
const Case* find_case(const std::vector<Case>& cases, const std::string& label);
// The case with this index (Case::index), or nullptr.
const Case* find_case(const std::vector<Case>& cases, int index);

// 64-bit FNV-1a: seeds from names, checksums of buffers.
std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t hash = 0xcbf29ce484222325ull);
std::uint64_t seed_for(const std::string& exercise, const std::string& label);
// "0x" and 16 hex digits: how seeds and keys are written in JSON and shown (numbers above 2^53 are
// corrupted by common JSON readers).
std::string hex64(std::uint64_t value);

}  // namespace harness

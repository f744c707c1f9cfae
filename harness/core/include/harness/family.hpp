// What the runner and the grader both need to know of an exercise family: its cases, their inputs,
// the buffers its launcher takes and how `grade bench` checks its reference. One implementation per
// id of harness/families.def, in that family's folder under harness/families/; the grader-side half
// (golden results, diagnosis) is FamilyChecks in harness_checking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/cases.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/technique.hpp"
#include "harness/timed_data.hpp"

namespace harness {

// How `grade bench` checks an exercise's reference and what it measures it beside: the family's
// answer, which harness/runner/bench.cu carries out with one of its engines and
// grading/src/bench.cpp reads back (checking the runner's rows and writing the table).
struct BenchPlan {
    // What the reference's output is checked against before it is timed.
    enum class Oracle {
        cub_inclusive_scan,  // cub::DeviceScan::InclusiveSum of floats, also timed as a ceiling
        cub_sum,             // cub::DeviceReduce::Sum of doubles, also timed as a ceiling
        direct_convolution,  // the definition, one output element per thread (not timed)
    };
    Oracle oracle = Oracle::cub_inclusive_scan;
    // A correct output restarts its scan every `section` elements (0: never): it is compared with
    // CUB's whole-array scan through that, and the table says CUB does more.
    std::int64_t section = 0;
    // Whether the output's bytes count among the fewest the operation moves (a reduction's one
    // element does not).
    bool output_moves_bytes = true;

    // Whether CUB has the operation: then it is timed beside the reference.
    bool timed_beside_cub() const { return oracle != Oracle::direct_convolution; }
};

class ExerciseFamily {
public:
    virtual ~ExerciseFamily() = default;
    virtual ElementType element_type() const = 0;
    virtual bool uses_scratch() const = 0;  // the launcher takes a scratch buffer of n + scratch_extra
    virtual std::int64_t output_elements(const Case& c) const { return c.n; }
    virtual std::vector<Case> cases(const Exercise& exercise) const = 0;
    virtual CaseInputs inputs(const Exercise& exercise, const Case& c) const = 0;
    // The integers a speed case's timed inputs are drawn from (harness/timed_data.hpp): small
    // enough that every correct order of the exercise's sums is exact at the speed case's size.
    virtual TimedValues timed_values() const = 0;
    // The case's mask (convolutions; empty for the others), which timed batches keep.
    virtual std::vector<float> mask(const Case&) const { return {}; }
    // What its exercises teach that the compiled code must show (harness/technique.hpp), besides
    // launching a kernel, which every family's does. Expected of a submission where the hidden
    // reference's own PTX shows it too (grading/src/build/technique.cpp).
    virtual std::vector<Technique> technique() const { return {}; }
    // A case's label from its shape and data kind: size_label() unless the family's cases have more
    // shape than n.
    virtual std::string label(const Case& c) const;
    // The case's shape (its n and Case::shape) as one object of integers: what the case spec, each
    // case of results.json and the rubric's hidden cases write. {"n": n} unless the family's cases
    // have more shape than n.
    virtual nlohmann::json shape_json(const Case& c) const { return {{"n", c.n}}; }
    // Sets c.n and c.shape from such an object; throws std::invalid_argument saying what a shape of
    // the family is (require_shape_fields) or which field is out of the launcher's range.
    virtual void read_shape(const nlohmann::json& shape, Case& c) const;
    // The fields of the shape whose value a hidden case must take from the exercise's own cases (a
    // convolution's mask_width); the others lie between their smallest and largest there.
    virtual std::vector<std::string> shape_choices() const { return {}; }
    // The same kind of case at `elements` elements or a few fewer (an image: whole rows), for
    // timing the CPU version on less than a large case (harness/baseline.hpp).
    virtual Case scaled_down(const Case& c, std::int64_t elements) const
    {
        Case small = c;
        small.n = elements;
        return small;
    }
    virtual BenchPlan bench_plan(const Exercise& exercise) const = 0;
    // The shape of the bench's case of about `size` elements (its n, and whatever else the family's
    // cases carry); bench_case() below gives it its data, label and seed.
    virtual Case bench_shape(std::int64_t size) const
    {
        Case c;
        c.n = size;
        return c;
    }
};

const ExerciseFamily& family_of(const Exercise& exercise);

// The one instance of a family's implementation, constructed from `arguments`: what each
// <id>_family() and <id>_checks() of harness/families.def returns.
template <typename Implementation, auto... arguments>
const Implementation& single_instance()
{
    static const Implementation instance{arguments...};
    return instance;
}

// Shorthands for the family's answers.
inline ElementType element_type(const Exercise& e)
{
    return family_of(e).element_type();
}
inline bool uses_scratch(const Exercise& e)
{
    return family_of(e).uses_scratch();
}
inline std::int64_t output_elements(const Exercise& e, const Case& c)
{
    return family_of(e).output_elements(c);
}
inline BenchPlan bench_plan(const Exercise& e)
{
    return family_of(e).bench_plan(e);
}
// The bench's case of an exercise at a size (`grade bench`): the family's shape for it, with the
// integer-valued data of the grader's own cases under a label of its own ("bench/n=SIZE"), so a
// seed of its own.
Case bench_case(const Exercise& exercise, std::int64_t size);

// Builds a family's case list: numbers the cases and derives each seed from exercise and label.
class CaseList {
public:
    explicit CaseList(const Exercise& exercise) : exercise_(exercise) {}
    void add(Case c);
    // One integer-data case per size (the one of speed_n timed), one fractional case per size in
    // `fractional_sizes`.
    void add_sizes(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& fractional_sizes);
    std::vector<Case> take() { return std::move(cases_); }

private:
    const Exercise& exercise_;
    std::vector<Case> cases_;
};

// The size of every 1D speed case: 2^26 elements, 256 MB of floats, far above the L2 of any
// current GPU, and long enough (0.2 to 0.7 ms on an H100) that the microsecond a launch can vary
// by is well under 1% of it (at 10,000,000 elements it was 2-3%, from one grading to the next).
constexpr std::int64_t speed_n = std::int64_t{1} << 26;
// Sizes every scan and reduction sees: tiny, warp edges, the block edges of both scan section sizes, a
// size just past two levels of 2048 (4,196,353 = 2048 * 2049 + 1), and large sizes (10,000,000 and
// speed_n).
const std::vector<std::int64_t>& common_1d_sizes();
// The shape object's fields are exactly `fields`, else std::invalid_argument: "<kind> given by n and
// mask_width (not height)" (`kind` says what the family's cases are: "an array", "an image").
void require_shape_fields(const nlohmann::json& shape, const std::vector<std::string>& fields, const std::string& kind);
// The shape's integer `field`, from `lo` to `hi`, else std::invalid_argument.
std::int64_t shape_field(const nlohmann::json& shape, const std::string& field, std::int64_t lo, std::int64_t hi);
// The most elements a case has: the launchers take n (and an image's height times its width) as an int.
constexpr std::int64_t max_case_elements = 0x7fffffff;

// "n=1025/int", "n=65537/frac", "n=2049/mixed".
std::string size_label(std::int64_t n, DataKind data);
// A case's label from its shape, as its family writes it (ExerciseFamily::label).
std::string case_label(const Exercise& exercise, const Case& c);

}  // namespace harness

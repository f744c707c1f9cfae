// Internal to the checker: the grader-side half of an exercise family (harness/family.hpp has the
// half the runner shares). One implementation per id of harness/families.def, in that family's
// folder under harness/families/, compiled into harness_checking.
#pragma once

#include "array_check.hpp"
#include "harness/check.hpp"
#include "harness/family.hpp"

namespace harness::detail {

class FamilyChecks {
public:
    virtual ~FamilyChecks() = default;
    // The correct output in double and, for inexact data, each element's tolerance.
    virtual Expected golden(const Exercise& exercise, const Case& c, const CaseInputs& inputs) const = 0;
    // A plain single-threaded CPU version, as a CPU programmer would first write it, writing float
    // outputs to `out` (sized by the caller outside the timed region); returns one value of its
    // result so that the work cannot be dropped.
    virtual double run_cpu_version(const Exercise& exercise, const Case& c, const CaseInputs& inputs,
                                   std::vector<float>& out) const = 0;
    // Findings on a wrong output beyond what every family shares (first wrong element, unwritten
    // tail, NaN, guards): which mistake reproduces it, and where the wrong elements lie.
    virtual void diagnose(const Exercise& exercise, const Case& c, const CaseInputs& inputs, const Expected& expected,
                          const ArrayComparison& cmp, Diagnosis& diagnosis) const = 0;
};

const FamilyChecks& checks_of(const Exercise& exercise);

}  // namespace harness::detail

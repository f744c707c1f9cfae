// The grading pipeline: find the submission's files, build a runner per exercise, run each under
// the supervisor, check every case in this process, time the speed cases against the reference,
// and score. Progress goes to `progress` as it happens.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "grading/build.hpp"
#include "grading/results.hpp"
#include "grading/rubric.hpp"
#include "harness/supervisor.hpp"

namespace grading {

struct GradeOptions {
    std::string submission;
    std::vector<std::string> exercises;   // in order; all of CONTRACT.md by default
    std::string case_label;               // only this case (with one exercise)
    std::string work_dir = "grader-work";
    std::string reference_runner;         // built from reference/; empty: no reference timing
    Toolchain toolchain;
    int compile_jobs = 4;
    harness::SupervisorLimits limits;
    Rubric rubric;
};

GradeReport grade(const GradeOptions& options, std::ostream& progress);

}  // namespace grading

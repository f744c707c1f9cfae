// How results become points. The defaults below can be overridden per course with a JSON file
// (`grade --rubric FILE`, see grading/rubric.example.json), which grading/rubric.schema.json describes.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"
#include "harness/cases.hpp"

namespace grading {

// Gradescope's visibility settings ("hidden", "after_due_date", "after_published", "visible"),
// from the rubric's "gradescope" object.
struct GradescopeSettings {
    std::string visibility = "visible";        // of the whole result
    std::string stdout_visibility = "hidden";  // of what the autograder printed
    std::string test_visibility = "visible";   // of each test
};

// Which cases students see (the rubric's "visible_cases", grading/hidden_cases.hpp): glob patterns
// (fnmatch) of case labels per exercise; an exercise not named follows `others`. {"*"}: every
// case; none: every case hidden.
struct CaseVisibility {
    std::map<std::string, std::vector<std::string>> per_exercise;
    std::vector<std::string> others = {"*"};
    bool visible(const std::string& exercise, const std::string& label) const;
};

// compute-sanitizer as a graded step (grading/sanitizer.hpp): run on every grading where `run` (or
// `grade --sanitize`), with these tools; each tool that reports a finding costs `cost_per_tool`
// points of the exercise (0: reported only). Findings only ever cost: a clean report proves nothing.
struct SanitizerRubric {
    bool run = false;
    std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
    double cost_per_tool = 0;
};

struct Rubric {
    double correctness_points = 8;  // split evenly over the exercise's cases
    double speed_points = 2;        // only when every case passes
    // Speed points scale linearly from 0 at `speed_floor` to full at `speed_full`, as the ratio
    // reference time / student time; the result is rounded to `speed_step` points so that timing
    // noise near a value moves the score rarely and by little.
    double speed_full = 0.8, speed_floor = 0.25, speed_step = 0.25;
    bool library_use_costs_all = true;     // CONTRACT.md: calling CUB/Thrust/... costs the exercise's points
    // Code the student did not write (docs/security.md): "refuse" makes what its checks refuse
    // (code loaded or registered at run time, initializers, embedded code, files, threads, raw system
    // calls) invalid_submission; "name" only lists it in the exercise's code_checks and grades the
    // file as usual (a course that reviews by hand; the tests of the sandbox, whose attacks the
    // checks would otherwise stop before they run).
    std::string code_checks = "refuse";
    // A file whose PTX holds at least this share of the hidden reference's 5-instruction runs
    // "matches the reference's compiled code" (only where the reference has enough runs to tell,
    // grading/build.hpp: min_decisive_reference_runs). Measured: honest files 0.00-0.05, the
    // reference's PTX pasted into inline asm 0.87.
    double reference_match_threshold = 0.25;
    bool reference_match_costs_all = true;  // such a match scores nothing, for course staff to review
    // The technique, from the compiled kernel (grading/technique.hpp): every check is reported;
    // "report" requires only that the launcher launch a kernel and that its timed calls compute on
    // the GPU (computes_on_gpu): a result computed without a kernel, or on the host beside a decoy
    // kernel, scores no points. "require" requires every technique the exercise is expected to show.
    std::string technique = "report";
    std::map<std::string, double> weight;  // per exercise multiplier, default 1
    GradescopeSettings gradescope;         // how Gradescope shows the results (--gradescope)
    CaseVisibility visible_cases;          // every case visible unless the rubric says otherwise
    // Cases no student saw, hidden, after the exercise's own: shape, data and label only (their
    // seeds come from the secret, grading/hidden_cases.hpp).
    std::map<std::string, std::vector<harness::Case>> hidden_cases;
    SanitizerRubric sanitizer;             // the rubric's "sanitizer"

    // Missing keys keep their defaults. Throws RubricError, listing every problem, for a document
    // rubric.schema.json refuses or whose values cannot work together.
    static Rubric from_json(const nlohmann::json& j);
    double max_points(const std::string& exercise) const;
};

// A rubric that is wrong: the instructor's input, so a usage error. what() names each problem
// with its JSON pointer and the rule it breaks, one per line.
struct RubricError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A rubric file that exists but that this process may not read: the machine's doing.
struct RubricUnreadable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Reads, parses and checks a rubric file; the errors' messages start with `path`.
Rubric load_rubric(const std::string& path);

// grading/rubric.schema.json, as compiled into the grader.
const nlohmann::json& rubric_schema();

// Whether the file's points are taken whatever its cases do: a library doing the work
// (library_use_costs_all), compiled code that matches the reference's (reference_match_costs_all),
// an expected technique the rubric requires missing (launching a kernel and computing on the GPU always). Such a file
// neither "passes the build checks" (--build-only) nor has "every case passed" (grade's exit code).
bool points_withheld(const Rubric& rubric, const ExerciseResult& result);

// Fills correctness_points, speed_points, points and max_points of `result`.
void score_exercise(const Rubric& rubric, ExerciseResult& result);

}  // namespace grading

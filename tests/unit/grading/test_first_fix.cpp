// grading/first_fix.hpp: the one line that says what to fix first, over hand-made results, and
// results.json with it against the schema.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "grading/first_fix.hpp"
#include "grading/json_schema.hpp"
#include "grading/report.hpp"
#include "support/test_support.hpp"

using namespace grading;

namespace {

CaseResult failing(int index, std::int64_t n, CaseStatus status, const std::string& summary,
                   std::vector<std::string> findings = {})
{
    CaseResult c;
    c.index = index;
    c.n = n;
    c.shape = {{"n", n}};
    c.label = "n=" + std::to_string(n) + "/int";
    c.data = "integers";
    c.status = status;
    c.summary = summary;
    c.findings = std::move(findings);
    c.reproduce = "grade --submission . --exercise scan_hierarchical --case " + c.label;
    return c;
}

CaseResult passing(int index, std::int64_t n)
{
    CaseResult c = failing(index, n, CaseStatus::pass, "all output element(s) correct");
    return c;
}

// A wrong case whose checks named a mistake (harness/check.hpp: detail pattern and pattern_finding).
CaseResult named_mistake(int index, std::int64_t n)
{
    CaseResult c = failing(index, n, CaseStatus::wrong, "1 of " + std::to_string(n) + " output element(s) wrong",
                           {"first wrong element: out[1,024] = 7, expected 9",
                            "wrong elements lie in 1 of 2 sections of 1024 elements (only section 1)",
                            "each 1024-element section holds the scan of its own elements only"});
    c.detail = {{"pattern", "missing_block_offsets"}, {"pattern_finding", 2}};
    return c;
}

ExerciseResult graded_hierarchical(std::vector<CaseResult> cases)
{
    ExerciseResult e;
    e.name = "scan_hierarchical";
    e.status = ExerciseStatus::graded;
    e.cases = std::move(cases);
    return e;
}

using test_support::contains;

}  // namespace

TEST_CASE("the smallest failing case is chosen, with its clearest finding and its rerun command")
{
    const ExerciseResult e = graded_hierarchical({passing(0, 1), named_mistake(1, 1 << 20), named_mistake(2, 1025),
                                     failing(3, 4096, CaseStatus::crashed, "the runner crashed (signal 11)")});
    CHECK(first_fix(e) ==
          "Fix first: n=1025/int (the smallest failing case): each 1024-element section holds the scan of its own "
          "elements only. Rerun it: grade --submission . --exercise scan_hierarchical --case n=1025/int");
}

TEST_CASE("at one size the clearer failure wins: a crash, a named mistake, elements never written, wrong values")
{
    CaseResult wrong = failing(0, 2048, CaseStatus::wrong, "5 of 2,048 output element(s) wrong",
                               {"first wrong element: out[7] = 1, expected 2"});
    CaseResult unwritten = failing(1, 2048, CaseStatus::wrong, "64 of 2,048 output element(s) wrong",
                                   {"first wrong element: out[1,984] was never written",
                                    "the last 64 element(s) were never written (out[1,984] to out[2,047]): the grid "
                                    "does not cover all n elements (round the block count up)"});
    unwritten.detail = {{"never_written", 64}, {"unwritten_finding", 1}};
    CaseResult mistake = named_mistake(2, 2048);
    CaseResult cuda = failing(3, 2048, CaseStatus::cuda_error, "cudaErrorIllegalAddress during the launch",
                              {"an illegal memory access was encountered", "(the hint)",
                               "the cases after this one ran in a fresh process"});
    cuda.detail = {{"error", "cudaErrorIllegalAddress"}};

    CHECK(contains(first_fix(graded_hierarchical({wrong})), "n=2048/int (the smallest failing case): 5 of 2,048 output element(s) "
                                               "wrong; first wrong element: out[7] = 1, expected 2. Rerun it:"));
    CHECK(contains(first_fix(graded_hierarchical({wrong, unwritten})), "): the last 64 element(s) were never written"));
    CHECK(contains(first_fix(graded_hierarchical({wrong, unwritten, mistake})), "): each 1024-element section holds"));
    // The crash is listed last and still chosen; its CUDA error explained as the case line explains it.
    CHECK(contains(first_fix(graded_hierarchical({wrong, unwritten, mistake, cuda})),
                   "): cudaErrorIllegalAddress during the launch: a kernel read or wrote outside any allocation"));
    // A smaller case wins over a clearer one.
    CHECK(contains(first_fix(graded_hierarchical({cuda, failing(4, 1025, CaseStatus::wrong, "2 of 1,025 output element(s) wrong")})),
                   "n=1025/int (the smallest failing case): 2 of 1,025"));
}

TEST_CASE("a hang or a crash is explained by the judge's sentence; a case never run only where nothing else failed")
{
    const CaseResult timeout =
        failing(2, 1 << 16, CaseStatus::timeout, "stopped by the time limit (10 s)",
                {"the kernel did not finish: an infinite loop, a loop whose condition never changes, or a "
                 "__syncthreads() that not every thread of the block reaches"});
    const CaseResult not_run = failing(0, 1, CaseStatus::not_run, "an earlier case ended the runner");
    CHECK(contains(first_fix(graded_hierarchical({not_run, timeout})),
                   "n=65536/int (the smallest failing case): stopped by the time limit (10 s): the kernel did not finish"));
    CHECK(contains(first_fix(graded_hierarchical({not_run})), "n=1/int (the smallest failing case): an earlier case ended the runner"));
}

TEST_CASE("nothing to fix: every case passed, or no file submitted")
{
    CHECK(first_fix(graded_hierarchical({passing(0, 1), passing(1, 1025)})).empty());
    ExerciseResult missing;
    missing.name = "conv1d_tiled";
    missing.message = "no conv1d_tiled.cu in the submission";
    CHECK(first_fix(missing).empty());
}

TEST_CASE("a file that does not compile: the compiler's first error line")
{
    ExerciseResult e;
    e.name = "conv2d_tiled";
    e.status = ExerciseStatus::compile_error;
    e.message = "nvcc failed";
    e.compile_output = "conv2d_tiled.cu(3): warning: variable \"x\" was declared but never referenced\n"
                       "conv2d_tiled.cu(12): error: expected a \";\"\n"
                       "conv2d_tiled.cu(20): error: identifier \"tile\" is undefined\n";
    CHECK(first_fix(e) == "Fix first: the compiler's first error: conv2d_tiled.cu(12): error: expected a \";\"");
    e.compile_output.clear();  // ran out of time, say: nothing from the compiler
    CHECK(first_fix(e) == "Fix first: compile error: nvcc failed");

    ExerciseResult launcher;
    launcher.status = ExerciseStatus::missing_launcher;
    launcher.message = "the file defines no `void scan(...)`";
    CHECK(first_fix(launcher) == "Fix first: missing launcher: the file defines no `void scan(...)`");
}

TEST_CASE("one line of bounded length, whatever the submission's text holds")
{
    CaseResult thrown = failing(0, 8, CaseStatus::exception, "a C++ exception (std::runtime_error) escaped",
                                {"line one\nline two\r\t" + std::string(5000, 'x')});
    const std::string fix = first_fix(graded_hierarchical({thrown}));
    CHECK(contains(fix, "escaped: line one line two"));
    CHECK(fix.find('\n') == std::string::npos);
    CHECK(fix.size() < 700);
}

TEST_CASE("the console prints one line per exercise to fix, under the table")
{
    GradeReport report;
    report.exercises = {graded_hierarchical({passing(0, 1)}), graded_hierarchical({named_mistake(0, 1025)})};
    report.exercises[1].name = "scan_brent_kung";
    std::ostringstream out;
    print_first_fixes(report, out);
    const std::string printed = out.str();
    CHECK(printed.rfind("scan_brent_kung: Fix first: n=1025/int (the smallest failing case): ", 0) == 0);
    CHECK(std::count(printed.begin(), printed.end(), '\n') == 1);
}

TEST_CASE("results.json carries first_fix per exercise and passes the schema")
{
    GradeReport report;
    report.started_at = "2026-11-26T23:00:00Z";
    report.exercises = {graded_hierarchical({passing(0, 1), named_mistake(1, 1025)}), graded_hierarchical({passing(0, 1)})};
    report.exercises[1].name = "scan_kogge_stone";
    const nlohmann::json j = to_json(report);
    CHECK(j["exercises"][0]["first_fix"] == first_fix(report.exercises[0]));
    CHECK(j["exercises"][1]["first_fix"] == "");
    const auto schema = test_support::results_schema();
    std::string errors;
    for (const auto& e : validate_json_schema(schema, j)) errors += e.instance_path + ": " + e.message + "\n";
    CHECK_MESSAGE(errors.empty(), errors);
    nlohmann::json wrong = j;
    wrong["exercises"][0]["first_fix"] = 3;
    CHECK_FALSE(validate_json_schema(schema, wrong).empty());
}

TEST_CASE("a hidden case is never named: the smallest failing visible case is, else only that a hidden case fails")
{
    CaseResult hidden_small = failing(0, 17, CaseStatus::crashed, "the runner crashed (signal 11)");
    hidden_small.hidden = true;
    hidden_small.label = "hidden/n=17/int";
    SUBCASE("a visible case fails too: it is named, the hidden one is not")
    {
        const std::string fix = first_fix(graded_hierarchical({hidden_small, named_mistake(1, 1025)}));
        CHECK(contains(fix, "n=1025/int"));
        CHECK_FALSE(contains(fix, "17"));
    }
    SUBCASE("only the hidden case fails: its status, never its label, size or rerun command")
    {
        const std::string fix = first_fix(graded_hierarchical({hidden_small, passing(1, 1025)}));
        CHECK(contains(fix, "a hidden case fails"));
        CHECK_FALSE(contains(fix, "17"));
        CHECK_FALSE(contains(fix, "--case"));
    }
}

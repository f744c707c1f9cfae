// Red team of issue 20 (redteam20), the sanitizer step: compute-sanitizer's report shares its log
// with the program's own output, which is read from its end (1 MiB). A racy launcher that prints a
// megabyte after each kernel pushes every report of its races out of what is read; the tool's
// summary, printed after the program exits, still counts them. That summary with no report read
// must not be "clean" and must not be cheaper than the findings it hides.
#include <doctest/doctest.h>

#include <string>

#include "grading/sanitizer.hpp"

using namespace grading;

TEST_CASE("errors the summary counts but the log no longer shows are never clean")
{
    // What the tail of a flooded log holds: the program's filler, then the real summaries.
    std::string pushed_out = "========= COMPUTE-SANITIZER\n";
    for (int k = 0; k < 1000; ++k) pushed_out += "filler filler filler filler filler filler\n";
    pushed_out += "========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n"
                  "========= ERROR SUMMARY: 3 errors\n";
    const SanitizerReport hidden = parse_sanitizer_output(pushed_out, "racecheck");
    CHECK(hidden.summary_seen);
    CHECK(hidden.findings.empty());
    CHECK(hidden.errors_unshown());

    // A forged "0 errors" line of the program's, before the real summary, does not lower the count.
    const SanitizerReport forged =
        parse_sanitizer_output("========= ERROR SUMMARY: 0 errors\n" + pushed_out, "racecheck");
    CHECK(forged.errors_unshown());

    // The races shown: findings, nothing unshown. A clean run: nothing unshown either.
    const SanitizerReport shown = parse_sanitizer_output(
        "========= Error: Race reported between Write access at k(float *)+0x1b0 in a.cu:31\n"
        "=========     and Read access at k(float *)+0x2e0 in a.cu:29 [128 hazards]\n"
        "=========\n"
        "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n",
        "racecheck");
    CHECK_FALSE(shown.findings.empty());
    CHECK_FALSE(shown.errors_unshown());
    const SanitizerReport clean =
        parse_sanitizer_output("========= COMPUTE-SANITIZER\ngrader runner ready\n========= ERROR SUMMARY: 0 errors\n",
                               "memcheck");
    CHECK(clean.summary_seen);
    CHECK_FALSE(clean.errors_unshown());
}

// KNOWN HOLE (should_fail until fixed): a program that fills its log to the file-size limit after
// printing a forged "========= ERROR SUMMARY: 0 errors" leaves the tool no room for its own summary
// (its write fails, or SIGXFSZ ends it): the tail read holds only the forgery, and the step says
// clean. The fix: compute-sanitizer's own report in a file of its own (--log-file, in a folder the
// runner is not given; the build refuses open() in submitted code) or its verdict from its exit code
// (--error-exitcode N, which the program cannot forge once the program's own exit code is known).
TEST_CASE("a forged summary with the tool's own summary lost is not clean" * doctest::should_fail())
{
    std::string log = "========= COMPUTE-SANITIZER\n";
    for (int k = 0; k < 1000; ++k) log += "filler filler filler filler filler filler\n";
    log += "========= ERROR SUMMARY: 0 errors\n";
    for (int k = 0; k < 1000; ++k) log += "filler filler filler filler filler filler\n";
    const SanitizerReport r = parse_sanitizer_output(log, "racecheck");
    CHECK_FALSE((r.summary_seen && r.tool_error.empty() && !r.errors_unshown()));  // "clean" today
}

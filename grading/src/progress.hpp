// The lines grade prints while it grades (grader.cpp): one per build, with the compiler's first
// error lines when it failed, and one per case as it is judged.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "grading/build.hpp"
#include "grading/results.hpp"

namespace grading::detail {

// "  scan_kogge_stone    FAILED to compile in 1.2 s", then the first lines of the compiler's
// messages, so that a student sees the error without opening results.json.
std::string build_line(const std::string& exercise, const BuildResult& build, bool colour);

// A case's status, times and, when it did not pass, its summary, first findings and rerun command.
std::string progress_line(const CaseResult& r, std::size_t position, std::size_t total, bool colour);

// Prints each case's line as it is judged, except that consecutive cases not run for one reason
// (a GPU the runner could not use, a budget used up) share one line: the same reason repeated for
// every case would bury everything else on the screen.
class CaseProgress {
public:
    CaseProgress(std::ostream& out, std::size_t total, bool colour) : out_(out), total_(total), colour_(colour) {}
    ~CaseProgress() { finish(); }
    void add(const CaseResult& r);
    void finish();  // prints the cases it holds back

private:
    std::ostream& out_;
    std::size_t total_;
    bool colour_;
    std::size_t position_ = 0;
    CaseResult held_;  // the first of the not-run cases held back
    std::size_t held_first_ = 0, held_count_ = 0;
};

}  // namespace grading::detail

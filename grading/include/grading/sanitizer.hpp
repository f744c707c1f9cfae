// compute-sanitizer as a graded step (issue 22): each exercise's small and medium cases run again,
// once per tool (memcheck, racecheck, synccheck, initcheck), in a runner started under
// compute-sanitizer inside the sandbox. What the tool prints is the submission's process's output
// (the tool's collection library lives in the runner, which the student owns): it is parsed as
// untrusted text, bounded, and can only ever cost points. A clean report proves nothing; a tool that
// is missing or did not finish is "not checked", never clean.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace grading {

// The tools, in the order they run; their names as compute-sanitizer spells them.
const std::vector<std::string>& sanitizer_tools();
bool is_sanitizer_tool(const std::string& name);

// One problem the tool reported, with what a student needs to find and fix it.
struct SanitizerFinding {
    std::string tool;    // memcheck, racecheck, synccheck, initcheck
    std::string kind;    // out_of_bounds, misaligned, invalid_access, race, divergent_barrier,
                         // invalid_barrier, uninitialized_read, hardware_exception
    std::string kernel;  // the kernel's name, without its parameter list ("" when not said)
    std::string file;    // the source file's name, without its directory ("" when not said)
    int line = 0;        // 0 when not said (compiled without -lineinfo)
    std::string other_access;  // racecheck: "read"/"write" of the other side of the race
    int other_line = 0;        // racecheck: its line
    std::string access;        // "read"/"write" (memcheck, initcheck, racecheck's first side)
    std::string space;         // "global", "shared", "local" where said
    std::string detail;        // the tool's own header line, cleaned and cut
    int count = 1;             // reports of this same finding (same kind, kernel and lines)
    std::string explanation;   // one sentence for the student
};

struct SanitizerReport {
    bool summary_seen = false;   // the tool's "ERROR SUMMARY" line was there: the run finished
    long summary_errors = -1;    // what it said; -1 when not seen
    std::vector<SanitizerFinding> findings;  // distinct findings, at most max_findings
    std::size_t not_listed = 0;  // distinct findings beyond max_findings
    std::string tool_error;      // the tool itself failed ("Error: ..." outside a race report)
    // The summary counts errors, and not one report of them was read: the program's own output (the
    // same log) pushed them out of what was read, or they are of a kind the reader does not know.
    // Never "clean" (red team 20: a racy launcher that prints a megabyte after each kernel).
    bool errors_unshown() const { return summary_errors > 0 && findings.empty() && not_listed == 0; }
};

// Reads compute-sanitizer's text output of `tool` (default prefix "========= "); lines without
// the prefix are the program's own and ignored. Never throws; any bytes are accepted.
SanitizerReport parse_sanitizer_output(std::string_view text, const std::string& tool,
                                       std::size_t max_findings = 10);

// The sentence a student reads for `finding`.
std::string explain(const SanitizerFinding& finding);

// Where compute-sanitizer is: `given` (--compute-sanitizer) if set, else below the toolkit root
// (compute-sanitizer/compute-sanitizer, bin/compute-sanitizer), else on PATH. `directory` is the
// one directory a sandboxed run may see (the program's own, after links); `missing` says why
// nothing can be used ("compute-sanitizer not found ..."), and then the rest is empty.
struct SanitizerProgram {
    std::string program;    // the real path of the executable
    std::string directory;  // its directory, bound read-only into a sanitizer run's sandbox
    std::string missing;
};
SanitizerProgram find_compute_sanitizer(const std::string& given, const std::string& toolkit_root,
                                        bool sandboxed);

// One tool's result as results.json records it: {"checked": true, "findings": [...],
// "not_listed": N, "cases": [labels], "cases_failed": [...]} or {"checked": false, "why": "..."}.
nlohmann::json sanitizer_finding_json(const SanitizerFinding& finding);

}  // namespace grading

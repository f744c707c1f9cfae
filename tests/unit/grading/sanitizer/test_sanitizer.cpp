// The sanitizer step's host side: compute-sanitizer's reports (recorded by hand from NVIDIA's
// documented formats, in fixtures/) read into findings and explanations; random bytes and floods
// through the reader; where the tool is found (or said missing); which cases run; the rubric's price.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <unistd.h>

#include "grading/rubric.hpp"
#include "grading/sanitizer.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "formats/feedback.hpp"
#include "sanitizer/run.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

std::string fixture(const std::string& name)
{
    std::ifstream in(std::string(SANITIZER_FIXTURES) + "/" + name);
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool valid_utf8_sequences(const std::string& s)
{
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (std::size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
        i += n;
    }
    return true;
}

struct TempDir {
    fs::path path;
    TempDir()
    {
        char name[] = "/tmp/sanitizer-test-XXXXXX";
        REQUIRE(::mkdtemp(name) != nullptr);
        path = name;
    }
    ~TempDir()
    {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

void executable(const fs::path& path)
{
    std::ofstream(path) << "#!/bin/sh\nexit 0\n";
    fs::permissions(path, fs::perms::owner_all);
}

}  // namespace

TEST_CASE("memcheck: an out-of-bounds write, reported twice, is one finding with its kernel and line")
{
    const SanitizerReport r = parse_sanitizer_output(fixture("memcheck_out_of_bounds.txt"), "memcheck");
    CHECK(r.summary_seen);
    CHECK(r.summary_errors == 2);
    CHECK(r.tool_error.empty());
    REQUIRE(r.findings.size() == 1);  // the API error line is no finding
    const SanitizerFinding& f = r.findings[0];
    CHECK(f.kind == "out_of_bounds");
    CHECK(f.kernel == "conv1d_tiled_kernel");
    CHECK(f.file == "conv1d_tiled.cu");
    CHECK(f.line == 42);
    CHECK(f.access == "write");
    CHECK(f.space == "global");
    CHECK(f.count == 2);
    CHECK(f.explanation.find("global-memory write in conv1d_tiled_kernel (line 42)") != std::string::npos);
    CHECK(f.explanation.find("outside every allocation") != std::string::npos);
}

TEST_CASE("racecheck: the analysis report names both lines and the missing barrier")
{
    const SanitizerReport r = parse_sanitizer_output(fixture("racecheck_analysis.txt"), "racecheck");
    CHECK(r.summary_seen);
    REQUIRE(r.findings.size() == 1);
    const SanitizerFinding& f = r.findings[0];
    CHECK(f.kind == "race");
    CHECK(f.kernel == "reduce_kernel");
    CHECK(f.line == 31);
    CHECK(f.access == "write");
    CHECK(f.other_access == "read");
    CHECK(f.other_line == 29);
    CHECK(f.explanation ==
          "racecheck: a write of shared memory in reduce_kernel (line 31) races with a read (line 29) in another "
          "thread of the block: a __syncthreads() is missing between the two steps (or, within a warp, a "
          "__syncwarp())");
}

TEST_CASE("racecheck: the older 'at 0x.. in FILE:LINE:KERNEL' form and the hazard report")
{
    const SanitizerReport r = parse_sanitizer_output(fixture("racecheck_old_format.txt"), "racecheck");
    CHECK(r.summary_errors == 2);
    REQUIRE(r.findings.size() == 2);
    CHECK(r.findings[0].kernel == "reduce_kernel");
    CHECK(r.findings[0].file == "reduce.cu");
    CHECK(r.findings[0].line == 31);
    CHECK(r.findings[0].other_line == 29);
    CHECK(r.findings[1].kind == "race");
    CHECK(r.findings[1].kernel == "scan_kernel");
    CHECK(r.findings[1].line == 18);
    CHECK(r.findings[1].access == "write");
    CHECK(r.findings[1].other_access == "write");
}

TEST_CASE("synccheck: a divergent barrier")
{
    const SanitizerReport r = parse_sanitizer_output(fixture("synccheck_divergent.txt"), "synccheck");
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].kind == "divergent_barrier");
    CHECK(r.findings[0].kernel == "scan_brent_kung_kernel");
    CHECK(r.findings[0].line == 57);
    CHECK(r.findings[0].explanation.find("__syncthreads()") != std::string::npos);
}

TEST_CASE("initcheck: an uninitialized global read")
{
    const SanitizerReport r = parse_sanitizer_output(fixture("initcheck_uninitialized.txt"), "initcheck");
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].kind == "uninitialized_read");
    CHECK(r.findings[0].kernel == "scan_hierarchical_add");
    CHECK(r.findings[0].line == 88);
    CHECK(r.findings[0].explanation.find("nothing has written") != std::string::npos);
}

TEST_CASE("a clean report, and one without -lineinfo")
{
    const SanitizerReport clean = parse_sanitizer_output(fixture("clean.txt"), "memcheck");
    CHECK(clean.summary_seen);
    CHECK(clean.summary_errors == 0);
    CHECK(clean.findings.empty());

    // racecheck ends with its own summary, no ERROR SUMMARY (seen on an H100, CUDA 13.0).
    const SanitizerReport race_clean = parse_sanitizer_output(fixture("racecheck_clean.txt"), "racecheck");
    CHECK(race_clean.summary_seen);
    CHECK(race_clean.summary_errors == 0);
    CHECK(race_clean.findings.empty());

    const SanitizerReport bare = parse_sanitizer_output(fixture("no_lineinfo.txt"), "memcheck");
    REQUIRE(bare.findings.size() == 1);
    CHECK(bare.findings[0].kernel == "kogge");
    CHECK(bare.findings[0].line == 0);
    CHECK(bare.findings[0].space == "shared");
    CHECK(bare.findings[0].explanation.find("in kogge:") == std::string::npos);
    CHECK(bare.findings[0].explanation.find("in kogge falls outside") != std::string::npos);
}

TEST_CASE("a report cut before its summary is not finished; a tool error is said")
{
    std::string cut = fixture("memcheck_out_of_bounds.txt");
    cut = cut.substr(0, cut.find("========= ERROR SUMMARY"));
    const SanitizerReport r = parse_sanitizer_output(cut, "memcheck");
    CHECK_FALSE(r.summary_seen);
    CHECK(r.findings.size() == 1);  // what it found still counts

    const SanitizerReport failed =
        parse_sanitizer_output("========= Error: Target application terminated before first instrumented API call\n"
                               "========= ERROR SUMMARY: 0 errors\n",
                               "racecheck");
    CHECK(failed.tool_error.find("Target application terminated") != std::string::npos);
}

TEST_CASE("lines without the tool's prefix are the program's and never findings")
{
    const SanitizerReport r = parse_sanitizer_output("Invalid __global__ write of size 4 bytes\n"
                                                     "    at k()+0x10 in a.cu:3\n"
                                                     "ERROR SUMMARY: 5 errors\n",
                                                     "memcheck");
    CHECK_FALSE(r.summary_seen);
    CHECK(r.findings.empty());
}

TEST_CASE("a flood of distinct findings keeps at most max_findings and counts the rest")
{
    std::string text;
    for (int k = 0; k < 5000; ++k)
        text += "========= Invalid __global__ read of size 4 bytes\n=========     at k()+0x10 in a.cu:" +
                std::to_string(k + 1) + "\n=========     Address 0x10 is out of bounds\n=========\n";
    text += std::string(100000, 'x') + "\n";  // one long line of the program's
    text += "========= " + std::string(50000, '=') + "\n";
    text += "========= ERROR SUMMARY: 5000 errors\n";
    const SanitizerReport r = parse_sanitizer_output(text, "memcheck", 10);
    CHECK(r.findings.size() == 10);
    CHECK(r.not_listed == 4990);
    CHECK(r.summary_errors == 5000);
}

TEST_CASE("random bytes and mutated reports: no throw, valid text, bounded fields")
{
    std::mt19937_64 rng(22);
    const std::string pieces[] = {"========= ", "=========     at ", "Invalid __global__ write of size 4 bytes", "+0x",
                                  " in ", ":", "\n", "(", ")", "<", ">", "Error: Race reported between Write access at ",
                                  "and Read access at ", " [3 hazards]", "\x1b[2J", "\xff\xfe", "\xc3", "ERROR SUMMARY: ",
                                  "99999999999999999999", "Barrier error detected. Divergent", "Write Thread (1,0,0) at ",
                                  "ERROR: Potential WAW hazard detected at __shared__", "Address 0x1 is out of bounds",
                                  std::string(300, 'k')};
    for (int round = 0; round < 300; ++round) {
        std::string text;
        const int n = static_cast<int>(rng() % 200);
        for (int k = 0; k < n; ++k) {
            if (rng() % 4 == 0) text.push_back(static_cast<char>(rng() & 0xff));
            else text += pieces[rng() % std::size(pieces)];
        }
        SanitizerReport r;
        REQUIRE_NOTHROW(r = parse_sanitizer_output(text, "racecheck", 5));
        CHECK(r.findings.size() <= 5);
        for (const auto& f : r.findings) {
            CHECK(valid_utf8_sequences(f.kernel));
            CHECK(valid_utf8_sequences(f.file));
            CHECK(valid_utf8_sequences(f.explanation));
            CHECK(f.kernel.size() <= 200);
            CHECK(f.detail.size() <= 200);
            CHECK(f.kernel.find('\x1b') == std::string::npos);
            REQUIRE_NOTHROW(sanitizer_finding_json(f).dump());
        }
    }
}

TEST_CASE("compute-sanitizer is found below the toolkit, given, or said missing")
{
    TempDir root;
    fs::create_directories(root.path / "compute-sanitizer");
    fs::create_directories(root.path / "bin");
    executable(root.path / "compute-sanitizer" / "compute-sanitizer");
    SanitizerProgram found = find_compute_sanitizer("", root.path.string(), true);
    CHECK(found.missing.empty());
    CHECK(found.directory == fs::canonical(root.path / "compute-sanitizer").string());

    // In bin/ beside nvcc: never bound into a run's sandbox; fine without one.
    executable(root.path / "bin" / "nvcc");
    executable(root.path / "bin" / "compute-sanitizer");
    found = find_compute_sanitizer((root.path / "bin" / "compute-sanitizer").string(), "", true);
    CHECK(found.program.empty());
    CHECK(found.missing.find("shares its directory with a compiler") != std::string::npos);
    found = find_compute_sanitizer((root.path / "bin" / "compute-sanitizer").string(), "", false);
    CHECK(found.missing.empty());

    found = find_compute_sanitizer((root.path / "nowhere").string(), "", true);
    CHECK(found.missing == "compute-sanitizer not found at " + (root.path / "nowhere").string() + ": not checked");
}

TEST_CASE("the cases run under the sanitizers: untimed, at most 2^20 elements, at most three")
{
    const harness::Exercise* exercise = harness::find_exercise("reduce_sequential_addressing");
    REQUIRE(exercise != nullptr);
    const std::vector<harness::Case> all = harness::cases_for(*exercise);
    const std::vector<harness::Case> picked = sanitizer_cases(all);
    REQUIRE(!picked.empty());
    CHECK(picked.size() <= sanitizer_max_cases);
    std::int64_t smallest = INT64_MAX;
    for (const auto& c : all)
        if (!c.timed) smallest = std::min(smallest, c.n);
    bool has_smallest = false;
    for (const auto& c : picked) {
        CHECK_FALSE(c.timed);
        CHECK(c.n <= sanitizer_max_elements);
        has_smallest = has_smallest || c.n == smallest;
    }
    CHECK(has_smallest);
    for (std::size_t k = 1; k < picked.size(); ++k) CHECK(picked[k - 1].index < picked[k].index);

    // Sanitizers slow kernels: the limits grow, the exercise's budget per tool is bounded.
    harness::SupervisorLimits limits;
    const harness::SupervisorLimits scaled = sanitizer_limits(limits);
    CHECK(scaled.case_limit > limits.case_limit);
    CHECK(scaled.case_ns_per_element >= 10 * limits.case_ns_per_element);
}

TEST_CASE("the rubric prices each tool with findings, never below zero, and reports only by default")
{
    ExerciseResult result;
    result.name = "reduce_sequential_addressing";
    result.status = ExerciseStatus::graded;
    CaseResult pass;
    pass.status = CaseStatus::pass;
    result.cases = {pass, pass};
    result.sanitizer_tools_with_findings = {"racecheck", "memcheck"};

    Rubric by_default;
    score_exercise(by_default, result);
    CHECK(result.points == doctest::Approx(8));
    CHECK(result.sanitizer_points_lost == 0);

    const Rubric priced = Rubric::from_json(
        nlohmann::json::parse(R"({"sanitizer": {"run": true, "tools": ["racecheck", "synccheck"], "cost_per_tool": 3}})"));
    CHECK(priced.sanitizer.run);
    score_exercise(priced, result);  // memcheck is not among the rubric's tools
    CHECK(result.sanitizer_points_lost == doctest::Approx(3));
    CHECK(result.points == doctest::Approx(5));

    const Rubric steep = Rubric::from_json(nlohmann::json::parse(R"({"sanitizer": {"cost_per_tool": 100}})"));
    score_exercise(steep, result);
    CHECK(result.points == 0);
    CHECK(result.correctness_points == 0);

    CHECK_THROWS_AS(Rubric::from_json(nlohmann::json::parse(R"({"sanitizer": {"tools": ["leakcheck"]}})")), RubricError);
    CHECK_THROWS_AS(Rubric::from_json(nlohmann::json::parse(R"({"sanitizer": {"cost_per_tool": -1}})")), RubricError);
}

TEST_CASE("the feedback shows each tool: its findings' explanations, nothing found, or not checked and why")
{
    ExerciseResult result;
    result.name = "scan_kogge_stone";
    result.status = ExerciseStatus::graded;
    CaseResult pass;
    pass.status = CaseStatus::pass;
    result.cases = {pass};
    SanitizerFinding race;
    race.tool = "racecheck";
    race.kind = "race";
    race.kernel = "kogge_stone_kernel";
    race.line = 31;
    race.access = "read";
    race.other_access = "write";
    race.explanation = explain(race);
    result.sanitizer = {{"memcheck", {{"checked", true}, {"findings", nlohmann::json::array()}}},
                        {"racecheck", {{"checked", true}, {"findings", {sanitizer_finding_json(race)}}}},
                        {"initcheck", {{"checked", false}, {"why", "compute-sanitizer not found: not checked"}}}};
    result.sanitizer_tools_with_findings = {"racecheck"};
    const Rubric priced = Rubric::from_json(nlohmann::json::parse(R"({"sanitizer": {"cost_per_tool": 2}})"));
    score_exercise(priced, result);
    const std::string text = formats::correctness_details(result, formats::Markup::text);
    CHECK(text.find("compute-sanitizer memcheck: nothing found") != std::string::npos);
    CHECK(text.find("racecheck: a read of shared memory in kogge_stone_kernel (line 31) races with a write") !=
          std::string::npos);
    CHECK(text.find("compute-sanitizer initcheck: compute-sanitizer not found: not checked") != std::string::npos);
    CHECK(text.find("Sanitizer findings cost 2.00 points.") != std::string::npos);
}

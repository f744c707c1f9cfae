// GPU test driver: runs the real `grade` on a submission and checks the results against an
// expectation file. Exits 77 (CTest: skipped) with the reason printed when there is no GPU.
//
//   check_grading --grade GRADE --submission DIR --expect FILE.json --work DIR
//
// The expectation file (see tests/buggy/*/*/expect.json):
//   {"exercises": ["scan_hierarchical"],          which exercises to grade
//    "args": ["--case-time-limit", "3"],          extra grade arguments (optional)
//    "all": {"status": "pass"} | "full_marks" | "zero_points_clean",   for every case/exercise (optional)
//    "library_use": "CUB",                        the grader names this library and gives 0 points
//    "cases": [{"label": "n=1/int", "status": "pass"},   (add "exercise": NAME to check one exercise only)
//              {"label": "n=4196353/int", "status": "wrong", "finding": "text the findings contain"}],
//    "some_case": [{"status": "cuda_error", "finding": "..."}],   at least one case matches each entry
//    "full_marks_for": ["scan_brent_kung"]}        these exercises score full marks
#include <cuda_runtime.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/json_schema.hpp"
#include "harness/process.hpp"

using nlohmann::json;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what)
{
    std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
    failures += ok ? 0 : 1;
}

bool case_matches(const json& c, const json& want)
{
    if (want.contains("label") && c.at("label") != want.at("label")) return false;
    if (want.contains("status") && c.at("status") != want.at("status")) return false;
    if (want.contains("finding")) {
        const std::string needle = want.at("finding");
        bool found = c.at("summary").get<std::string>().find(needle) != std::string::npos;
        for (const auto& f : c.at("findings")) found = found || f.get<std::string>().find(needle) != std::string::npos;
        if (!found) return false;
    }
    return true;
}

void print_case(const json& c)
{
    std::cout << "    " << c.at("label").get<std::string>() << ": " << c.at("status").get<std::string>() << " -- "
              << c.at("summary").get<std::string>() << "\n";
    for (const auto& f : c.at("findings")) std::cout << "        " << f.get<std::string>() << "\n";
}

}  // namespace

int main(int argc, char** argv)
{
    std::string grade, submission, expect_file, work;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--grade") grade = argv[i + 1];
        else if (flag == "--submission") submission = argv[i + 1];
        else if (flag == "--expect") expect_file = argv[i + 1];
        else if (flag == "--work") work = argv[i + 1];
    }
    int devices = 0;
    const cudaError_t probe = cudaGetDeviceCount(&devices);
    if (probe != cudaSuccess || devices == 0) {
        std::cout << "SKIPPED: this test needs a CUDA GPU and there is none here ("
                  << (probe != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(probe) + ", no usable NVIDIA driver or GPU"
                                          : std::string("no devices")) << ")\n";
        return 77;
    }
    const json spec = json::parse(std::ifstream(expect_file));
    const std::string results = work + "/results.json";
    std::vector<std::string> command = {grade, "--submission", submission, "--work-dir", work + "/grader-work",
                                        "--output", results};
    std::string exercises;
    for (const auto& e : spec.at("exercises")) exercises += (exercises.empty() ? "" : ",") + e.get<std::string>();
    command.insert(command.end(), {"--exercise", exercises});
    for (const auto& a : spec.value("args", json::array())) command.push_back(a.get<std::string>());

    std::cout << "grading " << submission << " (" << exercises << ")\n" << std::flush;
    const auto run = harness::run_command(command, std::chrono::minutes(15), 1 << 20);
    std::cout << run.output << "\n";
    expect(run.status.ok(), "grade exited cleanly (" + run.status.describe() + ")");
    std::ifstream results_file(results);
    if (!results_file) return std::cout << "  FAIL  no results.json\n", 1;
    const json report = json::parse(results_file);
    const json schema = json::parse(std::ifstream(GRADER_SCHEMA_FILE));
    const auto errors = grading::validate_json_schema(schema, report);
    expect(errors.empty(), "results.json matches grading/results.schema.json" +
                               (errors.empty() ? std::string() : ": " + errors[0].instance_path + " " + errors[0].message));

    const std::string all = spec.contains("all") && spec.at("all").is_string() ? spec.at("all").get<std::string>() : "";
    for (const auto& e : report.at("exercises")) {
        const std::string name = e.at("name");
        for (const auto& c : e.at("cases"))
            if (c.at("status") != "pass") print_case(c);
        if (spec.contains("all") && spec.at("all").is_object()) {
            bool every = !e.at("cases").empty();
            for (const auto& c : e.at("cases")) every = every && case_matches(c, spec.at("all"));
            expect(every, name + ": every case matches " + spec.at("all").dump());
        }
        if (spec.contains("library_use")) {
            bool listed = false;
            for (const auto& lib : e.at("library_use")) listed = listed || lib == spec.at("library_use");
            expect(listed && e.at("points") == 0, name + " uses " + spec.at("library_use").dump() +
                                                       " and scores 0 (" + e.at("points").dump() + ")");
        }
        if (all == "full_marks") {
            expect(e.at("status") == "graded", name + " is graded");
            expect(e.at("points") == e.at("max_points") && !e.at("cases").empty(),
                   name + " scores full marks (" + e.at("points").dump() + "/" + e.at("max_points").dump() + ")");
        } else if (all == "zero_points_clean") {
            expect(e.at("status") == "graded" && e.at("points") == 0, name + " is graded and scores 0");
            bool clean = !e.at("cases").empty();
            for (const auto& c : e.at("cases"))
                clean = clean && case_matches(c, {{"status", "wrong"}, {"finding", "no output element was written"}});
            expect(clean, name + ": every case fails cleanly with 'no output element was written'");
        }
        for (const auto& want : spec.value("cases", json::array())) {
            if (want.contains("exercise") && want.at("exercise") != name) continue;
            bool matched = false;
            for (const auto& c : e.at("cases"))
                if (c.at("label") == want.at("label")) matched = case_matches(c, want);
            expect(matched, name + " case " + want.dump());
        }
        for (const auto& want : spec.value("some_case", json::array())) {
            bool matched = false;
            for (const auto& c : e.at("cases")) matched = matched || case_matches(c, want);
            expect(matched, name + " some case matches " + want.dump());
        }
        for (const auto& full : spec.value("full_marks_for", json::array()))
            if (full == name)
                expect(e.at("points") == e.at("max_points"), name + " scores full marks beside the failing exercise (" +
                                                                  e.at("points").dump() + ")");
        if (spec.contains("exercise_status")) expect(e.at("status") == spec.at("exercise_status"), name + " status " + e.at("status").dump());
    }
    std::cout << (failures == 0 ? "all expectations met\n" : std::to_string(failures) + " expectation(s) failed\n");
    return failures == 0 ? 0 : 1;
}

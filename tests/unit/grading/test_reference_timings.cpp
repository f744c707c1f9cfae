// The references' timings alone measured once and adopted by other gradings (grading/
// reference_timings.hpp), end to end with the fake toolchain: grade --record-reference-timings with
// an empty submission, then gradings with --reference-timings of that file and of files that do not
// fit (another GPU, another plan, not JSON, missing), which time the references themselves and grade
// as before.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "grading/json_schema.hpp"
#include "harness/process.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct TimingsRun {
    json results;
    std::string output;
    int exit_code = -1;
};

// grade of `submission` on `exercises`, with a stopping rule that fake_runner's times meet
// (precision 100%: met at the rule's 8 batches of the 10 allowed, never capped).
TimingsRun grade_with(const fs::path& dir, const fs::path& submission, const std::vector<std::string>& extra,
                      const std::string& exercises = "scan_kogge_stone,reduce_sequential_addressing")
{
    std::vector<std::string> command = {GRADE_EXECUTABLE,      "--submission", submission.string(),
                                        "--nvcc",              FAKE_NVCC,      "--reference-runner",
                                        FAKE_RUNNER,           "--work-dir",   (dir / "work").string(),
                                        "--output",            (dir / "results.json").string(),
                                        "--exercise",          exercises,
                                        "--case-time-limit",   "15",           "--reps",
                                        "10",                  "--timing-precision", "100"};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    command.insert(command.end(), extra.begin(), extra.end());
    fs::remove(dir / "results.json");
    const auto run = harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(4), 1 << 20);
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    REQUIRE((run.status.code == 0 || run.status.code == 1));
    TimingsRun result{json::parse(std::ifstream(dir / "results.json")), run.output, run.status.code};
    CHECK(grading::validate_json_schema(test_support::results_schema(), result.results).empty());
    return result;
}

const json& timed_case(const json& results, const std::string& exercise)
{
    for (const auto& e : results.at("exercises"))
        if (e.at("name") == exercise)
            for (const auto& c : e.at("cases"))
                if (c.contains("timing") && !c.at("timing").is_null()) return c;
    FAIL("no timed case of " << exercise);
    throw;
}

json read(const fs::path& path) { return json::parse(std::ifstream(path)); }

void write(const fs::path& path, const json& j) { std::ofstream(path) << j.dump(); }

}  // namespace

TEST_CASE("the references timed alone once, with no submission file, are adopted by a grading on that GPU; a file "
          "that does not fit is said and the references are timed there")
{
    const fs::path dir = test_support::fresh_dir("reference_timings");
    fs::create_directories(dir / "empty");
    fs::create_directories(dir / "student");
    std::ofstream(dir / "student" / "scan_kogge_stone.cu") << "// FAKE_RUNNER: correct\n";
    std::ofstream(dir / "student" / "reduce_sequential_addressing.cu") << "// FAKE_RUNNER: correct\n";
    const fs::path file = dir / "timings.json";

    const TimingsRun recorded = grade_with(dir, dir / "empty", {"--record-reference-timings", file.string()});
    INFO(recorded.output);
    CHECK(recorded.output.find("the references' timings alone on 2 speed case(s) written to") != std::string::npos);
    const json timings = read(file);
    CHECK(timings.at("reference_timings") == 1);
    CHECK(timings.at("calibration").at("uuid") == "GPU-fake-device");  // fake_runner's calibration
    REQUIRE(timings.at("cases").size() == 2);
    const json& scan = timings.at("cases").at("scan_kogge_stone");
    REQUIRE(scan.size() == 1);
    const json& record = scan.begin().value();

    SUBCASE("adopted: no timing alone in this grading, the recorded batches are its anchor")
    {
        const TimingsRun run = grade_with(dir, dir / "student", {"--reference-timings", file.string()});
        INFO(run.output);
        CHECK(run.exit_code == 0);
        CHECK(run.output.find("not used") == std::string::npos);
        const json& adopted = run.results.at("calibration").at("reference_timings");
        CHECK(adopted.at("adopted_cases") == 2);
        CHECK(adopted.at("measured_at") == timings.at("measured_at"));
        const json& c = timed_case(run.results, "scan_kogge_stone");
        CHECK(c.at("label") == scan.begin().key());
        const json& alone = c.at("timing").at("batches").at("alone");
        REQUIRE(alone.size() == record.at("windows").size());
        for (std::size_t k = 0; k < alone.size(); ++k)  // window_ms, to the 4 decimals results keep
            CHECK(std::abs(alone[k][2].get<double>() - record["windows"][k]["window_ms"].get<double>()) < 1e-4);
        // Its exclusive seconds are the turns' alone: the timing alone was the class's.
        CHECK(c.at("gpu_exclusive_seconds").get<double>() > 0);
    }
    SUBCASE("measured on another GPU, by another grader, for another plan, not JSON, missing: timed here")
    {
        json other_gpu = timings;
        other_gpu["calibration"]["uuid"] = "GPU-another";
        write(dir / "other_gpu.json", other_gpu);
        json other_grader = timings;
        other_grader["grader_version"] = "0.0.1-elsewhere";
        write(dir / "other_grader.json", other_grader);
        json other_plan = timings;
        for (auto& [exercise, labels] : other_plan["cases"].items())
            for (auto& [label, r] : labels.items()) r["subject"]["plan"]["reps_per_batch"] = 4;
        write(dir / "other_plan.json", other_plan);
        std::ofstream(dir / "cut.json") << R"({"reference_timings": 1, "cases": )";
        const std::vector<std::pair<std::string, std::string>> files = {
            {"other_gpu.json", "measured on another GPU"},
            {"other_grader.json", "measured by grader 0.0.1-elsewhere"},
            {"other_plan.json", "measured for other batches or another timing plan"},
            {"cut.json", "is not JSON"},
            {"missing.json", "cannot read"}};
        for (const auto& [name, why] : files) {
            CAPTURE(name);
            const TimingsRun run = grade_with(dir, dir / "student",
                                              {"--reference-timings", (dir / name).string()}, "scan_kogge_stone");
            INFO(run.output);
            CHECK(run.output.find(why) != std::string::npos);
            CHECK(run.exit_code == 0);
            const json none = {{"adopted_cases", 0}};
            CHECK(run.results.at("calibration").value("reference_timings", none).at("adopted_cases") == 0);
            const json& c = timed_case(run.results, "scan_kogge_stone");
            CHECK(c.at("status") == "pass");
            // Timed alone here: rows of its own, not the file's.
            const json& alone = c.at("timing").at("batches").at("alone");
            REQUIRE_FALSE(alone.empty());
            CHECK(c.at("timing").at("reference_alone_ms").get<double>() > 0);
        }
    }
}

// `grade class` times the references alone once on each GPU before any student's grading, and each
// student's grading adopts those timings (grading/reference_timings.hpp), with the fake toolchain on
// two virtual GPUs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "harness/process.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_class_file(const fs::path& path) { return json::parse(std::ifstream(path)); }

}  // namespace

TEST_CASE("grade class times the references alone on each GPU before any student; every student's grading adopts "
          "its GPU's")
{
    const fs::path dir = test_support::fresh_dir("class_reference_timings");
    for (const char* name : {"a", "b", "c"}) {
        fs::create_directories(dir / "submissions" / name);
        std::ofstream(dir / "submissions" / name / "scan_kogge_stone.cu") << "// FAKE_RUNNER: correct\n";
    }
    const fs::path out = dir / "out";
    // A stopping rule fake_runner's times meet (never capped: capped timings are not recorded).
    std::vector<std::string> command = {
        GRADE_EXECUTABLE, "class",    "--submissions", (dir / "submissions").string(), "--output-dir", out.string(),
        "--nvcc",         FAKE_NVCC,  "--reference-runner", FAKE_RUNNER, "--exercise",  "scan_kogge_stone",
        "--case-time-limit", "15",    "--reps",        "10", "--timing-precision", "100", "--gpus", "0,1",
        "--per-gpu",      "1"};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    const auto run =
        harness::run_command(test_support::with_own_gpu_lock(command), std::chrono::minutes(4), 1 << 20);
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    CHECK(run.status.code == 0);
    CHECK(run.output.find("timing the references alone on each GPU") != std::string::npos);
    std::string measured_last;
    for (const char* gpu : {"gpu0", "gpu1"}) {
        const json timings = read_class_file(out / ".reference-timings" / (std::string(gpu) + ".json"));
        CHECK(timings.at("cases").at("scan_kogge_stone").size() == 1);
        measured_last = std::max(measured_last, timings.at("measured_at").get<std::string>());
    }
    CHECK_FALSE(fs::exists(out / ".reference-timings" / "gpu0-work"));  // its work removed, as a student's
    for (const char* name : {"a", "b", "c"}) {
        CAPTURE(name);
        const fs::path student = out / "students" / name;
        const json results = read_class_file(student / "results.json");
        CHECK(results.at("calibration").at("reference_timings").at("adopted_cases") == 1);
        // Every student started after the last GPU's references were timed (ISO 8601 UTC compares as text).
        CHECK(read_class_file(student / "record.json").at("started_at").get<std::string>() >= measured_last);
        std::ifstream log(student / "grade.log");
        const std::string text((std::istreambuf_iterator<char>(log)), {});
        CHECK(text.find("not used") == std::string::npos);
    }
}

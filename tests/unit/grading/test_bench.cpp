// `grade bench` without a GPU: its command line, the checks of the reference runner's JSON, the
// Markdown table made of it, the whole command with a script standing in for the reference runner
// (the lock held exclusively while it runs, the files written, failures relayed with nothing
// written), and that the bench's code is in the reference runner only, never in the object every
// submission is linked with.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "grading/bench.hpp"
#include "grading/command_line.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/process.hpp"
#include "support/test_support.hpp"

using namespace grading;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using test_support::fresh_dir;

using test_support::file_text;

json timing(double ms, double bytes)
{
    return {{"median_ms", ms}, {"min_ms", 0.97 * ms}, {"gb_s", bytes / (ms * 1e6)}};
}

// A row as the reference runner writes it; cub_ms 0: no CUB column.
json sample_row(const harness::Exercise& e, std::int64_t size, double reference_ms, double cub_ms, double copy_ms)
{
    const bool reduction = e.family == harness::Family::reduction;
    std::int64_t n = size, side = 0;
    if (e.family == harness::Family::conv2d) {
        side = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(size))));
        n = side * side;
    }
    const double in_bytes = static_cast<double>(n) * (reduction ? 8 : 4);
    const double bytes = reduction ? in_bytes : 2 * in_bytes;
    json row = {{"exercise", e.name},
                {"family", harness::family_name(e.family)},
                {"size", size},
                {"n", n},
                {"shape", harness::family_of(e).shape_json(harness::bench_case(e, size))},
                {"bytes", bytes},
                {"verified", true},
                {"verified_against", "cub"},
                {"reference", timing(reference_ms, bytes)},
                {"cub", nullptr},
                {"fraction_of_cub", nullptr},
                {"copy", timing(copy_ms, 2 * in_bytes)}};
    row["copy"]["bytes"] = 2 * in_bytes;
    row["fraction_of_copy"] = row["reference"]["gb_s"].get<double>() / row["copy"]["gb_s"].get<double>();
    if (cub_ms > 0) {
        row["cub"] = timing(cub_ms, bytes);
        row["cub"]["operation"] = reduction ? "cub::DeviceReduce::Sum" : "cub::DeviceScan::InclusiveSum";
        row["fraction_of_cub"] = cub_ms / reference_ms;
    }
    return row;
}

// What an H100 might answer for every exercise at 10^7 and 2^26 elements (times at 10^7, scaled).
json sample_bench()
{
    struct Times {
        double reference, cub, copy;
    };
    const std::map<std::string, Times> at_ten_million = {
        {"scan_kogge_stone", {0.0612, 0.0301, 0.0277}},
        {"scan_brent_kung", {0.0480, 0.0301, 0.0277}},
        {"scan_hierarchical", {0.0890, 0.0301, 0.0277}},
        {"reduce_interleaved_divergent", {0.2100, 0.0330, 0.0554}},
        {"reduce_interleaved_bank_conflicts", {0.1400, 0.0330, 0.0554}},
        {"reduce_sequential_addressing", {0.0950, 0.0330, 0.0554}},
        {"reduce_first_add_during_load", {0.0520, 0.0330, 0.0554}},
        {"reduce_unroll_last_warp", {0.0410, 0.0330, 0.0554}},
        {"conv1d_tiled", {0.0350, 0, 0.0277}},
        {"conv2d_tiled", {0.0400, 0, 0.0280}},
    };
    json rows = json::array();
    for (const auto& e : harness::all_exercises())
        for (const std::int64_t size : {std::int64_t{10'000'000}, std::int64_t{1} << 26}) {
            const Times t = at_ten_million.at(e.name);
            const double scale = static_cast<double>(size) / 1e7;
            rows.push_back(sample_row(e, size, t.reference * scale, t.cub * scale, t.copy * scale));
        }
    return {{"device",
             {{"name", "NVIDIA H100 80GB HBM3"},
              {"uuid", "GPU-5e3a0c1d-8f2b-4c6d-9e7f-0a1b2c3d4e5f"},
              {"cc", "9.0"},
              {"sm_count", 132},
              {"l2_bytes", 52428800},
              {"driver_version", 12080},
              {"runtime_version", 12080},
              {"copy_gb_s", 2950.4}}},
            {"reps", 30},
            {"warmups", 3},
            {"rows", rows}};
}

std::string refusal(const json& bench, const BenchCommand& command = {})
{
    try {
        check_bench_json(bench, command);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

json::reference row_of(json& bench, const std::string& exercise, std::int64_t size = 10'000'000)
{
    for (auto& row : bench["rows"])
        if (row["exercise"] == exercise && row["size"] == size) return row;
    FAIL("no row " << exercise);
    return bench;
}

CommandLine parse_bench_command(std::vector<std::string> args)
{
    args.insert(args.begin(), "grade");
    GradeOptions defaults;
    defaults.environment.reference_runner = "/opt/grader/bin/grader_reference_runner";
    return parse_command_line(args, defaults);
}

// A stand-in for the reference runner: records its arguments and whether the GPU's lock could be
// taken at all while it ran, prints a line and then `answer`, exits with `exit_code`.
std::string fake_runner(const fs::path& dir, const std::string& lock, const std::string& answer, int exit_code = 0)
{
    std::ofstream(dir / "answer.txt") << answer << "\n";
    const fs::path script = dir / "fake_reference_runner.sh";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "printf '%s\\n' \"$@\" > '" << (dir / "args.txt").string() << "'\n"
                          << "if flock -n -s '" << lock << "' true; then echo free; else echo held; fi > '"
                          << (dir / "lock.txt").string() << "'\n"
                          << "echo 'a line before the answer'\n"
                          << "cat '" << (dir / "answer.txt").string() << "'\n"
                          << "exit " << exit_code << "\n";
    fs::permissions(script, fs::perms::owner_all);
    return script.string();
}

DeviceState fake_gpu()
{
    DeviceState device;
    device.name = "NVIDIA H100 80GB HBM3";
    device.uuid = "GPU-5e3a0c1d-8f2b-4c6d-9e7f-0a1b2c3d4e5f";
    device.major = 9;
    return device;
}

struct BenchRun {
    int exit_code;
    std::string out, err;
};

BenchRun run(const BenchCommand& command, const DeviceState& device = fake_gpu())
{
    std::ostringstream out, err;
    const int code = run_bench(
        command, [device] { return device; }, out, err);
    return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("grade bench: its options, and grading's refused beside it")
{
    const CommandLine defaults = parse_bench_command({"bench"});
    INFO(defaults.message);
    REQUIRE(defaults.bench);
    CHECK_FALSE(defaults.grade);
    CHECK(defaults.bench->sizes == std::vector<std::int64_t>{10'000'000, 67'108'864});
    CHECK(defaults.bench->reps == 30);
    CHECK(defaults.bench->exercises.empty());
    CHECK(defaults.bench->output_dir == ".");
    CHECK(defaults.bench->reference_runner == "/opt/grader/bin/grader_reference_runner");

    const CommandLine asked = parse_bench_command({"bench", "--sizes", "1000000,4096", "--reps", "5", "--exercise",
                                     "conv2d_tiled,scan_hierarchical", "--output-dir", "/tmp", "--reference-runner",
                                     "ref", "--gpu-lock-dir", "/run/lock", "--time-limit", "90"});
    INFO(asked.message);
    REQUIRE(asked.bench);
    CHECK(asked.bench->sizes == std::vector<std::int64_t>{1'000'000, 4096});
    CHECK(asked.bench->reps == 5);
    CHECK(asked.bench->exercises == std::vector<std::string>{"conv2d_tiled", "scan_hierarchical"});
    CHECK(asked.bench->output_dir == "/tmp");
    CHECK(asked.bench->reference_runner == "ref");
    CHECK(asked.bench->gpu_lock_dir == "/run/lock");
    CHECK(asked.bench->time_limit == std::chrono::seconds(90));
    CHECK(bench_runner_command(*asked.bench) == std::vector<std::string>{"ref", "--bench", "--sizes", "1000000,4096",
                                                                         "--reps", "5", "--exercise",
                                                                         "conv2d_tiled,scan_hierarchical"});
    CHECK(bench_runner_command(*defaults.bench) == std::vector<std::string>{"/opt/grader/bin/grader_reference_runner",
                                                                            "--bench", "--sizes", "10000000,67108864",
                                                                            "--reps", "30"});

    for (const auto& [args, names] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"bench", "--sizes", "0"}, "--sizes"},
             {{"bench", "--sizes", "1073741825"}, "--sizes"},
             {{"bench", "--sizes", "1e6"}, "--sizes"},
             {{"bench", "--reps", "0"}, "--reps"},
             {{"bench", "--exercise", "scan_nothing"}, "scan_nothing"},
             {{"bench", "--time-limit", "0"}, "--time-limit"},
             {{"bench", "--list"}, "--list"},
             {{"--submission", "/tmp", "bench"}, "--submission"},
             {{"--reps", "5", "bench"}, "--reps"},
         }) {
        const CommandLine refused = parse_bench_command(args);
        INFO(refused.message);
        CHECK_FALSE(refused.bench);
        CHECK_FALSE(refused.grade);
        CHECK(refused.exit_code == exit_usage_error);
        CHECK(refused.message.find(names) != std::string::npos);
        CHECK(refused.message.find("grade bench --help") != std::string::npos);
    }

    const CommandLine help = parse_bench_command({"bench", "--sizes", "0", "--help"});
    CHECK(help.exit_code == exit_success);
    CHECK_FALSE(help.bench);
    CHECK(help.message.find("--sizes") != std::string::npos);
    CHECK(help.message.find("Exit codes") != std::string::npos);
    CHECK(parse_bench_command({"--help"}).message.find("bench") != std::string::npos);
}

TEST_CASE("the reference runner's JSON: every exercise and size, verified, with positive numbers")
{
    const json good = sample_bench();
    CHECK(refusal(good) == "");
    BenchCommand one_size;
    one_size.sizes = {10'000'000};
    CHECK(refusal(good, one_size) == "");
    BenchCommand other_size;
    other_size.sizes = {1'000'000};
    CHECK(refusal(good, other_size) == "no row for scan_kogge_stone at size 1000000");

    json bench = good;
    bench["rows"].erase(bench["rows"].begin() + 5);
    CHECK(refusal(bench) == "no row for scan_hierarchical at size 67108864");
    bench = good;
    bench["rows"].push_back(good["rows"][0]);
    CHECK(refusal(bench) == "scan_kogge_stone at size 10000000: measured twice");
    bench = good;
    row_of(bench, "scan_brent_kung")["verified"] = false;
    CHECK(refusal(bench) == "scan_brent_kung at size 10000000: the reference's output was not verified");
    bench = good;
    row_of(bench, "reduce_unroll_last_warp")["reference"]["gb_s"] = 0;
    CHECK(refusal(bench) ==
          "reduce_unroll_last_warp at size 10000000, reference: \"gb_s\" is 0, not a positive number");
    bench = good;
    row_of(bench, "scan_hierarchical")["cub"] = nullptr;
    CHECK(refusal(bench) == "scan_hierarchical at size 10000000, cub has no number \"median_ms\"");
    bench = good;
    row_of(bench, "conv1d_tiled")["cub"] = row_of(bench, "scan_hierarchical")["cub"];
    CHECK(refusal(bench) == "conv1d_tiled at size 10000000: a CUB measurement where CUB has no such operation");
    bench = good;
    row_of(bench, "conv2d_tiled")["copy"]["median_ms"] = -1;
    CHECK(refusal(bench).find("conv2d_tiled at size 10000000, copy") == 0);
    bench = good;
    bench["rows"][0]["exercise"] = "scan_nothing";
    CHECK(refusal(bench) == "scan_nothing at size 10000000: no such exercise");
    bench = good;
    bench["device"].erase("uuid");
    CHECK(refusal(bench) == "no device with a name and a UUID");
    bench = good;
    bench["device"]["copy_gb_s"] = nullptr;
    CHECK(refusal(bench) == "the device has no number \"copy_gb_s\"");
    CHECK(refusal(json::array()) == "not a JSON object");
    CHECK(refusal({{"device", good["device"]}, {"reps", 30}}) == "no rows");
}

TEST_CASE("the Markdown table: the device, one row per exercise and size, the method and the footnote")
{
    const std::string markdown = bench_markdown(sample_bench());
    INFO(markdown);
    CHECK(markdown.find("## Reference kernels beside their ceilings: NVIDIA H100 80GB HBM3\n\n"
                        "NVIDIA H100 80GB HBM3 (`GPU-5e3a0c1d-8f2b-4c6d-9e7f-0a1b2c3d4e5f`), compute capability 9.0, "
                        "132 SMs, driver 12.8, CUDA runtime 12.8; device-to-device copy: 2,950 GB/s.\n\n") == 0);
    CHECK(markdown.find(
              "| exercise | elements | reference ms | GB/s | CUB ms | GB/s | copy ms | GB/s | of CUB | of copy |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
              "| `scan_kogge_stone`\u00b9 | 10,000,000 | 0.0612 | 1,307 | 0.0301 | 2,658 | 0.0277 | 2,888 | 49% "
              "| 45% |\n"
              "| `scan_kogge_stone`\u00b9 | 67,108,864 | 0.411 | 1,307 | 0.202 | 2,658 | 0.186 | 2,888 | 49% | 45% "
              "|\n") != std::string::npos);
    CHECK(markdown.find("| `reduce_interleaved_divergent` | 10,000,000 | 0.210 | 381 | 0.0330 | 2,424 | 0.0554 | 2,888 "
                        "| 16% | 13% |\n") != std::string::npos);
    CHECK(markdown.find(
              "| `conv2d_tiled` | 3,163 \u00d7 3,163 | 0.0400 | 2,001 | - | - | 0.0280 | 2,858 | - | 70% |\n") !=
          std::string::npos);
    CHECK(markdown.find("| `conv2d_tiled` | 8,192 \u00d7 8,192 |") != std::string::npos);
    std::size_t rows = 0;
    for (std::size_t at = 0; (at = markdown.find("\n| `", at)) != std::string::npos; ++at) ++rows;
    CHECK(rows == 20);
    CHECK(markdown.find("Median of 30 timed calls after 3 warm-up calls") != std::string::npos);
    CHECK(markdown.find("\n\u00b9 `scan_kogge_stone` (1,024-element sections) and `scan_brent_kung` (2,048-element "
                        "sections) scan each section on its own; CUB scans the whole array") != std::string::npos);

    // Without a section scan, no footnote.
    json conv_only = sample_bench();
    json rows_kept = json::array();
    for (const auto& row : conv_only["rows"])
        if (row["family"] == "conv1d") rows_kept.push_back(row);
    conv_only["rows"] = rows_kept;
    CHECK(bench_markdown(conv_only).find("\u00b9") == std::string::npos);
}

TEST_CASE("grade bench holds the GPU's lock exclusively while the reference runner measures, then writes both files")
{
    const fs::path dir = fresh_dir("run");
    fs::create_directories(dir / "out");
    const std::string lock = harness::gpu_lock_path((dir / "lock").string(), fake_gpu().uuid);
    fs::create_directories(dir / "lock");
    BenchCommand command;
    command.reference_runner = fake_runner(dir, lock, sample_bench().dump());
    command.output_dir = (dir / "out").string();
    command.gpu_lock_dir = (dir / "lock").string();

    const BenchRun done = run(command);
    INFO(done.err);
    CHECK(done.exit_code == exit_success);
    CHECK(file_text(dir / "lock.txt") == "held\n");
    CHECK(file_text(dir / "args.txt") == "--bench\n--sizes\n10000000,67108864\n--reps\n30\n");
    CHECK(done.out == file_text(dir / "out" / "bench.md"));
    CHECK(done.out == bench_markdown(sample_bench()));
    const json written = json::parse(file_text(dir / "out" / "bench.json"));
    CHECK(written["rows"] == sample_bench()["rows"]);
    CHECK(written["device"]["uuid"] == fake_gpu().uuid);
    CHECK(written["grader_version"].is_string());
    CHECK(written["created"].get<std::string>().size() == 20);
    CHECK(done.err.find("measuring 10 exercises at 2 sizes on NVIDIA H100 80GB HBM3") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("grade bench writes nothing when the reference runner fails or answers nonsense, or the GPU is missing")
{
    const fs::path dir = fresh_dir("failures");
    fs::create_directories(dir / "out");
    BenchCommand command;
    command.output_dir = (dir / "out").string();
    command.gpu_lock_dir = dir.string();
    const std::string lock = harness::gpu_lock_path(dir.string(), fake_gpu().uuid);

    command.reference_runner = fake_runner(
        dir, lock,
        "grader_reference_runner --bench: scan_kogge_stone at size 10000000: 3 of 10000000 output elements differ", 1);
    BenchRun failed = run(command);
    CHECK(failed.exit_code == exit_environment_error);
    CHECK(failed.out.empty());
    CHECK(failed.err.find("the reference runner failed (exit code 1)") != std::string::npos);
    CHECK(failed.err.find("3 of 10000000 output elements differ") != std::string::npos);
    CHECK(failed.err.find("nothing was written") != std::string::npos);

    command.reference_runner = fake_runner(dir, lock, "{\"rows\": []}");
    failed = run(command);
    CHECK(failed.exit_code == exit_environment_error);
    CHECK(failed.err.find("is not a bench: no device with a name and a UUID") != std::string::npos);

    command.reference_runner = fake_runner(dir, lock, "not JSON");
    failed = run(command);
    CHECK(failed.exit_code == exit_environment_error);
    CHECK(failed.err.find("is not a bench") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "out" / "bench.md"));
    CHECK_FALSE(fs::exists(dir / "out" / "bench.json"));

    DeviceState no_gpu;
    no_gpu.error = "cudaErrorNoDevice (no CUDA-capable device is detected)";
    command.reference_runner = (dir / "missing_runner").string();
    command.output_dir = (dir / "missing_dir").string();
    failed = run(command, no_gpu);
    CHECK(failed.exit_code == exit_environment_error);
    CHECK(failed.err.find("the reference runner " + command.reference_runner + " is missing") != std::string::npos);
    CHECK(failed.err.find("--output-dir " + command.output_dir + " is not a directory") != std::string::npos);
    CHECK(failed.err.find("no usable GPU: cudaErrorNoDevice") != std::string::npos);
    CHECK(failed.err.find("nothing was measured") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("the bench is in the reference runner only: the runner object of submissions has no --bench and no CUB")
{
    const auto symbols_of = [](const std::string& file) {
        const harness::CommandResult nm = harness::run_command({"nm", "-P", file}, std::chrono::seconds(60), 64u << 20);
        REQUIRE(nm.status.ok());
        return nm.output;
    };
    // Mangled names: bench_main in namespace harness::runner, anything in namespace cub.
    const std::string runner_object = symbols_of(GRADER_RUNNER_OBJECT);
    CHECK(runner_object.find("runner_main") != std::string::npos);
    CHECK(runner_object.find("bench_main") == std::string::npos);
    CHECK(runner_object.find("N3cub") == std::string::npos);
    const std::string reference_runner = symbols_of(GRADER_REFERENCE_RUNNER);
    CHECK(reference_runner.find("bench_main") != std::string::npos);
    CHECK(reference_runner.find("N3cub") != std::string::npos);

    // Its usage errors need no GPU; without --bench it is still the runner the grader starts.
    auto bench = harness::run_command({GRADER_REFERENCE_RUNNER, "--bench", "--sizes", "0"}, std::chrono::seconds(60));
    CHECK(bench.status.kind == harness::ExitStatus::Kind::exited);
    CHECK(bench.status.code == 2);
    CHECK(bench.output.find("--sizes takes whole numbers from 1 to 1073741824, not '0'") != std::string::npos);
    bench = harness::run_command({GRADER_REFERENCE_RUNNER, "--bench", "--exercise", "scan_nothing"},
                                 std::chrono::seconds(60));
    CHECK(bench.status.code == 2);
    CHECK(bench.output.find("unknown exercise 'scan_nothing'") != std::string::npos);
    const auto runner =
        harness::run_command({GRADER_REFERENCE_RUNNER, "--exercise", "scan_kogge_stone"}, std::chrono::seconds(60));
    CHECK(runner.status.code == 2);
    CHECK(runner.output.find("no grader pipes") != std::string::npos);
}

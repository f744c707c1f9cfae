#include "grading/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <unistd.h>

#include "formats/text.hpp"
#include "grader_config.hpp"
#include "grading/report.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grading {
namespace {

using formats::md_code;
using formats::md_text;

// What the reference runner may print before its JSON line, and a failure's message: kept whole.
constexpr std::size_t max_runner_output = 16u << 20;

void require(bool holds, const std::string& what)
{
    if (!holds) throw std::runtime_error(what);
}

double positive_number(const json& object, const std::string& key, const std::string& where)
{
    require(object.is_object() && object.contains(key) && object.at(key).is_number(),
            where + " has no number \"" + key + "\"");
    const double value = object.at(key).get<double>();
    require(std::isfinite(value) && value > 0,
            where + ": \"" + key + "\" is " + object.at(key).dump() + ", not a positive number");
    return value;
}

void check_timing(const json& row, const std::string& column, const std::string& where)
{
    const json& timing = row.contains(column) ? row.at(column) : json();
    positive_number(timing, "median_ms", where + ", " + column);
    positive_number(timing, "gb_s", where + ", " + column);
}

std::string comma_separated(const std::vector<std::string>& items)
{
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ",") + item;
    return text;
}

std::vector<std::string> exercises_of(const BenchCommand& command)
{
    if (!command.exercises.empty()) return command.exercises;
    std::vector<std::string> names;
    for (const auto& e : harness::all_exercises()) names.push_back(e.name);
    return names;
}

// 10,000,000
std::string grouped(long long value)
{
    std::string digits = std::to_string(value < 0 ? -value : value);
    for (auto at = static_cast<long long>(digits.size()) - 3; at > 0; at -= 3)
        digits.insert(static_cast<std::size_t>(at), ",");
    return (value < 0 ? "-" : "") + digits;
}

// Three significant digits: 0.0612, 1.23, 12.3 (times from microseconds to seconds).
std::string milliseconds(double ms)
{
    const int decimals = ms >= 100 ? 0 : ms >= 10 ? 1 : std::max(2, 2 - static_cast<int>(std::floor(std::log10(ms))));
    return formats::fixed(ms, decimals);
}

std::string percent(double fraction)
{
    return formats::fixed(100 * fraction, 0) + "%";
}

// The CUDA API's version number as people write it: 12080 is 12.8.
std::string cuda_version(int version)
{
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string size_cell(const json& row)
{
    const json shape = row.value("shape", json::object());  // as the family writes it: an image's has height and width
    const int height = shape.value("height", 0), width = shape.value("width", 0);
    if (height > 0) return grouped(height) + " \u00d7 " + grouped(width);
    return grouped(row.at("n").get<long long>());
}

std::string timing_cells(const json& timing)
{
    if (!timing.is_object()) return " - | - |";
    return " " + milliseconds(timing.at("median_ms").get<double>()) + " | " +
           grouped(std::llround(timing.at("gb_s").get<double>())) + " |";
}

constexpr const char* footnote_mark = "\u00b9";

std::string table_row(const json& row)
{
    const harness::Exercise& e = *harness::find_exercise(row.at("exercise").get<std::string>());
    const bool sections = harness::bench_plan(e).section > 0;
    const json& of_cub = row.at("fraction_of_cub");
    return "| " + md_code(e.name) + (sections ? footnote_mark : "") + " | " + size_cell(row) + " |" +
           timing_cells(row.at("reference")) + timing_cells(row.at("cub")) + timing_cells(row.at("copy")) + " " +
           (of_cub.is_number() ? percent(of_cub.get<double>()) : "-") + " | " +
           percent(row.at("fraction_of_copy").get<double>()) + " |\n";
}

std::string indented(const std::string& text)
{
    std::string out = "  ";
    for (const char c : formats::last_chars(text, 4000)) {
        out += c;
        if (c == '\n') out += "  ";
    }
    return out;
}

// Every problem that stops the bench before it starts, each with what to do.
std::vector<std::string> bench_problems(const BenchCommand& command, const DeviceState& device,
                                        const std::string& lock_error)
{
    std::vector<std::string> problems;
    std::error_code ec;
    if (!fs::is_regular_file(command.reference_runner, ec) || ::access(command.reference_runner.c_str(), X_OK) != 0)
        problems.push_back("the reference runner " + command.reference_runner +
                           " is missing or cannot be run\n  (rebuild with `cmake --build build`, or point "
                           "--reference-runner at it)");
    if (!fs::is_directory(command.output_dir, ec))
        problems.push_back("--output-dir " + command.output_dir +
                           " is not a directory\n  (create it first, e.g. mkdir -p " + command.output_dir + ")");
    else if (const std::string problem =
                 check_output_file("--output-dir", (fs::path(command.output_dir) / "bench.json").string());
             !problem.empty())
        problems.push_back(problem);
    if (!device.error.empty())
        problems.push_back("no usable GPU: " + device.error +
                           "\n  (grade bench measures on the GPU the CUDA runtime calls device 0)");
    else if (!lock_error.empty())
        problems.push_back(lock_error +
                           "\n  (pass --gpu-lock-dir with a directory that every grading on this machine can use)");
    return problems;
}

}  // namespace

std::vector<std::string> bench_runner_command(const BenchCommand& command)
{
    std::vector<std::string> sizes;
    for (const auto size : command.sizes) sizes.push_back(std::to_string(size));
    std::vector<std::string> argv = {command.reference_runner,    "--bench", "--sizes", comma_separated(sizes), "--reps",
                                     std::to_string(command.reps)};
    if (!command.exercises.empty()) argv.insert(argv.end(), {"--exercise", comma_separated(command.exercises)});
    return argv;
}

void check_bench_json(const json& bench, const BenchCommand& command)
{
    require(bench.is_object(), "not a JSON object");
    const json& device = bench.contains("device") ? bench.at("device") : json();
    require(device.is_object() && device.contains("name") && device.at("name").is_string() && device.contains("uuid") &&
                device.at("uuid").is_string(),
            "no device with a name and a UUID");
    for (const char* key : {"copy_gb_s", "sm_count", "driver_version", "runtime_version"})
        positive_number(device, key, "the device");
    positive_number(bench, "reps", "the bench");
    require(bench.contains("rows") && bench.at("rows").is_array(), "no rows");

    std::set<std::pair<std::string, std::int64_t>> seen;
    for (const json& row : bench.at("rows")) {
        require(row.is_object() && row.contains("exercise") && row.at("exercise").is_string() && row.contains("size") &&
                    row.at("size").is_number_integer(),
                "a row without an exercise and a size: " + row.dump());
        const std::string name = row.at("exercise");
        const std::int64_t size = row.at("size");
        const std::string where = name + " at size " + std::to_string(size);
        const harness::Exercise* e = harness::find_exercise(name);
        require(e != nullptr, where + ": no such exercise");
        require(seen.emplace(name, size).second, where + ": measured twice");
        require(row.value("verified", false) == true, where + ": the reference's output was not verified");
        require(row.contains("n") && row.at("n").is_number_integer() && row.at("n").get<std::int64_t>() > 0,
                where + ": no element count");
        check_timing(row, "reference", where);
        check_timing(row, "copy", where);
        positive_number(row, "fraction_of_copy", where);
        if (harness::bench_plan(*e).timed_beside_cub()) {
            check_timing(row, "cub", where);
            positive_number(row, "fraction_of_cub", where);
        } else {
            require(row.contains("cub") && row.at("cub").is_null() && row.contains("fraction_of_cub") &&
                        row.at("fraction_of_cub").is_null(),
                    where + ": a CUB measurement where CUB has no such operation");
        }
    }
    for (const auto& name : exercises_of(command))
        for (const auto size : command.sizes)
            require(seen.count({name, size}) == 1, "no row for " + name + " at size " + std::to_string(size));
}

std::string bench_markdown(const json& bench)
{
    const json& device = bench.at("device");
    std::string out = "## Reference kernels beside their ceilings: " + md_text(device.at("name").get<std::string>()) +
                      "\n\n" + md_text(device.at("name").get<std::string>()) + " (" +
                      md_code(device.at("uuid").get<std::string>()) + ")";
    if (device.contains("cc")) out += ", compute capability " + md_text(device.at("cc").get<std::string>());
    out += ", " + std::to_string(device.at("sm_count").get<int>()) + " SMs, driver " +
           cuda_version(device.at("driver_version").get<int>()) + ", CUDA runtime " +
           cuda_version(device.at("runtime_version").get<int>()) +
           "; device-to-device copy: " + grouped(std::llround(device.at("copy_gb_s").get<double>())) + " GB/s.\n\n";

    out +=
        "| exercise | elements | reference ms | GB/s | CUB ms | GB/s | copy ms | GB/s | of CUB | of copy |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    std::vector<std::string> section_scans;
    for (const json& row : bench.at("rows")) {
        out += table_row(row);
        const harness::Exercise& e = *harness::find_exercise(row.at("exercise").get<std::string>());
        const std::int64_t section = harness::bench_plan(e).section;
        const std::string described = md_code(e.name) + " (" + grouped(section) + "-element sections)";
        if (section > 0 && std::find(section_scans.begin(), section_scans.end(), described) == section_scans.end())
            section_scans.push_back(described);
    }

    const int reps = bench.at("reps").get<int>(), warmups = bench.value("warmups", 0);
    out += "\nMedian of " + std::to_string(reps) + " timed calls" +
           (warmups > 0 ? " after " + std::to_string(warmups) + " warm-up calls" : std::string()) +
           ", CUDA events, the L2 flushed and the output poisoned before every call. GB/s counts the fewest "
           "bytes the operation moves: each input element read once and each output element written once (a "
           "reduction: its input only); the copy is `cudaMemcpyAsync` of the input's bytes, device to device, "
           "which reads and writes them. *of CUB*, *of copy*: the reference's bandwidth as a fraction of theirs. "
           "CUB: `cub::DeviceScan::InclusiveSum` for the scans (float), `cub::DeviceReduce::Sum` for the "
           "reductions (double); the convolutions have no CUB counterpart. Each reference's output was checked "
           "against CUB or a direct convolution before it was timed.\n";
    if (!section_scans.empty()) {
        std::string listed;
        for (std::size_t k = 0; k < section_scans.size(); ++k)
            listed += (k == 0 ? "" : k + 1 == section_scans.size() ? " and " : ", ") + section_scans[k];
        out += "\n" + std::string(footnote_mark) + " " + listed +
               " scan each section on its own; CUB scans the whole array, carrying sums across sections: a stronger "
               "ceiling than these exercises need.\n";
    }
    return out;
}

int run_bench(const BenchCommand& command, const DeviceProbe& probe, std::ostream& out, std::ostream& err)
{
    const DeviceState device = probe();
    std::optional<harness::GpuLock> lock;
    std::string lock_error;
    if (device.error.empty()) {
        try {
            lock.emplace(harness::gpu_lock_path(command.gpu_lock_dir, device.uuid.empty() ? device.name : device.uuid));
        } catch (const std::exception& e) {
            lock_error = e.what();
        }
    }
    const std::vector<std::string> problems = bench_problems(command, device, lock_error);
    if (!problems.empty()) {
        for (const auto& problem : problems) err << "grade bench: " << problem << "\n";
        err << "grade bench: nothing was measured\n";
        return exit_environment_error;
    }

    json bench;
    {
        // Exclusively, as a timed case holds it: no grading times anything, nor runs its
        // correctness checks, while the references are measured.
        err << "grade bench: measuring " << exercises_of(command).size() << " exercises at " << command.sizes.size()
            << (command.sizes.size() == 1 ? " size" : " sizes") << " on " << device.name << ", holding the GPU's lock "
            << lock->path() << "\n"
            << std::flush;
        const harness::GpuLock::Hold hold = lock->hold(true);
        const double waited = std::chrono::duration<double>(hold.waited).count();
        if (waited >= 1) err << "grade bench: waited " << std::llround(waited) << " s for the GPU's lock\n";
        const harness::CommandResult run =
            harness::run_command(bench_runner_command(command), command.time_limit, max_runner_output);
        if (!run.status.ok()) {
            err << "grade bench: the reference runner failed (" << run.status.describe() << "):\n"
                << indented(run.output) << "\ngrade bench: nothing was written\n";
            return exit_environment_error;
        }
        try {
            bench = json::parse(formats::last_line(run.output));
            check_bench_json(bench, command);
        } catch (const std::exception& e) {
            err << "grade bench: the reference runner's answer is not a bench: " << e.what() << "\n"
                << indented(run.output) << "\ngrade bench: nothing was written\n";
            return exit_environment_error;
        }
    }
    bench["grader_version"] = GRADER_VERSION;
    bench["created"] = formats::utc_now();  // when the numbers were taken
    const std::string markdown = bench_markdown(bench);
    const fs::path dir(command.output_dir);
    try {
        write_file_atomically((dir / "bench.json").string(), bench.dump(2) + "\n");
        write_file_atomically((dir / "bench.md").string(), markdown);
    } catch (const std::exception& e) {
        err << "grade bench: " << e.what() << "\n";
        return exit_environment_error;
    }
    out << markdown << std::flush;  // before the line on err, should both go to one file
    err << "grade bench: written to " << (dir / "bench.md").string() << " and " << (dir / "bench.json").string()
        << "\n";
    return exit_success;
}

}  // namespace grading

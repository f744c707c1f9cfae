// GPU test of `grade bench`: runs it at one small size and checks what it printed and wrote. Exits
// 77 (CTest: skipped) with the reason printed when there is no GPU.
//
//   check_bench --grade GRADE --work DIR
//
// grade bench must exit 0 having printed the Markdown table it wrote to DIR/bench.md; DIR/bench.json
// must name the device and hold one verified row for each of the ten exercises, with positive
// times and bandwidths, CUB's column exactly for the scans and reductions, and fractions in a
// plausible range: at most 2 of the copy's bandwidth (at 1M elements a few microseconds of launch
// and copy-engine overhead weigh on the copy as much as on a fused kernel, and a reduction only
// reads: an H200 measured conv1d at 1.31), at most 5 of CUB's (the section scans' CUB ceiling
// scans the whole array). Grading's own bound, 1.25 of the copy, applies at 10M elements.
#include <cuda_runtime.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/exercise.hpp"
#include "harness/process.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t size = 1'000'000;
constexpr double max_fraction_of_copy = 2.0, max_fraction_of_cub = 5;

int failures = 0;

void expect(bool ok, const std::string& what)
{
    std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
    failures += ok ? 0 : 1;
}

std::string read(const fs::path& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool positive(const json& object, const char* key)
{
    return object.is_object() && object.contains(key) && object.at(key).is_number() &&
           std::isfinite(object.at(key).get<double>()) && object.at(key).get<double>() > 0;
}

bool in_range(const json& value, double most)
{
    return value.is_number() && value.get<double>() > 0 && value.get<double>() <= most;
}

void check_row(const json& row)
{
    const std::string name = row.at("exercise");
    const harness::Exercise& e = *harness::find_exercise(name);
    const bool has_cub = e.family != harness::Family::conv1d && e.family != harness::Family::conv2d;
    expect(row.at("size") == size, name + ": measured at size " + std::to_string(size));
    expect(row.value("verified", false),
           name + ": its output was verified against " + row.value("verified_against", std::string("nothing")));
    expect(positive(row.at("reference"), "median_ms") && positive(row.at("reference"), "gb_s"),
           name + ": positive time and bandwidth (" + row.at("reference").dump() + ")");
    expect(positive(row.at("copy"), "median_ms") && positive(row.at("copy"), "gb_s"),
           name + ": the copy's positive time and bandwidth (" + row.at("copy").dump() + ")");
    expect(in_range(row.at("fraction_of_copy"), max_fraction_of_copy),
           name + ": fraction of the copy in (0, 2] (" + row.at("fraction_of_copy").dump() + ")");
    if (has_cub) {
        expect(positive(row.at("cub"), "median_ms") && positive(row.at("cub"), "gb_s"),
               name + ": CUB's positive time and bandwidth (" + row.at("cub").dump() + ")");
        expect(in_range(row.at("fraction_of_cub"), max_fraction_of_cub),
               name + ": fraction of CUB in (0, 5] (" + row.at("fraction_of_cub").dump() + ")");
    } else {
        expect(row.at("cub").is_null() && row.at("fraction_of_cub").is_null(), name + ": no CUB column");
    }
    if (e.family == harness::Family::conv2d)
        expect(row.at("shape") == nlohmann::json{{"height", 1000}, {"width", 1000}, {"mask_width", 5}},
               name + ": a 1000 x 1000 image, a 5 x 5 mask (" + row.at("shape").dump() + ")");
}

}  // namespace

int main(int argc, char** argv)
{
    std::string grade, work;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--grade")
            grade = argv[i + 1];
        else if (flag == "--work")
            work = argv[i + 1];
    }
    int devices = 0;
    const cudaError_t probe = cudaGetDeviceCount(&devices);
    if (probe != cudaSuccess || devices == 0) {
        std::cout << "SKIPPED: this test needs a CUDA GPU and there is none here ("
                  << (probe != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(probe) +
                                                 ", no usable NVIDIA driver or GPU"
                                           : std::string("no devices"))
                  << ")\n";
        return 77;
    }
    fs::remove_all(work);
    fs::create_directories(work);

    std::cout << "grade bench --sizes " << size << "\n" << std::flush;
    const auto run = harness::run_command({grade, "bench", "--sizes", std::to_string(size), "--output-dir", work},
                                          std::chrono::minutes(10), 1 << 20);
    std::cout << run.output << "\n";
    expect(run.status.ok(), "grade bench exited with code 0 (" + run.status.describe() + ")");
    const std::string markdown = read(fs::path(work) / "bench.md");
    expect(!markdown.empty() && run.output.find(markdown) != std::string::npos,
           "it printed the table it wrote to bench.md");

    json bench;
    try {
        bench = json::parse(read(fs::path(work) / "bench.json"));
    } catch (const std::exception& e) {
        expect(false, std::string("bench.json is JSON: ") + e.what());
        return 1;
    }
    const json& device = bench.at("device");
    expect(device.at("name").is_string() && device.at("uuid").get<std::string>().rfind("GPU-", 0) == 0,
           "the device's name and UUID: " + device.at("name").dump() + ", " + device.at("uuid").dump());
    expect(positive(device, "copy_gb_s") && positive(device, "sm_count") && positive(device, "driver_version") &&
               positive(device, "runtime_version"),
           "the device's copy bandwidth, SM count and CUDA versions");

    std::set<std::string> measured;
    for (const json& row : bench.at("rows")) {
        measured.insert(row.at("exercise").get<std::string>());
        check_row(row);
    }
    expect(bench.at("rows").size() == harness::all_exercises().size(), "one row per exercise");
    for (const auto& e : harness::all_exercises()) {
        expect(measured.count(e.name) == 1, e.name + " is measured");
        expect(markdown.find("| `" + e.name + "`") != std::string::npos, e.name + " has a row in the table");
    }

    std::cout << (failures == 0 ? "PASS" : "FAIL: " + std::to_string(failures) + " checks failed") << "\n";
    return failures == 0 ? 0 : 1;
}

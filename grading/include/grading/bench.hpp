// `grade bench`: the table instructors put on their slides, each hidden reference beside its
// ceilings on the GPU at hand. The reference runner measures (harness/runner/bench.hpp: the
// reference, CUB's version of the operation, the device-to-device copy, at each size); this side
// holds the GPU's lock, starts it, checks what it says, and writes bench.json and bench.md. The
// formatting is apart from the running, so that the tests can format any JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/command_line.hpp"
#include "grading/preflight.hpp"

namespace grading {

// The reference runner's command line for `command`.
std::vector<std::string> bench_runner_command(const BenchCommand& command);

// Throws std::runtime_error naming the first thing in the reference runner's JSON that is missing
// or implausible: the device, and one verified row with positive times and bandwidths for every
// exercise and size asked for.
void check_bench_json(const nlohmann::json& bench, const BenchCommand& command);

// The Markdown table of a checked bench JSON, with the device above it and the method below.
std::string bench_markdown(const nlohmann::json& bench);

// Runs `grade bench`: checks the machine (`probe` asks the CUDA runtime, device_probe.hpp), holds
// the GPU's lock exclusively while the reference runner measures, writes bench.json and bench.md
// in the output directory and prints the table on `out`; progress and problems go to `err`.
// Returns the exit code (command_line.hpp).
int run_bench(const BenchCommand& command, const DeviceProbe& probe, std::ostream& out, std::ostream& err);

}  // namespace grading

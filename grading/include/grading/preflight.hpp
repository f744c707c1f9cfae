// What grade checks before it builds or runs anything: that this machine can grade at all. A
// machine that cannot (no GPU, no compiler, an incomplete install, nowhere to write the results)
// gets one message per problem, each saying what to do, and exit code 3; without these checks
// every exercise would be built, run and scored zero for a fault that is not the student's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "grading/build.hpp"
#include "grading/command_line.hpp"

namespace grading {

// The GPU the runners will use (device 0, as every runner does).
struct DeviceState {
    std::string error;         // non-empty: no usable GPU, and why, e.g. "cudaErrorInsufficientDriver (...)"
    std::string name;          // e.g. "NVIDIA H100 80GB HBM3"
    int major = 0, minor = 0;  // compute capability
    std::string uuid;          // e.g. "GPU-5e3a...": names the GPU's lock (harness/gpu_lock.hpp)
    std::string pci_bus_id;    // e.g. "0000:1B:00.0": finds its /dev/nvidiaN (harness::gpu_device_node)
};
using DeviceProbe = std::function<DeviceState()>;

// A file in a toolchain's root (nvcc's ../) that describes the device its runners stand in for:
// {"name": "...", "compute_capability": "9.0", "uuid": "..." (optional)} or {"error": "..."}. Only the tests' fake toolchain
// (tests/fake_toolchain) has one; see check_device.
constexpr const char* fake_device_file = "grader-fake-device.json";

// Every problem found, in the order a person would fix them; empty: grading can start. `probe`
// asks the CUDA runtime (device_probe.hpp) in grade, anything in the tests.
std::vector<std::string> preflight(const GradeCommand& command, const DeviceProbe& probe);

// The GPU the runners will use: the fake toolchain's device file where the toolchain has one,
// else `probe`'s answer.
DeviceState grading_device(const Toolchain& toolchain, const DeviceProbe& probe);

// ---- The single checks, for the tests: each returns empty when all is well ----

// The compiler exists, is executable, answers --version, and can build for the architecture.
std::string check_compiler(const Toolchain& toolchain);
// The runner object that every submission is linked with, and the reference runner.
std::string check_runner_object(const std::string& path);
std::string check_reference_runner(const std::string& path);
// `path` (given with `option`) can be written: its directory exists and takes a new file.
std::string check_output_file(const std::string& option, const std::string& path);
// The work directory exists or can be created.
std::string check_work_dir(const std::string& path);
// There is a GPU and it can run code built for the toolchain's architecture.
std::string check_device(const Toolchain& toolchain, const DeviceProbe& probe);
// Code nvcc builds with -arch=sm_<arch> runs on `device`.
std::string check_arch_runs_on(const std::string& arch, const DeviceState& device);

}  // namespace grading

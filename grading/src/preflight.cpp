#include "grading/preflight.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "formats/text.hpp"
#include "harness/process.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

constexpr std::chrono::seconds compiler_answer_limit{60};

// The sm_NN codes `nvcc --list-gpu-code` names, in its order; empty when this nvcc cannot list
// them (older than CUDA 11), and then any --arch is left for the compiles to judge.
std::vector<std::string> gpu_codes(const std::string& nvcc)
{
    std::vector<std::string> codes;
    const auto run = harness::run_command({nvcc, "--list-gpu-code"}, compiler_answer_limit);
    if (!run.status.ok()) return codes;
    std::istringstream words(run.output);
    for (std::string word; words >> word;)
        if (std::regex_match(word, std::regex("sm_[0-9]+[a-z]?"))) codes.push_back(word);
    return codes;
}

std::string space_separated(const std::vector<std::string>& words)
{
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    return text;
}

std::string capability(int value)
{
    return std::to_string(value / 10) + "." + std::to_string(value % 10);
}

// The device a fake toolchain's runners stand in for (see check_device).
DeviceState fake_device(const fs::path& file)
{
    DeviceState device;
    try {
        const nlohmann::json j = nlohmann::json::parse(std::ifstream(file));
        device.error = j.value("error", std::string());
        device.name = j.value("name", std::string("a fake device"));
        device.uuid = j.value("uuid", std::string());
        std::smatch cc;
        const std::string text = j.value("compute_capability", std::string());
        if (device.error.empty() && std::regex_match(text, cc, std::regex("([0-9]+)\\.([0-9])"))) {
            device.major = std::stoi(cc[1]);
            device.minor = std::stoi(cc[2]);
        } else if (device.error.empty()) {
            device.error = file.string() + " gives no compute_capability like \"9.0\"";
        }
    } catch (const nlohmann::json::exception& e) {
        device.error = file.string() + " is not valid: " + e.what();
    }
    return device;
}

}  // namespace

std::string check_compiler(const Toolchain& toolchain)
{
    const std::string& nvcc = toolchain.nvcc;
    const std::string fix = "\n  (pass --nvcc with the path of the CUDA Toolkit's nvcc, e.g. /usr/local/cuda/bin/nvcc)";
    const bool named_by_path = nvcc.find('/') != std::string::npos;
    if (toolchain_root(nvcc).empty())
        return "the compiler " + nvcc + (named_by_path ? " does not exist" : " is not on the PATH") + fix;
    if (named_by_path && ::access(nvcc.c_str(), X_OK) != 0)
        return "the compiler " + nvcc + " cannot be run: " + std::strerror(errno) + fix;
    try {
        const auto version = harness::run_command({nvcc, "--version"}, compiler_answer_limit);
        if (!version.status.ok())
            return "the compiler " + nvcc + " does not work: `" + nvcc + " --version` ended with " +
                   version.status.describe() + (version.output.empty() ? "" : ": " + formats::last_line(version.output)) + fix;
        const std::vector<std::string> codes = gpu_codes(nvcc);
        const std::string code = "sm_" + std::regex_replace(toolchain.arch, std::regex("[a-z]$"), "");
        if (!codes.empty() && std::find(codes.begin(), codes.end(), code) == codes.end())
            return "the compiler " + nvcc + " cannot build for " + code + " (--arch " + toolchain.arch +
                   "); it builds for " + space_separated(codes) + "\n  (pass --arch with the digits of one of them)";
    } catch (const std::exception& e) {
        return "the compiler " + nvcc + " could not be started: " + e.what() + fix;
    }
    return {};
}

std::string check_runner_object(const std::string& path)
{
    std::error_code ec;
    if (fs::is_regular_file(path, ec) && ::access(path.c_str(), R_OK) == 0) return {};
    return "the runner object " + path +
           " is missing: every submission is linked with it, and grade looks for it in lib/ beside its own bin/\n"
           "  (run the grade of a complete build, build/bin/grade or a link to it, not a copy; or rebuild with "
           "`cmake --build build`)";
}

std::string check_reference_runner(const std::string& path)
{
    std::error_code ec;
    if (path.empty() || (fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0)) return {};
    return "the reference runner " + path +
           " is missing or cannot be run: speed points are measured against it\n"
           "  (rebuild with `cmake --build build`, point --reference-runner at it, or pass --no-reference-timing "
           "to grade without speed points)";
}

std::string check_output_file(const std::string& option, const std::string& path)
{
    if (path.empty()) return {};
    std::error_code ec;
    const std::string where = option + " " + path;
    if (fs::is_directory(path, ec)) return where + " is a directory\n  (give the name of a file to write)";
    const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
    if (!fs::exists(dir, ec))
        return where + ": the directory " + dir.string() + " does not exist\n  (create it first, e.g. mkdir -p " +
               dir.string() + ", or write elsewhere)";
    if (!fs::is_directory(dir, ec)) return where + ": " + dir.string() + " is not a directory";
    // Creating a file is the only reliable test: permissions, read-only mounts, quotas and ACLs all
    // have their say, and access() knows only some of them.
    std::string probe = (dir / ".grade-write-check-XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0)
        return where + ": cannot create files in " + dir.string() + " (" + std::strerror(errno) +
               ")\n  (write to a directory grade may write in, or change its permissions)";
    ::close(fd);
    ::unlink(probe.c_str());
    return {};
}

std::string check_work_dir(const std::string& path)
{
    std::error_code ec;
    fs::path existing = fs::absolute(path, ec);
    while (!fs::exists(existing, ec) && existing.has_parent_path() && existing != existing.parent_path())
        existing = existing.parent_path();
    if (!fs::is_directory(existing, ec))
        return "--work-dir " + path + ": " + existing.string() + " is not a directory\n  (choose another --work-dir)";
    if (::access(existing.c_str(), W_OK | X_OK) != 0)
        return "--work-dir " + path + ": cannot create files in " + existing.string() + " (" + std::strerror(errno) +
               ")\n  (choose another --work-dir)";
    return {};
}

std::string check_arch_runs_on(const std::string& arch, const DeviceState& device)
{
    std::smatch parts;
    if (!std::regex_match(arch, parts, std::regex("([0-9]+)([a-z]?)"))) return "--arch " + arch + " is not digits";
    const int built = std::stoi(parts[1]);
    const std::string suffix = parts[2];
    const int gpu = device.major * 10 + device.minor;
    const std::string gpu_text = device.name + " (compute capability " + capability(gpu) + ")";
    const std::string fix = "\n  (pass --arch " + std::to_string(gpu) + ", the GPU's own)";
    // -arch=sm_NN embeds the machine code for NN and its PTX, which the driver compiles for any
    // later GPU; "a" (90a: architecture-specific features) runs only on that very capability, and
    // "f" (100f: family) on that major version with an equal or higher minor.
    const bool runs = suffix == "a"   ? built == gpu
                      : suffix == "f" ? built / 10 == device.major && built % 10 <= device.minor
                                      : built <= gpu;
    if (runs) return {};
    return "--arch " + arch + " builds code for compute capability " + capability(built) +
           (suffix.empty() ? "" : suffix) + " that this GPU, " + gpu_text + ", cannot run" + fix;
}

DeviceState grading_device(const Toolchain& toolchain, const DeviceProbe& probe)
{
    // The tests' fake toolchain builds runners that compute on the CPU, so grading with it needs no
    // GPU; its root says which device its runners stand in for (or that there is none), and that
    // answer replaces the CUDA query. This switch belongs to the toolchain, not to an environment
    // variable or an option: nothing a grading run sets can skip the query while the real nvcc
    // builds real runners, and no switch exists for students to find or for CI to leave on.
    const std::string root = toolchain_root(toolchain.nvcc);
    std::error_code ec;
    const bool fake = !root.empty() && fs::is_regular_file(fs::path(root) / fake_device_file, ec);
    return fake ? fake_device(fs::path(root) / fake_device_file) : probe();
}

std::string check_device(const Toolchain& toolchain, const DeviceProbe& probe)
{
    const DeviceState device = grading_device(toolchain, probe);
    if (!device.error.empty())
        return "no usable GPU: " + device.error +
               "\n  (grade runs every case on an NVIDIA GPU: run it on a machine with one, and a driver recent enough"
               "\n  for this CUDA Toolkit; nvidia-smi should list the GPU. `grade --list` needs no GPU.)";
    return check_arch_runs_on(toolchain.arch, device);
}

std::vector<std::string> preflight(const GradeCommand& command, const DeviceProbe& probe)
{
    const GradeOptions& options = command.options;
    const std::vector<std::string> found = {
        check_compiler(options.environment.toolchain),
        check_runner_object(options.environment.toolchain.runner_object),
        check_reference_runner(options.environment.reference_runner),
        check_output_file("--output", command.output),
        check_output_file("--gradescope", command.formats.gradescope),
        check_output_file("--prairielearn", command.formats.prairielearn),
        check_output_file("--junit", command.formats.junit),
        check_output_file("--markdown", command.formats.markdown),
        check_work_dir(options.environment.work_dir),
        // --build-only runs nothing: a machine without a GPU (a TA's laptop, CI) can check the builds.
        options.request.build_only ? std::string() : check_device(options.environment.toolchain, probe),
    };
    std::vector<std::string> problems;
    for (const auto& problem : found)
        if (!problem.empty()) problems.push_back(problem);
    return problems;
}

}  // namespace grading

// `grade` refusing to grade, end to end: every problem of the command line, the rubric or the
// machine gets its exit code (2: usage, 3: this machine cannot grade) and a message that says what
// to do, before anything is built, and no results file is written. Machines with and without a GPU
// are both posed with the fake toolchain's device file (tests/fake_toolchain), the real CUDA query
// once with an architecture no GPU has.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "grading/preflight.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;
using grading::check_arch_runs_on;
using grading::DeviceState;

namespace {

// A directory of this test process's own, made afresh.
fs::path empty_submission_dir(const std::string& name)
{
    const fs::path dir = fs::temp_directory_path() / ("grader_errors_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir / "submission");
    return dir;
}

struct Refusal {
    int code = -1;
    std::string output;
};

// Runs grade on `dir`'s empty submission, results to dir/results.json unless `args` say otherwise,
// and checks that no results file appeared. `launcher` goes before the program (bwrap ... --).
Refusal grade_refusal(const fs::path& dir, std::vector<std::string> args, const std::string& program = GRADE_EXECUTABLE,
                      const std::vector<std::string>& launcher = {})
{
    std::vector<std::string> command = launcher;
    command.insert(command.end(),
                   {program, "--submission", (dir / "submission").string(), "--work-dir", (dir / "work").string()});
    if (std::find(args.begin(), args.end(), "--output") == args.end())
        command.insert(command.end(), {"--output", (dir / "results.json").string()});
    // Where bubblewrap cannot run, its refusal would stand beside the problem a test poses.
    std::string why;
    if (!harness::Sandbox::find(why)) command.push_back("--no-sandbox");
    command.insert(command.end(), args.begin(), args.end());
    const auto run = harness::run_command(command, std::chrono::seconds(120));
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    CHECK_FALSE(fs::exists(dir / "results.json"));
    CHECK_FALSE(fs::exists(dir / "work"));
    return {run.status.code, run.output};
}

bool has(const Refusal& r, const std::string& text)
{
    return r.output.find(text) != std::string::npos;
}

std::size_t count(const std::string& text, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// A copy of the fake nvcc alone, whose runners stand in for `device` (preflight.hpp's fake_device_file).
std::string fake_nvcc_posing_as(const fs::path& dir, const std::string& device)
{
    fs::create_directories(dir / "toolchain" / "bin");
    fs::copy_file(FAKE_NVCC, dir / "toolchain" / "bin" / "nvcc");
    std::ofstream(dir / "toolchain" / grading::fake_device_file) << device << "\n";
    return (dir / "toolchain" / "bin" / "nvcc").string();
}

fs::path write_file(const fs::path& path, const std::string& text)
{
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST_CASE("no GPU: one message naming the CUDA error, exit code 3, nothing graded")
{
    const fs::path dir = empty_submission_dir("no_gpu");
    const std::string nvcc = fake_nvcc_posing_as(
        dir,
        R"json({"error": "cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)"})json");
    const Refusal r = grade_refusal(dir, {"--nvcc", nvcc});
    CHECK(r.code == 3);
    CHECK(has(r, "grade: no usable GPU: cudaErrorInsufficientDriver"));
    CHECK(has(r, "nvidia-smi"));
    CHECK(count(r.output, "no usable GPU") == 1);
    CHECK(count(r.output, "\n") <= 6);  // the problem, what to do, "nothing was graded": no case lines
    CHECK_FALSE(has(r, "not_run"));
}

TEST_CASE("the CUDA runtime's own answer: no GPU here, or one that cannot run sm_999")
{
    const fs::path dir = empty_submission_dir("real_probe");
    const Refusal r = grade_refusal(dir, {"--arch", "999"});  // the compiler and device 0 this machine really has
    CHECK(r.code == 3);
    CHECK((has(r, "grade: no usable GPU: ") || has(r, "--arch 999 builds code for compute capability 99.9")));
    CHECK(count(r.output, "no usable GPU") <= 1);
    CHECK_FALSE(has(r, "not_run"));
}

TEST_CASE("a GPU too old for --arch is refused with the architecture it can run")
{
    const fs::path dir = empty_submission_dir("old_gpu");
    const std::string nvcc = fake_nvcc_posing_as(dir, R"({"name": "Fake H100", "compute_capability": "9.0"})");
    const Refusal r = grade_refusal(dir, {"--nvcc", nvcc, "--arch", "100", "--no-reference-timing"});
    CHECK(r.code == 3);
    CHECK(has(r,
              "--arch 100 builds code for compute capability 10.0 that this GPU, Fake H100 (compute capability "
              "9.0), cannot run"));
    CHECK(has(r, "pass --arch 90"));
}

TEST_CASE("which architectures run on which GPU")
{
    const DeviceState h100{"", "H100", 9, 0};
    CHECK(check_arch_runs_on("90", h100).empty());
    CHECK(check_arch_runs_on("80", h100).empty());  // its PTX is compiled for the newer GPU
    CHECK(check_arch_runs_on("90a", h100).empty());
    CHECK_FALSE(check_arch_runs_on("100", h100).empty());
    const DeviceState ada{"", "L4", 8, 9};
    CHECK_FALSE(check_arch_runs_on("90", ada).empty());
    CHECK_FALSE(check_arch_runs_on("86a", ada).empty());  // architecture-specific code: that capability only
    CHECK(check_arch_runs_on("86", ada).empty());
    const DeviceState b300{"", "B300", 10, 3};
    CHECK(check_arch_runs_on("100f", b300).empty());  // a family: the same major, any later minor
    CHECK_FALSE(check_arch_runs_on("100a", b300).empty());
    CHECK_FALSE(check_arch_runs_on("120f", b300).empty());
}

TEST_CASE("the compiler: missing, not executable, or not working")
{
    const fs::path dir = empty_submission_dir("nvcc");
    const Refusal missing = grade_refusal(dir, {"--nvcc", "/nonexistent/bin/nvcc"});
    CHECK(missing.code == 3);
    CHECK(has(missing, "grade: the compiler /nonexistent/bin/nvcc does not exist"));
    CHECK(has(missing, "pass --nvcc with the path of the CUDA Toolkit's nvcc"));
    CHECK(has(grade_refusal(dir, {"--nvcc", "no-such-nvcc-anywhere"}),
              "the compiler no-such-nvcc-anywhere is not on the PATH"));

    const fs::path plain = write_file(dir / "nvcc-plain", "not a program\n");
    const Refusal not_executable = grade_refusal(dir, {"--nvcc", plain.string()});
    CHECK(not_executable.code == 3);
    CHECK(has(not_executable, "grade: the compiler " + plain.string() + " cannot be run: Permission denied"));

    const fs::path broken =
        write_file(dir / "nvcc-broken", "#!/bin/sh\necho 'libcudart.so: cannot open' >&2\nexit 1\n");
    fs::permissions(broken, fs::perms::owner_all);
    const Refusal failing = grade_refusal(dir, {"--nvcc", broken.string()});
    CHECK(failing.code == 3);
    CHECK(has(failing, "does not work: `" + broken.string() + " --version` ended with exit code 1: libcudart.so"));
}

TEST_CASE("grade copied away from its lib/ says so; started from the PATH, it finds its lib/")
{
    const fs::path dir = empty_submission_dir("install");
    fs::create_directories(dir / "bin");
    fs::copy_file(GRADE_EXECUTABLE, dir / "bin" / "grade");
    const Refusal copied = grade_refusal(dir, {"--nvcc", FAKE_NVCC}, (dir / "bin" / "grade").string());
    CHECK(copied.code == 3);
    CHECK(has(copied, "the runner object " + (dir / "lib" / "grader_runner.o").string() + " is missing"));
    CHECK(has(copied, "the reference runner " + (dir / "bin" / "grader_reference_runner").string()));

    // Through the PATH, argv[0] is just "grade": only its output directory is wrong here.
    const std::string bin = fs::path(GRADE_EXECUTABLE).parent_path().string();
    const auto run = harness::run_command(
        {"/bin/sh", "-c",
         "PATH='" + bin + "':\"$PATH\" exec grade --no-sandbox --submission '" + (dir / "submission").string() +
             "' --nvcc '" + FAKE_NVCC + "' --output '" + (dir / "missing" / "results.json").string() + "'"},
        std::chrono::seconds(60));
    INFO(run.output);
    CHECK(run.status.code == 3);
    CHECK(run.output.find("--output") != std::string::npos);
    CHECK(run.output.find("runner object") == std::string::npos);
    CHECK(run.output.find("reference runner") == std::string::npos);
}

TEST_CASE("an output whose directory is missing, for results.json and for every other format")
{
    const fs::path dir = empty_submission_dir("outputs");
    const std::string missing = (dir / "missing" / "out").string();
    const Refusal results = grade_refusal(dir, {"--nvcc", FAKE_NVCC, "--output", missing + ".json"});
    CHECK(results.code == 3);
    CHECK(has(results,
              "grade: --output " + missing + ".json: the directory " + (dir / "missing").string() + " does not exist"));
    CHECK(has(results, "mkdir -p"));
    CHECK_FALSE(fs::exists(dir / "missing"));
    for (const std::string option : {"--gradescope", "--prairielearn", "--junit", "--markdown"}) {
        const Refusal format = grade_refusal(dir, {"--nvcc", FAKE_NVCC, option, missing});
        CHECK(format.code == 3);
        CHECK(has(format, "grade: " + option + " " + missing + ": the directory"));
    }
    CHECK(has(grade_refusal(dir, {"--nvcc", FAKE_NVCC, "--output", dir.string()}), "is a directory"));
}

TEST_CASE("a rubric that is missing or wrong: exit code 2 with the file, the field and the rule")
{
    const fs::path dir = empty_submission_dir("rubric");
    const Refusal missing = grade_refusal(dir, {"--nvcc", FAKE_NVCC, "--rubric", (dir / "nope.json").string()});
    CHECK(missing.code == 2);
    CHECK(has(missing, "--rubric: " + (dir / "nope.json").string() + ": no such file"));

    const struct {
        const char* text;
        const char* expected;
    } wrong[] = {
        {R"({"speed_point": 2})", "/speed_point: unknown key"},
        {R"({"correctness_points": -8})", "/correctness_points: -8 is not allowed; it must be a number, at least 0"},
        {R"({"speed_floor": 0.8, "speed_full": 0.8})", "/speed_floor: must be less than speed_full (0.8)"},
    };
    for (const auto& w : wrong) {
        const fs::path rubric = write_file(dir / "rubric.json", w.text);
        const Refusal r = grade_refusal(dir, {"--nvcc", FAKE_NVCC, "--rubric", rubric.string()});
        CHECK(r.code == 2);
        CHECK(has(r, "grade: --rubric: " + rubric.string() + ": "));
        CHECK(has(r, w.expected));
    }
}

TEST_CASE("a rubric grade may not read: exit code 3, also where the tests run as root")
{
    const fs::path dir = empty_submission_dir("closed_rubric");
    const fs::path rubric = write_file(dir / "closed.json", "{}");
    fs::permissions(rubric, fs::perms::none);
    // Root reads every file. As uid 1000 of a user namespace, where root's files are its own and it
    // holds no capability, the mode bits count again (test_command_line poses it in-process).
    std::vector<std::string> launcher;
    if (::geteuid() == 0) {
        std::string why;
        if (!harness::Sandbox::find(why)) {
            MESSAGE("skipped: running as root, and bubblewrap cannot make the user namespace that drops it: " << why);
            return;
        }
        launcher = {"bwrap", "--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL", "--bind", "/", "/",
                    "--dev", "/dev", "--proc", "/proc", "--"};
    }
    const Refusal r =
        grade_refusal(dir, {"--nvcc", FAKE_NVCC, "--rubric", rubric.string()}, GRADE_EXECUTABLE, launcher);
    CHECK(r.code == 3);
    CHECK(has(r, "grade: --rubric " + rubric.string() + ": cannot read it: Permission denied"));
    CHECK(has(r, "make the file readable to the user grade runs as"));
}

TEST_CASE("--list needs neither a GPU nor a compiler")
{
    const auto run = harness::run_command(
        {GRADE_EXECUTABLE, "--list", "--exercise", "scan_kogge_stone", "--nvcc", "/nonexistent/nvcc"},
        std::chrono::seconds(30));
    CHECK(run.status.ok());
    CHECK(run.output.find("n=1/int") != std::string::npos);
}

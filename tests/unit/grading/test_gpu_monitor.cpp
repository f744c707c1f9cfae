// The grader's view of the GPU through NVML (grading/gpu_monitor.hpp): which processes are its own,
// and a monitor that cannot watch says why instead of failing. Runs with or without a driver.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <vector>

#include "grading/gpu_monitor.hpp"

TEST_CASE("the grader's own processes are those it started, directly or not")
{
    const int self = static_cast<int>(getpid());
    CHECK(grading::descends_from(self, self));
    CHECK_FALSE(grading::descends_from(1, self));
    CHECK_FALSE(grading::descends_from(999'999'999, self));  // no such process

    // A grandchild, as a runner inside bubblewrap is.
    int ready[2], release[2];
    REQUIRE(pipe(ready) == 0);
    REQUIRE(pipe(release) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const pid_t grandchild = fork();
        if (grandchild == 0) {
            const int pid = static_cast<int>(getpid());
            if (write(ready[1], &pid, sizeof pid) != sizeof pid) _exit(1);
            char byte;
            if (read(release[0], &byte, 1) < 0) _exit(1);
            _exit(0);
        }
        waitpid(grandchild, nullptr, 0);
        _exit(0);
    }
    int grandchild = 0;
    REQUIRE(read(ready[0], &grandchild, sizeof grandchild) == sizeof grandchild);
    CHECK(grading::descends_from(grandchild, self));
    CHECK(grading::descends_from(grandchild, static_cast<int>(child)));
    CHECK_FALSE(grading::descends_from(self, grandchild));
    const char byte = 1;
    REQUIRE(write(release[1], &byte, 1) == 1);
    waitpid(child, nullptr, 0);
}

TEST_CASE("a monitor that cannot watch the GPU says why, and reports nothing")
{
    // No GPU has this UUID: without a driver NVML does not load, with one it does not know it.
    grading::GpuMonitor monitor("GPU-00000000-0000-0000-0000-000000000000");
    CHECK_FALSE(monitor.available());
    CHECK_FALSE(monitor.why_unavailable().empty());
    CHECK(monitor.intruders().empty());
    CHECK(monitor.clocks().empty());
    CHECK_FALSE(monitor.host_link_bytes().has_value());
}

TEST_CASE("a 32-bit hardware counter read often: its total across wraps")
{
    grading::WrappingCounter c;
    c.read(4'000'000'000u);
    CHECK(c.total == 0);  // the first reading is the origin
    c.read(4'294'967'000u);
    CHECK(c.total == 294'967'000u);
    c.read(1'000u);  // wrapped: 296 to the top, then 1000
    CHECK(c.total == 294'967'000u + 296u + 1'000u);
    c.read(1'000u);
    CHECK(c.total == 294'967'000u + 296u + 1'000u);
    grading::WrappingCounter wide;
    wide.bits = 64;
    wide.read(10);
    wide.read(5'000'000'010ull);
    CHECK(wide.total == 5'000'000'000ull);
}

TEST_CASE("company on the GPU: any process of no grading; another grading's only when NVML saw it busy during the timing")
{
    using grading::GpuProcess;
    const std::vector<GpuProcess> processes = {
        {101, "grade", true, false},               // this grading's runner
        {202, "grader_runner", false, true},       // another student's runner in the same class
        {303, "python3", false, false},            // a process of no grading
    };
    const std::set<int> none, neighbour_busy = {202};
    // Before a timing: the other grading takes the GPU lock for its GPU work, so its idle context is no company.
    CHECK(grading::company(processes, false, &none) == "pid 303 (python3)");
    // After it: idle all along, still none; busy during it, company.
    CHECK(grading::company(processes, true, &none) == "pid 303 (python3)");
    CHECK(grading::company(processes, true, &neighbour_busy) ==
          "pid 202 (grader_runner) of another grading, busy, pid 303 (python3)");
    // A driver that keeps no per-process samples: every other grading's process counts, as before.
    CHECK(grading::company(processes, true, nullptr).find("pid 202") != std::string::npos);
    CHECK(grading::company({{101, "grade", true, false}}, true, nullptr).empty());
}

TEST_CASE("the stopped runner's processes count where NVML saw them busy during the anchor, and only they")
{
    using grading::GpuProcess;
    GpuProcess runner{505, "grader_runner", true, false};
    runner.runner = true;
    const std::vector<GpuProcess> processes = {
        {101, "grade", true, false}, runner, {202, "grader_runner", false, true}, {303, "python3", false, false}};
    const std::set<int> none, runner_busy = {505, 202};
    CHECK(grading::busy_runner(processes, &none).empty());
    CHECK(grading::busy_runner(processes, &runner_busy) == "pid 505 (grader_runner) of the stopped runner, busy");
    CHECK(grading::busy_runner(processes, nullptr) == "pid 505 (grader_runner) of the stopped runner, busy");
    // Company is as before: this grading's runner, stopped or not, is never company.
    CHECK(grading::company(processes, true, &runner_busy) ==
          "pid 202 (grader_runner) of another grading, busy, pid 303 (python3)");
}

TEST_CASE("a process below another grade of the same executable belongs to another grading")
{
    const int self = static_cast<int>(getpid());
    std::error_code error;
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe", error).string();
    REQUIRE_FALSE(error);
    // This process itself is not "another" grading, and init runs no test program.
    CHECK_FALSE(grading::below_executable(self, exe, self));
    CHECK_FALSE(grading::below_executable(1, exe, self));
    // A child of this program runs this program (as another grade of the same executable would).
    int release[2];
    REQUIRE(pipe(release) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        char byte;
        if (read(release[0], &byte, 1) < 0) _exit(1);
        _exit(0);
    }
    CHECK(grading::below_executable(static_cast<int>(child), exe, self));
    CHECK_FALSE(grading::below_executable(static_cast<int>(child), "/no/such/grade", self));
    const char byte = 1;
    REQUIRE(write(release[1], &byte, 1) == 1);
    waitpid(child, nullptr, 0);
}

// Child processes: exit codes, crashes, hangs (the whole group dies), output capture.
// The fixture programs live in GRADER_FIXTURE_DIR (tests/fixtures).
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "harness/process.hpp"

using namespace std::chrono_literals;
using harness::Child;
using harness::ExitStatus;
using Clock = std::chrono::steady_clock;

namespace {

std::string fixture(const std::string& name) { return std::string(GRADER_FIXTURE_DIR) + "/" + name; }

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// A fresh temporary file name, removed at the end of the test.
struct TempFile {
    std::string path;
    TempFile() {
        std::string pattern = "/tmp/harness-test-XXXXXX";
        int fd = ::mkstemp(pattern.data());
        REQUIRE(fd >= 0);
        ::close(fd);
        path = pattern;
    }
    ~TempFile() { ::unlink(path.c_str()); }
    std::string text() const { return harness::read_file_tail(path, 1 << 20); }
};

// Dead means gone from /proc, or a zombie waiting for whoever inherited it to reap it.
bool is_dead(int pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    auto after_name = line.rfind(')');
    return after_name != std::string::npos && after_name + 2 < line.size() &&
           (line[after_name + 2] == 'Z' || line[after_name + 2] == 'X');
}

bool dies_within(int pid, std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (!is_dead(pid)) {
        if (Clock::now() > deadline) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

// Waits until fixture_hang has printed its grandchild's pid; returns it (0 if it never did).
int grandchild_pid(const TempFile& output) {
    auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline) {
        std::string text = output.text();
        auto at = text.find("grandchild ");
        if (at != std::string::npos && text.find('\n', at) != std::string::npos)
            return std::atoi(text.c_str() + at + 11);
        std::this_thread::sleep_for(5ms);
    }
    return 0;
}

ExitStatus run_fixture(const std::string& name, std::vector<std::string> args = {}) {
    harness::SpawnOptions options;
    options.argv = {fixture(name)};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    return Child::spawn(options).wait_until(Clock::now() + 10s);
}

}  // namespace

TEST_CASE("a normal exit reports the exit code") {
    ExitStatus failed = run_fixture("fixture_exit_code", {"3"});
    CHECK(failed.kind == ExitStatus::Kind::exited);
    CHECK(failed.code == 3);
    CHECK_FALSE(failed.ok());

    ExitStatus passed = run_fixture("fixture_exit_code", {"0"});
    CHECK(passed.kind == ExitStatus::Kind::exited);
    CHECK(passed.ok());
}

TEST_CASE("a crash is reported with its signal, and its output is kept") {
    TempFile output;
    harness::SpawnOptions options;
    options.argv = {fixture("fixture_crash")};
    options.output_file = output.path;
    ExitStatus status = Child::spawn(options).wait_until(Clock::now() + 10s);
    CHECK(status.kind == ExitStatus::Kind::signaled);
    CHECK(status.signal == SIGSEGV);
    CHECK(output.text().find("about to write through a null pointer") != std::string::npos);

    ExitStatus aborted = run_fixture("fixture_abort");
    CHECK(aborted.kind == ExitStatus::Kind::signaled);
    CHECK(aborted.signal == SIGABRT);
}

TEST_CASE("a child that prints without end is stopped by the file-size limit") {
    TempFile output;
    harness::SpawnOptions options;
    options.argv = {fixture("fixture_flood")};
    options.output_file = output.path;
    options.max_file_bytes = 1 << 20;
    ExitStatus status = Child::spawn(options).wait_until(Clock::now() + 20s);
    CHECK(status.kind == ExitStatus::Kind::signaled);
    CHECK(status.signal == SIGXFSZ);
    CHECK(status.describe().find("SIGXFSZ") != std::string::npos);
    CHECK(output.text().size() <= (1u << 20));
    CHECK(output.text().find("debug line 0: still going") != std::string::npos);
}

TEST_CASE("a hang is killed at the deadline, grandchildren included") {
    TempFile output;
    harness::SpawnOptions options;
    options.argv = {fixture("fixture_hang")};
    options.output_file = output.path;
    Child child = Child::spawn(options);
    int grandchild = grandchild_pid(output);
    REQUIRE(grandchild > 0);

    auto start = Clock::now();
    ExitStatus status = child.wait_until(start + 300ms);
    double waited = seconds_since(start);
    CHECK(status.kind == ExitStatus::Kind::timed_out);
    CHECK(status.signal == SIGKILL);
    CHECK(waited >= 0.29);
    CHECK(waited < 3.0);
    CHECK(dies_within(grandchild, 2s));
    CHECK(is_dead(child.pid()));
    CHECK(child.wait_until(Clock::now()).kind == ExitStatus::Kind::timed_out);   // remembered
}

TEST_CASE("kill_and_reap and the destructor end the whole group") {
    int grandchild = 0;
    int pid = 0;
    {
        TempFile output;
        harness::SpawnOptions options;
        options.argv = {fixture("fixture_hang")};
        options.output_file = output.path;
        Child child = Child::spawn(options);
        pid = child.pid();
        grandchild = grandchild_pid(output);
        REQUIRE(grandchild > 0);
        Child moved = std::move(child);   // the moved-from child must not kill anything
        CHECK(moved.pid() == pid);
        CHECK_FALSE(is_dead(pid));
    }
    CHECK(is_dead(pid));
    CHECK(dies_within(grandchild, 2s));

    harness::SpawnOptions options;
    options.argv = {fixture("fixture_hang")};
    Child child = Child::spawn(options);
    ExitStatus status = child.kill_and_reap();
    CHECK(status.kind == ExitStatus::Kind::timed_out);
    CHECK(status.signal == SIGKILL);
    CHECK(is_dead(child.pid()));
}

TEST_CASE("a program that cannot start is reported as failed_to_start") {
    harness::SpawnOptions options;
    options.argv = {"/nonexistent/grader-test-program"};
    ExitStatus missing = Child::spawn(options).wait_until(Clock::now() + 10s);
    CHECK(missing.kind == ExitStatus::Kind::failed_to_start);
    CHECK(missing.error.find("No such file") != std::string::npos);
    CHECK(missing.describe().rfind("failed to start: ", 0) == 0);

    options.argv = {"grader-test-program-not-on-path"};
    CHECK(Child::spawn(options).kill_and_reap().kind == ExitStatus::Kind::failed_to_start);

    options.argv = {fixture("fixture_exit_code")};
    options.working_dir = "/nonexistent/grader-test-dir";
    ExitStatus bad_dir = Child::spawn(options).wait_until(Clock::now() + 10s);
    CHECK(bad_dir.kind == ExitStatus::Kind::failed_to_start);
    CHECK(bad_dir.error.find("grader-test-dir") != std::string::npos);
}

TEST_CASE("environment, working directory and stdin of the child") {
    ::setenv("GRADER_TEST_VALUE", "old", 1);
    ::setenv("GRADER_CHANNEL_FD", "99", 1);   // stale, must not reach a child without a channel
    TempFile output;
    harness::SpawnOptions options;
    options.argv = {"sh", "-c", "echo \"$GRADER_TEST_VALUE\"; pwd; cat; echo \"${GRADER_CHANNEL_FD:-none}\""};
    options.extra_env = {"GRADER_TEST_VALUE=new"};
    options.working_dir = "/";
    options.output_file = output.path;
    ExitStatus status = Child::spawn(options).wait_until(Clock::now() + 10s);
    ::unsetenv("GRADER_TEST_VALUE");
    ::unsetenv("GRADER_CHANNEL_FD");
    CHECK(status.ok());
    CHECK(output.text() == "new\n/\nnone\n");   // cat read /dev/null: nothing
}

TEST_CASE("run_command keeps the end of the output") {
    auto result = harness::run_command(
        {"sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done; echo oops >&2"},
        10s, 100);
    CHECK(result.status.ok());
    CHECK(result.output.size() == 100);
    const std::string ending = "line1999\noops\n";
    CHECK(result.output.compare(result.output.size() - ending.size(), ending.size(), ending) == 0);
    CHECK(result.seconds > 0);
    CHECK(result.seconds < 10);

    auto missing = harness::run_command({"/nonexistent/grader-test-program"}, 10s);
    CHECK(missing.status.kind == ExitStatus::Kind::failed_to_start);
}

TEST_CASE("run_command times out") {
    auto result = harness::run_command({fixture("fixture_hang")}, 300ms);
    CHECK(result.status.kind == ExitStatus::Kind::timed_out);
    CHECK(result.seconds >= 0.29);
    CHECK(result.seconds < 3.0);
}

TEST_CASE("describe() says how a child ended") {
    ExitStatus status;
    status.kind = ExitStatus::Kind::exited;
    status.code = 3;
    CHECK(status.describe() == "exit code 3");

    status.kind = ExitStatus::Kind::signaled;
    status.signal = SIGSEGV;
    CHECK(status.describe() == "killed by signal 11 (SIGSEGV)");
    status.signal = SIGABRT;
    CHECK(status.describe() == "killed by signal 6 (SIGABRT)");
    status.signal = SIGKILL;
    CHECK(status.describe() == "killed by signal 9 (SIGKILL)");
    status.signal = 40;
    CHECK(status.describe() == "killed by signal 40");

    status.kind = ExitStatus::Kind::timed_out;
    CHECK(status.describe() == "timed out");

    status.kind = ExitStatus::Kind::failed_to_start;
    status.error = "cannot execute 'x': No such file or directory";
    CHECK(status.describe() == "failed to start: cannot execute 'x': No such file or directory");
}

TEST_CASE("read_file_tail") {
    TempFile file;
    std::ofstream(file.path) << "0123456789";
    CHECK(harness::read_file_tail(file.path, 4) == "6789");
    CHECK(harness::read_file_tail(file.path, 100) == "0123456789");
    CHECK(harness::read_file_tail(file.path, 0).empty());
    CHECK(harness::read_file_tail("/nonexistent/grader-test-file", 10).empty());
}

// The bubblewrap sandbox: what a program inside can see, reach and do, and that nothing it starts
// outlives it. The programs are tests/fixtures (GRADER_FIXTURE_DIR), bound into the sandbox.
//
// Without bubblewrap, or where it cannot create namespaces, main() prints why and exits 77: CTest
// reports the test as skipped, never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/cgroup.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;
using harness::Child;
using harness::ExitStatus;
using harness::SandboxPolicy;
using harness::SpawnOptions;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

const harness::Sandbox* sandbox = nullptr;  // set by main

constexpr const char* probe = "fixture_sandbox_probe";

using test_support::fixture;

// A fresh directory only its owner may enter (0700, like /root), removed with what it holds.
struct TempDir {
    std::string path;
    TempDir()
    {
        std::string pattern = "/tmp/harness-sandbox-test-XXXXXX";
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir()
    {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

void write_text(const std::string& path, const std::string& text)
{
    std::ofstream(path) << text;
}

SandboxPolicy base_policy()
{
    SandboxPolicy policy;
    policy.env = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LC_ALL=C"};
    policy.tmp_bytes = 16 << 20;
    return policy;
}

// The spawn options that run fixture `name` with `args` in the sandbox, bound at /grader/NAME.
// `in`: another grading's sandbox (null: the test's own).
SpawnOptions sandboxed(const std::string& name, const std::vector<std::string>& args, SandboxPolicy policy,
                       const std::string& output_file, bool channel = false, const harness::Sandbox* in = nullptr)
{
    SpawnOptions inner;
    inner.argv = {"/grader/" + name};
    inner.argv.insert(inner.argv.end(), args.begin(), args.end());
    inner.output_file = output_file;
    inner.create_channel = channel;
    policy.mounts.push_back({fixture(name), "/grader/" + name, false});
    return (in ? in : sandbox)->wrap(inner, policy);
}

struct Outcome {
    ExitStatus status;
    std::string output;
};

// Runs a fixture in the sandbox (`in`, else the test's own) to its end; returns how it ended and
// what it printed.
Outcome run(const std::string& name, const std::vector<std::string>& args, SandboxPolicy policy = base_policy(),
            const harness::Sandbox* in = nullptr)
{
    TempDir logs;
    const std::string log = logs.path + "/output.log";
    Child child = Child::spawn(sandboxed(name, args, std::move(policy), log, false, in));
    Outcome outcome;
    outcome.status = child.wait_until(Clock::now() + 60s);
    outcome.output = harness::read_file_tail(log, 1 << 20);
    return outcome;
}

Outcome run_probe(const std::vector<std::string>& args, SandboxPolicy policy = base_policy(),
                  const harness::Sandbox* in = nullptr)
{
    return run(probe, args, std::move(policy), in);
}

using test_support::contains;

std::vector<std::string> lines(const std::string& text)
{
    std::vector<std::string> result;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);) result.push_back(line);
    return result;
}

// Reads `fd` until `until` has arrived (empty: until end of file) or the deadline passes.
// `eof` says whether the stream ended: every copy of the write end is closed.
std::string read_channel(int fd, const std::string& until, Clock::time_point deadline, bool& eof)
{
    std::string text;
    eof = false;
    while (until.empty() || !contains(text, until)) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) break;
        pollfd watch{fd, POLLIN, 0};
        if (::poll(&watch, 1, static_cast<int>(left)) <= 0) continue;
        char buffer[256];
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got == 0) {
            eof = true;
            break;
        }
        if (got > 0) text.append(buffer, static_cast<std::size_t>(got));
    }
    return text;
}

// How many tasks (threads: what RLIMIT_NPROC counts) the real uid `uid` has on the host.
int tasks_of(uid_t uid)
{
    int count = 0;
    DIR* proc = ::opendir("/proc");
    while (const dirent* entry = proc ? ::readdir(proc) : nullptr) {
        std::ifstream status(std::string("/proc/") + entry->d_name + "/status");
        bool mine = false;
        for (std::string line; std::getline(status, line);) {
            if (line.rfind("Uid:", 0) == 0) mine = std::atoi(line.c_str() + 4) == static_cast<int>(uid);
            if (line.rfind("Threads:", 0) == 0 && mine) count += std::atoi(line.c_str() + 8);
        }
    }
    if (proc) ::closedir(proc);
    return count;
}

// True when the grader is root and bwrap runs as an unprivileged host uid (the grading's own).
bool runs_as_own_uid()
{
    return ::geteuid() == 0 && sandbox->host_uid() != 0;
}

}  // namespace

TEST_CASE("the program runs as uid 65534 with only its own descriptors")
{
    Outcome ids = run_probe({"ids"});
    REQUIRE(ids.status.ok());
    // No supplementary group but (at most) its own.
    CHECK((ids.output == "uid 65534 gid 65534 euid 65534 egid 65534 groups:\n" ||
           ids.output == "uid 65534 gid 65534 euid 65534 egid 65534 groups: 65534\n"));

    // Only stdio: no descriptor of the grader's, none bwrap or the staging of mounts used.
    Outcome fds = run_probe({"fds"});
    REQUIRE(fds.status.ok());
    CHECK(fds.output == "fds: 0 1 2\n");
}

TEST_CASE("host files that are not mounted cannot be seen")
{
    TempDir secret_dir;
    write_text(secret_dir.path + "/secret.txt", "the grader's secret");
    ::chmod((secret_dir.path + "/secret.txt").c_str(), 0644);

    for (const std::string& path : {secret_dir.path + "/secret.txt", std::string(GRADER_SOURCE_DIR) + "/README.md",
                                    fixture("fixture_crash"), std::string("/root/.bashrc")}) {
        CAPTURE(path);
        Outcome outcome = run_probe({"read", path});
        CHECK(outcome.status.kind == ExitStatus::Kind::exited);
        CHECK(outcome.status.code == 1);
        CHECK(contains(outcome.output, "read failed: ENOENT"));
    }
}

TEST_CASE("a source below a 0700 directory is bound read-only")
{
    TempDir private_dir;  // 0700, like a checkout under /root
    const std::string data = private_dir.path + "/data";
    fs::create_directory(data);
    ::chmod(data.c_str(), 0755);
    write_text(data + "/hello.txt", "hello from the grader");
    ::chmod((data + "/hello.txt").c_str(), 0644);

    SandboxPolicy policy = base_policy();
    policy.mounts = {{data, "/data", false}, {data + "/hello.txt", "/tmp/work/hello.txt", false}};
    Outcome read_dir = run_probe({"read", "/data/hello.txt"}, policy);
    CHECK(read_dir.status.ok());
    CHECK(read_dir.output == "read: hello from the grader\n");
    Outcome read_file = run_probe({"read", "/tmp/work/hello.txt"}, policy);
    CHECK(read_file.status.ok());
    CHECK(read_file.output == "read: hello from the grader\n");

    Outcome write = run_probe({"write", "/data/new.txt", "10"}, policy);
    CHECK(write.status.code == 1);
    CHECK(contains(write.output, "write failed: EROFS"));
    CHECK_FALSE(fs::exists(data + "/new.txt"));
    Outcome overwrite = run_probe({"write", "/data/hello.txt", "10"}, policy);
    CHECK(contains(overwrite.output, "write failed: EROFS"));
}

TEST_CASE("a writable mount is writable, /tmp is private and bounded")
{
    TempDir private_dir;
    const std::string work = private_dir.path + "/work";
    fs::create_directory(work);
    sandbox->make_writable(work);

    SandboxPolicy policy = base_policy();
    policy.mounts = {{work, "/work", true}};
    policy.working_dir = "/work";
    Outcome write = run_probe({"write", "result.bin", "1000"}, policy);
    CHECK(write.status.ok());
    CHECK(write.output == "write: ok\n");
    REQUIRE(fs::exists(work + "/result.bin"));
    CHECK(fs::file_size(work + "/result.bin") == 1000);
    struct stat info {};
    REQUIRE(::lstat((work + "/result.bin").c_str(), &info) == 0);
    // The program's files belong to the grading's host uid (uid 65534 inside).
    if (runs_as_own_uid()) CHECK(info.st_uid == sandbox->host_uid());

    policy.tmp_bytes = 1 << 20;
    Outcome small = run_probe({"write", "/tmp/small.bin", "100000"}, policy);
    CHECK(small.status.ok());
    Outcome full = run_probe({"write", "/tmp/fill.bin", std::to_string(4 << 20)}, policy);
    CHECK(full.status.code == 1);
    CHECK(contains(full.output, "write failed: ENOSPC"));

    // Nowhere else: the sandbox's own / and /dev are read-only (bwrap makes them unbounded tmpfs).
    for (const std::string& path : {"/file", "/dev/file", "/dev/shm/file", "/usr/file", "/etc/passwd"}) {
        CAPTURE(path);
        Outcome elsewhere = run_probe({"write", path, "10"}, policy);
        CHECK(elsewhere.status.code == 1);
        CHECK(
            (contains(elsewhere.output, "write failed: EROFS") || contains(elsewhere.output, "write failed: EACCES")));
    }
    CHECK(run_probe({"write", "/dev/null", "10"}, policy).status.ok());

    // A policy's shm_bytes (a compute-sanitizer run): /dev/shm writable up to its size, /dev still not.
    policy.shm_bytes = 1 << 20;
    CHECK(run_probe({"write", "/dev/shm/file", "100000"}, policy).status.ok());
    CHECK(contains(run_probe({"write", "/dev/shm/fill.bin", std::to_string(4 << 20)}, policy).output,
                   "write failed: ENOSPC"));
    CHECK(run_probe({"write", "/dev/file", "10"}, policy).status.code == 1);
}

TEST_CASE("the program sees only its own PID namespace")
{
    Outcome outcome = run_probe({"pids"});
    REQUIRE(outcome.status.ok());
    // bwrap's init (pid 1) and the program itself (pid 2): not the grader, nor anything else.
    std::set<std::string> seen;
    std::istringstream pids(outcome.output.substr(outcome.output.find("pids:") + 5));
    for (std::string pid; pids >> pid && pid != "self:";) seen.insert(pid);
    CHECK(seen == std::set<std::string>{"1", "2"});
    CHECK(contains(outcome.output, "self: 2\n"));
}

TEST_CASE("the program has no network")
{
    int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(listener, 4) == 0);
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    const std::string port = std::to_string(ntohs(address.sin_port));

    // The same program outside the sandbox does reach the port.
    TempDir logs;
    SpawnOptions outside;
    outside.argv = {fixture(probe), "connect", port};
    outside.output_file = logs.path + "/outside.log";
    CHECK(Child::spawn(outside).wait_until(Clock::now() + 30s).ok());
    CHECK(harness::read_file_tail(outside.output_file, 4096) == "connect: ok\n");

    Outcome inside = run_probe({"connect", port});
    CHECK(inside.status.code == 1);
    CHECK(contains(inside.output, "connect failed"));
    ::close(listener);
}

TEST_CASE("the environment is exactly the policy's")
{
    ::setenv("GRADER_SANDBOX_TEST_SECRET", "leaked", 1);
    SandboxPolicy policy = base_policy();
    policy.env.push_back("ONLY_THIS=a=b c");
    Outcome outcome = run_probe({"env"}, policy);
    ::unsetenv("GRADER_SANDBOX_TEST_SECRET");
    REQUIRE(outcome.status.ok());
    std::vector<std::string> env = lines(outcome.output);
    // bubblewrap always sets PWD, to the working directory.
    std::vector<std::string> expected = policy.env;
    expected.push_back("PWD=/tmp");
    CHECK(std::multiset<std::string>(env.begin(), env.end()) ==
          std::multiset<std::string>(expected.begin(), expected.end()));
}

TEST_CASE("the command and channel descriptors reach the program")
{
    TempDir logs;
    Child child = Child::spawn(sandboxed(probe, {"echo"}, base_policy(), logs.path + "/echo.log", true));
    REQUIRE(child.command_fd() >= 0);
    REQUIRE(child.channel_fd() >= 0);
    const std::string command = "ping 42\n";
    REQUIRE(::write(child.command_fd(), command.data(), command.size()) == static_cast<ssize_t>(command.size()));
    bool eof = false;
    std::string answer = read_channel(child.channel_fd(), "", Clock::now() + 60s, eof);
    CHECK(eof);
    CHECK(answer == "echo: ping 42\n");
    CHECK(child.wait_until(Clock::now() + 60s).ok());

    // With a channel, the program has exactly fds 0-5 (commands, messages, the handles socket).
    Child fds = Child::spawn(sandboxed(probe, {"fds"}, base_policy(), logs.path + "/fds.log", true));
    CHECK(fds.wait_until(Clock::now() + 60s).ok());
    CHECK(harness::read_file_tail(logs.path + "/fds.log", 4096) == "fds: 0 1 2 3 4 5\n");
}

TEST_CASE("a crash inside is reported as the signal")
{
    Outcome crash = run("fixture_crash", {});
    CHECK(crash.status.kind == ExitStatus::Kind::signaled);
    CHECK(crash.status.signal == SIGSEGV);
    CHECK(crash.status.describe() == "killed by signal 11 (SIGSEGV)");
    CHECK(contains(crash.output, "about to write through a null pointer"));

    Outcome abort = run("fixture_abort", {});
    CHECK(abort.status.kind == ExitStatus::Kind::signaled);
    CHECK(abort.status.signal == SIGABRT);

    Outcome exit3 = run("fixture_exit_code", {"3"});
    CHECK(exit3.status.kind == ExitStatus::Kind::exited);
    CHECK(exit3.status.code == 3);
}

TEST_CASE("the file-size limit holds inside")
{
    SandboxPolicy policy = base_policy();
    policy.limits.max_file_bytes = 1 << 20;
    Outcome flood = run("fixture_flood", {}, policy);
    CHECK(flood.status.kind == ExitStatus::Kind::signaled);
    CHECK(flood.status.signal == SIGXFSZ);
    CHECK(flood.output.size() <= (1u << 20));
    CHECK(contains(flood.output, "debug line 0: still going"));
}

TEST_CASE("a fork bomb is stopped by the process limit, and all of it dies")
{
    if (!sandbox->enforces_process_limit()) {
        const std::string why = "not run: " + sandbox->describe();
        WARN_MESSAGE(false, why);
        return;
    }
    // The limit counts this sandbox's processes (a control group), or, without one, every process
    // of the host uid (this grading's own, or ours when we are not root), those of other sandboxes
    // of that uid running meanwhile included: 64 more than that has now.
    const uid_t host_uid = sandbox->host_uid();
    const unsigned long limit = 64 + static_cast<unsigned long>(tasks_of(host_uid));
    SandboxPolicy policy = base_policy();
    policy.limits.max_processes = limit;
    TempDir logs;
    // Bounded by the fixture too, so that a broken limit fails the test instead of the machine.
    const std::string most = std::to_string(4 * limit);
    Child child = Child::spawn(sandboxed(probe, {"fork_bomb", most}, policy, logs.path + "/bomb.log", true));
    CHECK(child.wait_until(Clock::now() + 60s).ok());
    const std::string output = harness::read_file_tail(logs.path + "/bomb.log", 4096);
    CAPTURE(output);
    CHECK(contains(output, "then: EAGAIN"));
    const long forked = std::atol(output.c_str() + output.find("forked ") + 7);
    CHECK(forked > 0);
    CHECK(forked < static_cast<long>(limit));

    // Every child of the bomb held the channel's write end: end of file means all are gone.
    bool eof = false;
    read_channel(child.channel_fd(), "", Clock::now() + 60s, eof);
    CHECK(eof);
    // And the machine still starts processes.
    SpawnOptions after;
    after.argv = {fixture("fixture_exit_code"), "0"};
    CHECK(Child::spawn(after).wait_until(Clock::now() + 30s).ok());
}

TEST_CASE("a fork bomb in one sandbox does not stop another from starting")
{
    if (!sandbox->process_limit_per_sandbox()) {
        MESSAGE("not run: the process limit is one pool for every sandbox here: " << harness::cgroup_support().why_not);
        return;
    }
    // Both with the same limit: as RLIMIT_NPROC of one uid, the first would leave the second none.
    SandboxPolicy policy = base_policy();
    policy.limits.max_processes = 64;
    TempDir logs;
    Child bomb = Child::spawn(sandboxed(probe, {"fork_bomb", "100000", "stay"}, policy, logs.path + "/bomb.log", true));
    bool eof = false;
    REQUIRE(read_channel(bomb.channel_fd(), "bomb done\n", Clock::now() + 60s, eof) == "bomb done\n");

    // While the bomb holds all its processes, another sandbox starts and forks.
    Outcome beside = run_probe({"fork_bomb", "8"}, policy);
    CHECK(beside.status.ok());
    CHECK(beside.output == "forked 8, then: stopped at the maximum\n");

    const ExitStatus ended = bomb.kill_and_reap();
    CHECK(ended.limit_reached == "the process limit of its process tree (64)");
    // (The log has the output as it grows, and all of it once the sandbox has ended.)
    CHECK(contains(harness::read_file_tail(logs.path + "/bomb.log", 4096), "then: EAGAIN"));
    read_channel(bomb.channel_fd(), "", Clock::now() + 60s, eof);
    CHECK(eof);  // every process of the bomb is gone
}

TEST_CASE("each grading runs as a host uid of its own, whose full process pool stops no other grading")
{
    if (!runs_as_own_uid()) {
        MESSAGE("not run: the grader is not root, or bwrap runs as root: " << sandbox->describe());
        return;
    }
    // A second grading's sandbox, as another `grade` process would find it: another slot.
    std::string why;
    std::optional<harness::Sandbox> other = harness::Sandbox::find(why);
    REQUIRE_MESSAGE(other, why);
    CAPTURE(sandbox->describe());
    CAPTURE(other->describe());
    CHECK(other->host_uid() != sandbox->host_uid());
    const std::vector<const harness::Sandbox*> gradings = {sandbox, &*other};
    for (const harness::Sandbox* grading : gradings) {
        CHECK(grading->host_uid() != 65534u);  // a free slot: this test's machine has few gradings
        CHECK_FALSE(harness::is_known_id(grading->host_uid()));
        CHECK(contains(grading->describe(), "host uid " + std::to_string(grading->host_uid()) + ", this grading's own"));
        for (const auto& [name, reason] : grading->limits().not_enforced)
            if (name == "processes") CHECK(contains(reason, "one pool per grading"));
    }
    // Each grading's programs are its uid on the host (and 65534 inside).
    TempDir private_dir;
    for (const harness::Sandbox* grading : gradings) {
        const std::string work = private_dir.path + "/work" + std::to_string(grading->host_uid());
        fs::create_directory(work);
        grading->make_writable(work);
        SandboxPolicy policy = base_policy();
        policy.mounts = {{work, "/work", true}};
        CHECK(run_probe({"write", "/work/mine", "10"}, policy, grading).output == "write: ok\n");
        struct stat info {};
        REQUIRE(::lstat((work + "/mine").c_str(), &info) == 0);
        CHECK(info.st_uid == grading->host_uid());
        CHECK(info.st_gid == grading->host_uid());
        CHECK(contains(run_probe({"ids"}, base_policy(), grading).output, "uid 65534 gid 65534"));
    }

    // Where no slot is free, uid 65534, shared with every such grading, and the limits say so.
    harness::UidPool none;
    none.count = 0;
    std::optional<harness::Sandbox> shared = harness::Sandbox::find(why, {}, none);
    REQUIRE_MESSAGE(shared, why);
    CHECK(shared->host_uid() == 65534u);
    CHECK(contains(shared->describe(), "host uid 65534, shared with other gradings: no free uid"));
    for (const auto& [name, reason] : shared->limits().not_enforced)
        if (name == "processes") CHECK(contains(reason, "other gradings' too (no free uid"));
    CHECK(run_probe({"ids"}, base_policy(), &*shared).status.ok());

    // The first grading's runner forks until it can fork no more, and keeps them all.
    SandboxPolicy policy = base_policy();
    policy.limits.max_processes = 64;
    TempDir logs;
    Child bomb = Child::spawn(sandboxed(probe, {"fork_bomb", "100000", "stay"}, policy, logs.path + "/bomb.log", true));
    bool eof = false;
    REQUIRE(read_channel(bomb.channel_fd(), "bomb done\n", Clock::now() + 60s, eof) == "bomb done\n");

    // Its uid's RLIMIT_NPROC pool is full (so the test can fail), the other's is not: a process
    // that may have 32 of its uid starts as the other grading's uid only.
    auto start_as = [](uid_t uid) {
        SpawnOptions plain;
        plain.argv = {"/bin/true"};
        plain.run_as_uid = static_cast<int>(uid);
        plain.run_as_gid = static_cast<int>(uid);
        plain.limits.max_processes = 32;
        return Child::spawn(plain).wait_until(Clock::now() + 30s);
    };
    const ExitStatus full = start_as(sandbox->host_uid());
    CAPTURE(full.describe());
    CHECK(full.kind == ExitStatus::Kind::failed_to_start);
    CHECK(start_as(other->host_uid()).ok());
    // The other grading's runner, with the same limit as RLIMIT_NPROC or a control group, starts and forks.
    Outcome beside = run_probe({"fork_bomb", "8"}, policy, &*other);
    CHECK(beside.status.ok());
    CHECK(beside.output == "forked 8, then: stopped at the maximum\n");

    bomb.kill_and_reap();
    // (The whole log once the sandbox has ended.)
    CHECK(contains(harness::read_file_tail(logs.path + "/bomb.log", 4096), "then: EAGAIN"));
    read_channel(bomb.channel_fd(), "", Clock::now() + 60s, eof);
    CHECK(eof);  // every process of the bomb is gone
}

TEST_CASE("fallocate on its own output cannot reserve past the file-size limit")
{
    if (!harness::output_bound_problem().empty()) {
        MESSAGE("not run: " << harness::output_bound_problem());
        return;
    }
    SandboxPolicy policy = base_policy();
    policy.limits.max_file_bytes = 1 << 20;
    TempDir logs;
    const std::string log = logs.path + "/output.log";
    Child child = Child::spawn(sandboxed(probe, {"fallocate", "1", std::to_string(256 << 20)}, policy, log));
    const ExitStatus status = child.wait_until(Clock::now() + 60s);
    CAPTURE(status.describe());
    CHECK(((status.kind == ExitStatus::Kind::exited && status.code == 1 &&
            harness::read_file_tail(log, 4096) == "fallocate failed: ENOSPC\n") ||
           (status.kind == ExitStatus::Kind::signaled && status.signal == SIGXFSZ)));
    struct stat info {};
    REQUIRE(::stat(log.c_str(), &info) == 0);
    CHECK(info.st_blocks * 512 < (1 << 20));
    // Its /tmp (16 MiB here) is bounded the same way.
    Outcome tmp = run_probe({"fallocate", "/tmp/reserved", std::to_string(64 << 20)});
    CHECK(tmp.output == "fallocate failed: ENOSPC\n");
    // What the program prints still reaches the grader.
    Outcome ids = run_probe({"ids"}, policy);
    CHECK(contains(ids.output, "uid 65534"));
}

TEST_CASE("the whole sandbox's memory is bounded, not each process's")
{
    if (!harness::cgroup_support().memory) {
        MESSAGE("not run: " << harness::cgroup_support().why_not);
        return;
    }
    SandboxPolicy policy = base_policy();
    policy.limits.tree_memory_bytes = 64u << 20;
    Outcome over = run_probe({"alloc_tree", "4", "32"}, policy);
    CAPTURE(over.output);
    CHECK(over.status.limit_reached == "the memory limit of its process tree (64 MiB)");
    CHECK_FALSE(contains(over.output, "allocated 4 of 4, 0 killed"));
    // The per-process limit stands in when no tree limit is given.
    policy.limits.tree_memory_bytes = 0;
    policy.limits.max_data_bytes = 64u << 20;
    CHECK(run_probe({"alloc_tree", "4", "32"}, policy).status.limit_reached ==
          "the memory limit of its process tree (64 MiB)");
    policy.limits.max_data_bytes = 0;
    CHECK(run_probe({"alloc_tree", "4", "32"}, policy).output == "allocated 4 of 4, 0 killed\n");
}

TEST_CASE("a run sees neither the CUDA toolkit nor a compiler; a compile does")
{
    // What this machine has to hide: nvcc, NVRTC, the host compiler.
    std::vector<std::string> hidden;
    for (const char* dir : {"/usr/local/cuda/bin", "/usr/bin"})
        if (::access((std::string(dir) + "/nvcc").c_str(), X_OK) == 0) hidden.push_back(std::string(dir) + "/nvcc");
    std::string toolkit_root;
    for (const auto& candidate : {"/usr/local/cuda"})
        if (fs::exists(std::string(candidate) + "/bin/nvcc")) toolkit_root = candidate;
    for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/lib/x86_64-linux-gnu",
                            "/usr/lib/aarch64-linux-gnu"}) {
        std::error_code error;
        for (auto it = fs::directory_iterator(dir, error); !error && it != fs::directory_iterator(); it.increment(error))
            if (it->path().filename().string().rfind("libnvrtc.so", 0) == 0) hidden.push_back(it->path().string());
    }
    for (const char* compiler : {"/usr/bin/gcc", "/usr/bin/cc", "/usr/bin/g++"})
        if (fs::exists(compiler)) hidden.push_back(fs::canonical(compiler).string());
    if (hidden.empty()) {
        MESSAGE("not run: no nvcc, NVRTC or compiler on this machine to hide");
        return;
    }
    SandboxPolicy run_policy = base_policy();
    run_policy.gpu = true;
    SandboxPolicy compile_policy = base_policy();
    for (const auto& path : hidden) {
        CAPTURE(path);
        CHECK(contains(run_probe({"read", path}, run_policy).output, "read failed"));
        CHECK(run_probe({"read", path}, compile_policy).status.ok());
    }
    // The system's own libraries are there.
    for (const char* library : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"})
        if (fs::exists(library)) CHECK(run_probe({"read", library}, run_policy).status.ok());
    if (!toolkit_root.empty()) {
        // The toolkit's directory looks empty to a run...
        Outcome listed = run_probe({"list", toolkit_root + "/"}, run_policy);
        CHECK(listed.status.ok());
        std::vector<std::string> names = lines(listed.output);
        INFO("listed " << toolkit_root << "/: " << listed.output);
        // ...but for its compat/ (the driver's forward-compatible libraries, which a run may need),
        // where the toolkit has one (the H100 machines' CUDA 13.0 does).
        std::set<std::string> expected = {".", ".."};
        if (fs::is_directory(toolkit_root + "/compat")) expected.insert("compat");
        CHECK(std::set<std::string>(names.begin(), names.end()) == expected);
        CHECK(contains(run_probe({"write", toolkit_root + "/x", "1"}, run_policy).output, "write failed"));
        // ...but a policy that names it sees it, as a compile does.
        run_policy.system_paths_extra = {toolkit_root};
        CHECK(run_probe({"read", toolkit_root + "/bin/nvcc"}, run_policy).status.ok());
        // A directory inside it (compute-sanitizer's, for grade --sanitize) is shown alone: nvcc stays hidden.
        const std::string real_root = fs::canonical(toolkit_root).string();
        // (include/ is a link into targets/<triple>/ in NVIDIA's packages: the folder itself.)
        std::error_code no_include;
        const std::string inside = fs::canonical(real_root + "/include", no_include).string();
        if (!no_include && fs::is_directory(inside)) {
            run_policy.system_paths_extra = {inside};
            Outcome shown = run_probe({"list", inside + "/"}, run_policy);
            INFO("listed " << inside << "/: " << shown.output << " (" << shown.status.describe() << ")");
            CHECK(lines(shown.output).size() > 2);
            CHECK(contains(run_probe({"read", toolkit_root + "/bin/nvcc"}, run_policy).output, "read failed"));
            CHECK(contains(run_probe({"read", real_root + "/bin/nvcc"}, run_policy).output, "read failed"));
        }
        run_policy.system_paths_extra.clear();
        run_policy.hide_toolchains = false;
        CHECK(run_probe({"read", toolkit_root + "/bin/nvcc"}, run_policy).status.ok());
    }
}

TEST_CASE("a daemon does not outlive the program")
{
    TempDir logs;
    Child child = Child::spawn(sandboxed(probe, {"daemon", "exit"}, base_policy(), logs.path + "/daemon.log", true));
    bool eof = false;
    CHECK(read_channel(child.channel_fd(), "daemon ready\n", Clock::now() + 60s, eof) == "daemon ready\n");
    CHECK(child.wait_until(Clock::now() + 60s).ok());
    // The daemon holds the channel's write end until it dies.
    read_channel(child.channel_fd(), "", Clock::now() + 60s, eof);
    CHECK(eof);
}

TEST_CASE("killing the sandbox's process group ends everything inside")
{
    TempDir logs;
    Child child = Child::spawn(sandboxed(probe, {"daemon", "stay"}, base_policy(), logs.path + "/daemon.log", true));
    bool eof = false;
    CHECK(read_channel(child.channel_fd(), "daemon ready\n", Clock::now() + 60s, eof) == "daemon ready\n");
    ExitStatus status = child.kill_and_reap();
    CHECK(status.kind == ExitStatus::Kind::timed_out);
    read_channel(child.channel_fd(), "", Clock::now() + 60s, eof);
    CHECK(eof);
}

TEST_CASE("with gpu, /sys and every /dev/nvidia* node are there")
{
    SandboxPolicy policy = base_policy();
    policy.gpu = true;
    Outcome dev = run_probe({"list", "/dev"}, policy);
    REQUIRE(dev.status.ok());
    std::set<std::string> inside;
    for (const auto& name : lines(dev.output))
        if (name.rfind("nvidia", 0) == 0) inside.insert(name);
    std::set<std::string> host;
    for (const auto& entry : fs::directory_iterator("/dev"))
        if (entry.path().filename().string().rfind("nvidia", 0) == 0) host.insert(entry.path().filename().string());
    CHECK(inside == host);
    CHECK(run_probe({"list", "/sys/devices"}, policy).status.ok());
    // Without gpu, neither.
    CHECK_FALSE(run_probe({"list", "/sys/devices"}).status.ok());
}

TEST_CASE("bwrap itself may lie below a 0700 directory")
{
    TempDir private_dir;
    const std::string copy = private_dir.path + "/bwrap";
    fs::copy_file(sandbox->bwrap(), copy);
    fs::permissions(copy, fs::perms(0755));
    std::string why;
    std::optional<harness::Sandbox> found = harness::Sandbox::find(why, copy);
    REQUIRE_MESSAGE(found, why);
    CHECK(found->bwrap() == copy);
    CHECK(found->enforces_process_limit() == sandbox->enforces_process_limit());  // no fallback to root
    TempDir logs;
    SpawnOptions inner;
    inner.argv = {"/grader/probe", "ids"};
    inner.output_file = logs.path + "/ids.log";
    SandboxPolicy policy = base_policy();
    policy.mounts = {{fixture(probe), "/grader/probe", false}};
    CHECK(Child::spawn(found->wrap(inner, policy)).wait_until(Clock::now() + 60s).ok());
    CHECK(contains(harness::read_file_tail(inner.output_file, 4096), "uid 65534 gid 65534"));
}

TEST_CASE("wrap refuses links and relative paths; find explains what is missing")
{
    TempDir dir;
    write_text(dir.path + "/real.txt", "x");
    fs::create_symlink(dir.path + "/real.txt", dir.path + "/link.txt");
    SpawnOptions inner;
    inner.argv = {"/bin/true"};
    SandboxPolicy policy = base_policy();
    policy.mounts = {{dir.path + "/link.txt", "/x", false}};
    CHECK_THROWS_WITH_AS(sandbox->wrap(inner, policy), doctest::Contains("symbolic link"), std::runtime_error);
    policy.mounts = {{dir.path + "/missing.txt", "/x", false}};
    CHECK_THROWS_AS(sandbox->wrap(inner, policy), std::runtime_error);
    policy.mounts = {{dir.path + "/real.txt", "relative", false}};
    CHECK_THROWS_AS(sandbox->wrap(inner, policy), std::runtime_error);
    policy.mounts.clear();
    policy.env = {"NO_EQUALS_SIGN"};
    CHECK_THROWS_AS(sandbox->wrap(inner, policy), std::runtime_error);

    std::string why;
    CHECK_FALSE(harness::Sandbox::find(why, "/nonexistent/bwrap"));
    CHECK(contains(why, "bubblewrap"));
    CHECK(contains(why, "--no-sandbox"));
    CHECK_FALSE(harness::Sandbox::find(why, fixture("fixture_exit_code")));
    CHECK(contains(why, "not"));

    CHECK(sandbox->describe().rfind("bubblewrap ", 0) == 0);
}

int main(int argc, char** argv)
{
    std::string why;
    std::optional<harness::Sandbox> found = harness::Sandbox::find(why);
    if (!found) {
        // If bwrap does make namespaces here, the failure is find()'s own: fail, do not skip.
        auto bare = harness::run_command(
            {"bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "true"}, 60s);
        if (bare.status.ok()) {
            std::printf("test_sandbox: FAILED: bwrap works here, yet Sandbox::find says: %s\n", why.c_str());
            return 1;
        }
        std::printf("test_sandbox: SKIPPED: %s\n", why.c_str());
        return 77;
    }
    std::printf("test_sandbox: %s\n", found->describe().c_str());
    sandbox = &*found;
    doctest::Context context(argc, argv);
    return context.run();
}

TEST_CASE("a GPU's device node is found from its PCI bus id in the driver's /proc entries")
{
    const fs::path root = fs::temp_directory_path() / ("grader_gpu_proc_" + std::to_string(::getpid()));
    fs::create_directories(root / "gpus" / "0000:1b:00.0");
    fs::create_directories(root / "gpus" / "0000:2c:00.0");
    std::ofstream(root / "gpus" / "0000:1b:00.0" / "information")
        << "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 123\nDevice Minor: \t 3\nBus Location: \t 0000:1b:00.0\n";
    std::ofstream(root / "gpus" / "0000:2c:00.0" / "information") << "Device Minor: \t x7\n";
    CHECK(harness::gpu_device_node("0000:1B:00.0", root.string()) == "/dev/nvidia3");  // CUDA spells it in capitals
    CHECK(harness::gpu_device_node("0000:2c:00.0", root.string()).empty());           // not a number
    CHECK(harness::gpu_device_node("0000:3d:00.0", root.string()).empty());           // no such GPU
    CHECK(harness::gpu_device_node("", root.string()).empty());
    CHECK(harness::gpu_device_node("../../etc", root.string()).empty());
    fs::remove_all(root);
}

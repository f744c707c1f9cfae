// Control groups per process tree (harness/cgroup.hpp): how /proc's descriptions are read, and on
// a machine that lets the grader use them (root, cgroup v1 or a delegated v2), that a tree's
// processes and memory are bounded together and that nothing of the tree outlives its child. Where
// the machine does not, those cases print why and pass without checking (MESSAGE).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include "harness/cgroup.hpp"
#include "harness/process.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;
using harness::Child;
using harness::ExitStatus;
using Clock = std::chrono::steady_clock;
namespace detail = harness::cgroup_detail;

namespace {

using test_support::fixture;

std::string read_all(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

using test_support::contains;

using test_support::TempFile;

// Reads `fd` until end of file or the deadline; true at end of file.
bool reaches_end(int fd, Clock::time_point deadline)
{
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return false;
        pollfd watch{fd, POLLIN, 0};
        if (::poll(&watch, 1, static_cast<int>(left)) <= 0) continue;
        char buffer[256];
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got == 0) return true;
        if (got < 0) return false;
    }
}

// This process's groups named grader-sandbox-<pid>-* that exist now, in every hierarchy it uses.
int own_sandbox_groups()
{
    const auto mounts = detail::parse_mountinfo(read_all("/proc/self/mountinfo"));
    const auto groups = detail::parse_proc_cgroup(read_all("/proc/self/cgroup"));
    const std::string prefix = "grader-sandbox-" + std::to_string(::getpid()) + "-";
    int count = 0;
    for (const char* controller : {"pids", "memory", ""}) {
        const std::string dir = detail::own_group_directory(mounts, groups, controller);
        DIR* d = dir.empty() ? nullptr : ::opendir(dir.c_str());
        while (const dirent* entry = d ? ::readdir(d) : nullptr)
            if (std::string(entry->d_name).rfind(prefix, 0) == 0) ++count;
        if (d) ::closedir(d);
    }
    return count;
}

bool can(bool supported)
{
    if (!supported) MESSAGE("not checked: " << harness::cgroup_support().why_not);
    return supported;
}

}  // namespace

TEST_CASE("mountinfo: v1 and v2 cgroup mounts, escaped names, odd lines skipped")
{
    const std::string text =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime shared:5 - cgroup cgroup rw,pids\n"
        "40 31 0:37 /docker/abc /sys/fs/cgroup/with\\040space rw - cgroup2 cgroup2 rw,nsdelegate\n"
        "garbage\n"
        "1 2 3 4 5 - \n";
    const auto mounts = detail::parse_mountinfo(text);
    REQUIRE(mounts.size() == 4);
    CHECK(mounts[1].point == "/sys/fs/cgroup/memory");
    CHECK(mounts[1].type == "cgroup");
    CHECK(mounts[1].options == std::vector<std::string>{"rw", "memory"});
    CHECK(mounts[2].options == std::vector<std::string>{"rw", "pids"});
    CHECK(mounts[3].root == "/docker/abc");
    CHECK(mounts[3].point == "/sys/fs/cgroup/with space");
    CHECK(mounts[3].type == "cgroup2");
}

TEST_CASE("the grader's own group directory in each hierarchy")
{
    const auto mounts = detail::parse_mountinfo(
        "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
        "39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
    const auto groups = detail::parse_proc_cgroup(
        "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/e0b6\n2:cpu,cpuacct:/a:b\n0::/user.slice/x.scope\n");
    CHECK(groups.at("pids") == "/");
    CHECK(groups.at("memory") == "/process_api/e0b6");
    CHECK(groups.at("cpuacct") == "/a:b");
    CHECK(groups.at("") == "/user.slice/x.scope");
    CHECK(detail::own_group_directory(mounts, groups, "pids") == "/sys/fs/cgroup/pids");
    CHECK(detail::own_group_directory(mounts, groups, "memory") == "/sys/fs/cgroup/memory/process_api/e0b6");
    CHECK(detail::own_group_directory(mounts, groups, "") == "/sys/fs/cgroup/unified/user.slice/x.scope");
    CHECK(detail::own_group_directory(mounts, groups, "cpu").empty());  // not mounted

    // A container's v2 mount whose root is the grader's group (cgroup namespace): the mount itself.
    const auto container = detail::parse_mountinfo("50 40 0:40 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    CHECK(detail::own_group_directory(container, detail::parse_proc_cgroup("0::/docker/abc\n"), "") == "/sys/fs/cgroup");
    CHECK(detail::own_group_directory(container, detail::parse_proc_cgroup("0::/docker/abc/sub\n"), "") ==
          "/sys/fs/cgroup/sub");
    // A group outside what is mounted cannot be reached.
    CHECK(detail::own_group_directory(container, detail::parse_proc_cgroup("0::/elsewhere\n"), "").empty());
    // Pure v2, in the root.
    const auto root = detail::parse_mountinfo("50 40 0:40 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    CHECK(detail::own_group_directory(root, detail::parse_proc_cgroup("0::/\n"), "") == "/sys/fs/cgroup");
}

TEST_CASE("flat keyed files")
{
    CHECK(detail::flat_key("max 3\n", "max") == 3);
    CHECK(detail::flat_key("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n", "oom_kill") == 2);
    CHECK(detail::flat_key("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\noom_group_kill 1\n", "oom_kill") == 1);
    CHECK(detail::flat_key("", "max") == 0);
    CHECK(detail::flat_key("max\n", "max") == 0);
}

TEST_CASE("cgroup_support says what holds, or why not")
{
    const harness::CgroupSupport& support = harness::cgroup_support();
    MESSAGE("cgroups here: " << (support.how.empty() ? "none" : support.how)
                             << (support.why_not.empty() ? "" : "; " + support.why_not));
    if (support.processes && support.memory)
        CHECK(support.why_not.empty());
    else
        CHECK_FALSE(support.why_not.empty());
    CHECK((support.processes || support.memory) == !support.how.empty());
}

TEST_CASE("a tree's processes are bounded together, and the limit is named")
{
    if (!can(harness::cgroup_support().processes)) return;
    TempFile output;
    harness::SpawnOptions options;
    options.argv = {fixture("fixture_sandbox_probe"), "fork_bomb", "2000"};
    options.output_file = output.path;
    options.limits.tree_processes = 32;
    Child child = Child::spawn(options);
    const ExitStatus status = child.wait_until(Clock::now() + 60s);
    CAPTURE(output.text());
    CHECK(status.ok());
    CHECK(contains(output.text(), "then: EAGAIN"));
    CHECK(std::atol(output.text().c_str() + output.text().find("forked ") + 7) < 32);
    CHECK(status.limit_reached == "the process limit of its process tree (32)");
    CHECK(contains(status.describe(), "after reaching the process limit"));
    CHECK(own_sandbox_groups() == 0);  // removed once the child was reaped
}

TEST_CASE("a tree that takes more memory than its limit is killed for it")
{
    if (!can(harness::cgroup_support().memory)) return;
    TempFile output;
    harness::SpawnOptions options;
    // Four processes of 32 MiB each: every one alone is within the limit, the tree is not.
    options.argv = {fixture("fixture_sandbox_probe"), "alloc_tree", "4", "32"};
    options.output_file = output.path;
    options.limits.tree_memory_bytes = 64u << 20;
    const ExitStatus status = Child::spawn(options).wait_until(Clock::now() + 60s);
    CAPTURE(output.text());
    CAPTURE(status.describe());
    CHECK(status.limit_reached == "the memory limit of its process tree (64 MiB)");
    // The kernel killed one of the children (v1), or the whole tree at once (v2).
    CHECK((contains(output.text(), "killed") || status.kind == ExitStatus::Kind::signaled));
    CHECK_FALSE(contains(output.text(), "allocated 4 of 4, 0 killed"));

    // Within its limit, the same tree runs as usual and nothing is reported.
    options.limits.tree_memory_bytes = 512u << 20;
    const ExitStatus fits = Child::spawn(options).wait_until(Clock::now() + 60s);
    CHECK(fits.ok());
    CHECK(fits.limit_reached.empty());
    CHECK(output.text() == "allocated 4 of 4, 0 killed\n");
    CHECK(own_sandbox_groups() == 0);
}

TEST_CASE("what the tree left outside its process group dies with it")
{
    if (!can(harness::cgroup_support().processes)) return;
    TempFile output;
    harness::SpawnOptions options;
    // A daemon (double fork, setsid: a process group of its own) that holds the channel's write end.
    options.argv = {fixture("fixture_sandbox_probe"), "daemon", "exit"};
    options.output_file = output.path;
    options.create_channel = true;
    options.limits.tree_processes = 64;
    Child child = Child::spawn(options);
    CHECK(child.wait_until(Clock::now() + 60s).ok());
    // Killing the child's process group does not reach it; emptying the tree's group does.
    CHECK(reaches_end(child.channel_fd(), Clock::now() + 60s));
}

TEST_CASE("a child that cannot start leaves no group behind")
{
    harness::SpawnOptions options;
    options.argv = {"/nonexistent/program"};
    options.limits.tree_processes = 16;
    options.limits.tree_memory_bytes = 64u << 20;
    const ExitStatus status = Child::spawn(options).wait_until(Clock::now() + 10s);
    CHECK(status.kind == ExitStatus::Kind::failed_to_start);
    CHECK(own_sandbox_groups() == 0);
}

TEST_CASE("a group that cannot be made is a failure to start, and the channel ends at once")
{
    if (!can(harness::cgroup_support().processes)) return;
    harness::SpawnOptions options;
    options.argv = {fixture("fixture_exit_code"), "0"};
    options.create_channel = true;
    options.limits.tree_processes = 1'000'000'000;  // more than pids.max takes (EINVAL)
    Child child = Child::spawn(options);
    CHECK(child.pid() == -1);
    const ExitStatus status = child.wait_until(Clock::now() + 10s);
    CHECK(status.kind == ExitStatus::Kind::failed_to_start);
    CHECK(contains(status.error, "control group"));
    CHECK(contains(status.error, "pids.max"));
    CHECK(reaches_end(child.channel_fd(), Clock::now() + 10s));
    CHECK(own_sandbox_groups() == 0);
}

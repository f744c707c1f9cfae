// Child processes: spawn in a fresh process group, wait with a deadline, kill the whole group.
//
// Between fork() and exec() the child only makes async-signal-safe system calls: everything it
// needs (argv, environment, paths, limits) is prepared before fork, so spawning from a
// multithreaded grader is safe.
#include "harness/process.hpp"

#include "harness/cgroup.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

// The lowest descriptor number that is not one of the child's fixed ones (0-2, child_command_fd,
// child_channel_fd, child_handles_fd).
constexpr int first_free_fd = std::max({child_command_fd, child_channel_fd, child_handles_fd}) + 1;

// What the child reports through the error pipe when it cannot reach exec().
enum class SpawnStage : int { cgroup, stdin_redirect, output_open, chdir, setup, descriptors, limits, drop_privileges, exec };
struct SpawnFailure {
    SpawnStage stage;
    int error;
};

std::string errno_text(int error)
{
    return std::strerror(error);
}

[[noreturn]] void throw_errno(const std::string& what)
{
    throw std::runtime_error(what + ": " + errno_text(errno));
}

void close_quietly(int fd)
{
    if (fd >= 0) ::close(fd);
}

// Moves `fd` to first_free_fd or above, keeping CLOEXEC, so setting up the child's fixed
// descriptors cannot overwrite it.
int above_fixed_fds(int fd)
{
    if (fd >= first_free_fd) return fd;
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, first_free_fd);
    int saved = errno;
    ::close(fd);
    if (moved < 0) {
        errno = saved;
        throw_errno("fcntl(F_DUPFD_CLOEXEC)");
    }
    return moved;
}

// A pipe whose ends are close-on-exec and clear of the child's fixed descriptors.
// ends[0] reads, ends[1] writes.
void make_pipe(int ends[2])
{
    if (::pipe2(ends, O_CLOEXEC) != 0) throw_errno("pipe2");
    try {
        ends[0] = above_fixed_fds(ends[0]);
        ends[1] = above_fixed_fds(ends[1]);
    } catch (...) {
        close_quietly(ends[0]);
        close_quietly(ends[1]);
        throw;
    }
}

std::string variable_name(const std::string& entry)
{
    return entry.substr(0, entry.find('='));
}

// The child's environment: `extra_env` alone with clear_env, else ours minus the names that
// `extra_env` overrides, plus `extra_env`.
std::vector<std::string> child_environment(const SpawnOptions& options)
{
    std::vector<std::string> env;
    if (!options.clear_env) {
        std::vector<std::string> overridden;
        for (const auto& entry : options.extra_env) overridden.push_back(variable_name(entry));
        for (char** entry = environ; entry && *entry; ++entry) {
            std::string text = *entry;
            if (std::find(overridden.begin(), overridden.end(), variable_name(text)) == overridden.end())
                env.push_back(std::move(text));
        }
    }
    env.insert(env.end(), options.extra_env.begin(), options.extra_env.end());
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings)
{
    std::vector<char*> pointers;
    for (auto& s : strings) pointers.push_back(s.data());
    pointers.push_back(nullptr);
    return pointers;
}

[[noreturn]] void report_and_exit(int error_pipe, SpawnStage stage, int error)
{
    SpawnFailure failure{stage, error};
    ssize_t ignored = ::write(error_pipe, &failure, sizeof failure);
    (void)ignored;
    ::_exit(127);
}
[[noreturn]] void report_and_exit(int error_pipe, SpawnStage stage)
{
    report_and_exit(error_pipe, stage, errno);
}

// Everything the child needs between fork and exec, prepared by the parent.
struct ChildPlan {
    char* const* argv = nullptr;
    char* const* envp = nullptr;
    const char* output_path = nullptr;
    int output_fd = -1;                         // the output, opened by the grader (bounded_output)
    const int* join = nullptr;                  // cgroup.procs of the tree's group, written "0"
    int join_count = 0;
    const char* working_dir = nullptr;          // nullptr: inherit
    int command_read = -1, channel_write = -1;  // the child's pipe ends (-1 without a channel)
    int handles = -1;                           // the child's end of the descriptor socket
    int error_pipe = -1;
    int max_fd = 0;  // where closing by hand stops, without close_range
    struct {
        int resource;
        rlim_t value;
    } limits[6] = {};
    int limit_count = 0;
    bool drop_privileges = false;
    uid_t uid = 0;
    gid_t gid = 0;
    const std::function<int()>* setup = nullptr;
};

// above_fixed_fds for the child (async-signal-safe; -1 stays -1), for what it opens itself.
int above_fixed_fds_in_child(int fd)
{
    return fd < 0 || fd >= first_free_fd ? fd : ::fcntl(fd, F_DUPFD_CLOEXEC, first_free_fd);
}

// Closes every descriptor in [first, last] (best effort).
void close_fds(int first, int last, int max_fd)
{
    if (first > last) return;
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(last), 0u) == 0) return;
#endif
    for (int fd = first; fd <= std::min(last, max_fd); ++fd) ::close(fd);
}

// Runs in the forked child: async-signal-safe calls only, and it never returns.
[[noreturn]] void exec_child(const ChildPlan& plan)
{
    const int error_pipe = plan.error_pipe;
    ::setpgid(0, 0);
    // Into the tree's control group first, so that everything it starts is counted there.
    for (int k = 0; k < plan.join_count; ++k)
        if (::write(plan.join[k], "0", 1) != 1) report_and_exit(error_pipe, SpawnStage::cgroup);

    // Start the program with a clean signal state: the grader may block or ignore signals
    // (SIGPIPE, typically), and ignored dispositions survive exec.
    sigset_t nothing;
    sigemptyset(&nothing);
    ::sigprocmask(SIG_SETMASK, &nothing, nullptr);
    ::signal(SIGPIPE, SIG_DFL);

    int input = above_fixed_fds_in_child(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (input < 0) report_and_exit(error_pipe, SpawnStage::stdin_redirect);
    // Opened as the grader (before any privilege drop) and before chdir, so a relative path is
    // relative to the grader's directory. Never through a link a child may have planted.
    int output = plan.output_fd >= 0 ? plan.output_fd
                                     : above_fixed_fds_in_child(::open(
                                           plan.output_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (output < 0) report_and_exit(error_pipe, SpawnStage::output_open);

    if (plan.working_dir && ::chdir(plan.working_dir) != 0) report_and_exit(error_pipe, SpawnStage::chdir);

    if (plan.setup && *plan.setup) {
        int error = (*plan.setup)();
        if (error != 0) report_and_exit(error_pipe, SpawnStage::setup, error);
    }

    // The child's descriptors: 0 reads /dev/null, 1 and 2 write the output file, and with a
    // channel 3 reads commands and 4 writes messages. The pipe ends are all above 4 (make_pipe),
    // so no dup2 here overwrites another's source. dup2 clears CLOEXEC on the copies.
    if (::dup2(input, 0) < 0 || ::dup2(output, 1) < 0 || ::dup2(output, 2) < 0)
        report_and_exit(error_pipe, SpawnStage::descriptors);
    int first_closed = 3;
    if (plan.command_read >= 0) {
        if (::dup2(plan.command_read, child_command_fd) < 0 || ::dup2(plan.channel_write, child_channel_fd) < 0 ||
            ::dup2(plan.handles, child_handles_fd) < 0)
            report_and_exit(error_pipe, SpawnStage::descriptors);
        first_closed = first_free_fd;
    }
    // Nothing else the grader has open reaches the program: every other descriptor is closed
    // now (the error pipe is close-on-exec and reports an exec failure).
    close_fds(first_closed, error_pipe - 1, plan.max_fd);
    close_fds(error_pipe + 1, ~0u >> 1, plan.max_fd);

    // A crashing program should not spend time writing a core file; then the plan's limits.
    struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    for (int k = 0; k < plan.limit_count; ++k) {
        struct rlimit current {};
        rlim_t value = plan.limits[k].value;
        // Never above the hard limit we have (raising it needs privileges we may lack).
        if (::getrlimit(plan.limits[k].resource, &current) == 0 && current.rlim_max != RLIM_INFINITY)
            value = std::min(value, current.rlim_max);
        struct rlimit limit = {value, value};
        if (::setrlimit(plan.limits[k].resource, &limit) != 0) report_and_exit(error_pipe, SpawnStage::limits);
    }

    // Last, as root: no supplementary groups, then the gid, then the uid (all three ids each).
    // Raw system calls: the glibc wrappers synchronise threads, which a forked child has not.
    if (plan.drop_privileges) {
        if (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0 ||
            ::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0)
            report_and_exit(error_pipe, SpawnStage::drop_privileges);
    }

    ::execvpe(plan.argv[0], plan.argv, plan.envp);
    report_and_exit(error_pipe, SpawnStage::exec);
}

std::string failure_text(const SpawnFailure& failure, const SpawnOptions& options)
{
    std::string what;
    switch (failure.stage) {
        case SpawnStage::cgroup:
            what = "cannot join the process tree's control group";
            break;
        case SpawnStage::stdin_redirect:
            what = "cannot open /dev/null";
            break;
        case SpawnStage::output_open:
            what = "cannot open output file '" + options.output_file + "'";
            break;
        case SpawnStage::chdir:
            what = "cannot change directory to '" + options.working_dir + "'";
            break;
        case SpawnStage::setup:
            what = "cannot prepare the child";
            break;
        case SpawnStage::descriptors:
            what = "cannot set up the child's descriptors";
            break;
        case SpawnStage::limits:
            what = "cannot set the child's resource limits";
            break;
        case SpawnStage::drop_privileges:
            what = "cannot run as uid " + std::to_string(options.run_as_uid) + ", gid " +
                   std::to_string(options.run_as_gid);
            break;
        case SpawnStage::exec:
            what = "cannot execute '" + options.argv.front() + "'";
            break;
    }
    return what + ": " + errno_text(failure.error);
}

ExitStatus decode(int wait_status, bool exit_code_reports_signal)
{
    ExitStatus status;
    if (WIFEXITED(wait_status)) {
        status.kind = ExitStatus::Kind::exited;
        status.code = WEXITSTATUS(wait_status);
        if (exit_code_reports_signal && status.code > 128 && status.code - 128 < NSIG) {
            status.kind = ExitStatus::Kind::signaled;
            status.signal = status.code - 128;
            status.code = 0;
        }
    } else {
        status.kind = ExitStatus::Kind::signaled;
        status.signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
    }
    return status;
}

// The pids of the children that Child objects hold and have not reaped, in every thread.
std::mutex live_children_mutex;
std::set<int> live_children;

void forget_live_child(int pid)
{
    std::lock_guard<std::mutex> lock(live_children_mutex);
    live_children.erase(pid);
}

int reap(int pid)
{
    int wait_status = 0;
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {}
    return wait_status;
}

void kill_group(int pid)
{
    // The group id is the child's pid. Should the child not lead a group (it never reached its
    // setpgid), kill(-pid) finds nothing and only the child itself is signalled.
    if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
}

// True once the child has terminated. Uses WNOWAIT so it stays a zombie: the zombie keeps its
// pid, and so the process group id, reserved until we have killed what is left of the group.
bool has_terminated(int pid)
{
    siginfo_t info{};
    int rc;
    do {
        rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc < 0 && errno == EINTR);
    return rc == 0 && info.si_pid == pid;
}

// Rounded up, so a poll() that times out has really reached the deadline.
int milliseconds_until(Clock::time_point deadline)
{
    auto now = Clock::now();
    if (deadline <= now) return 0;  // also keeps time_point::min() from overflowing below
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    return static_cast<int>(std::max<long long>(0, std::min<long long>(left, 1 << 30)));
}

// Waits until the child terminates (true) or the deadline passes (false). Sleeps in poll() on a
// pidfd where the kernel has them; otherwise checks every few milliseconds.
bool wait_for_termination(int pid, Clock::time_point deadline)
{
#ifdef SYS_pidfd_open
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd >= 0) {
        while (!has_terminated(pid)) {
            int timeout = milliseconds_until(deadline);
            if (timeout == 0) break;
            pollfd watch{pidfd, POLLIN, 0};
            ::poll(&watch, 1, timeout);
        }
        ::close(pidfd);
        return has_terminated(pid);
    }
#endif
    auto step = std::chrono::milliseconds(1);
    while (!has_terminated(pid)) {
        auto now = Clock::now();
        if (now >= deadline) return has_terminated(pid);
        std::this_thread::sleep_for(std::min<Clock::duration>(step, deadline - now));
        step = std::min(step * 2, std::chrono::milliseconds(5));
    }
    return true;
}

// ---- Bounded output: a file on a tmpfs of its own that is mounted nowhere ----
// The new mount API's calls (their numbers are the same on every architecture but alpha).
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
constexpr unsigned fsopen_cloexec = 1, fsmount_cloexec = 1;
constexpr unsigned fsconfig_set_string = 1, fsconfig_cmd_create = 6;
constexpr unsigned mount_attr_nosuid = 0x2, mount_attr_nodev = 0x4, mount_attr_noexec = 0x8;

// Descriptors of a new empty file on a new tmpfs of `bytes` (whole pages) that is mounted nowhere:
// `writer` for the child, `reader` for the grader (both close-on-exec). The open files keep the
// file system alive; it goes with the last of them. 0 or an errno value.
int private_tmpfs_file(std::uint64_t bytes, int& writer, int& reader)
{
    writer = reader = -1;
    const int fs = static_cast<int>(::syscall(SYS_fsopen, "tmpfs", fsopen_cloexec));
    if (fs < 0) return errno;
    const std::string size = std::to_string((bytes + 4095) / 4096 * 4096);
    int mount = -1;
    if (::syscall(SYS_fsconfig, fs, fsconfig_set_string, "size", size.c_str(), 0) == 0 &&
        ::syscall(SYS_fsconfig, fs, fsconfig_set_string, "nr_inodes", "8", 0) == 0 &&
        ::syscall(SYS_fsconfig, fs, fsconfig_set_string, "mode", "0700", 0) == 0 &&
        ::syscall(SYS_fsconfig, fs, fsconfig_cmd_create, nullptr, nullptr, 0) == 0)
        mount = static_cast<int>(::syscall(SYS_fsmount, fs, fsmount_cloexec,
                                           mount_attr_nosuid | mount_attr_nodev | mount_attr_noexec));
    int error = mount < 0 ? errno : 0;
    ::close(fs);
    if (mount >= 0) {
        writer = ::openat(mount, "output", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (writer >= 0) reader = ::openat(mount, "output", O_RDONLY | O_CLOEXEC);
        if (reader < 0) error = errno;
        ::close(mount);
    }
    if (error != 0) {
        close_quietly(writer);
        writer = -1;
    }
    return error;
}

// Copies file `from` into `to` from offset `start` to the end `from` has now, holes kept as holes;
// returns where it got to (the end, unless the grader's disk is full). With `exact`, `to` then
// takes `from`'s size too (a child may have shortened its output).
off_t copy_output(int from, int to, off_t start, bool exact)
{
    struct stat info {};
    if (::fstat(from, &info) != 0) return start;
    const off_t end = info.st_size;
    std::vector<char> buffer(64 * 1024);
    for (off_t at = start; at < end;) {
        const off_t data = ::lseek(from, at, SEEK_DATA);
        if (data < 0 || data >= end) break;
        off_t hole = ::lseek(from, data, SEEK_HOLE);
        if (hole < 0 || hole > end) hole = end;
        for (off_t position = data; position < hole;) {
            const auto want = static_cast<std::size_t>(std::min<off_t>(static_cast<off_t>(buffer.size()), hole - position));
            const ssize_t got = ::pread(from, buffer.data(), want, position);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return position;
            for (ssize_t put = 0; put < got;) {
                const ssize_t written = ::pwrite(to, buffer.data() + put, static_cast<std::size_t>(got - put), position + put);
                if (written < 0 && errno == EINTR) continue;
                if (written <= 0) return position + put;  // the grader's disk is full: what was copied stays
                put += written;
            }
            position += got;
        }
        at = hole;
    }
    if (exact && ::ftruncate(to, end) != 0) {}  // best effort, as the copy
    return end;
}

}  // namespace

// What a child holds beyond its process: its tree's control group, its bounded output.
struct ChildBounds {
    std::unique_ptr<TreeGroup> group;
    int writer = -1;       // the child's output on its own tmpfs (the grader closes it after fork)
    int reader = -1;       // the same file, read back while the child runs and once it is reaped
    int destination = -1;  // output_file
    off_t mirrored = 0;    // how much of the output the destination has while the child runs
    bool live = false;     // in the mirror's list
    ChildBounds() = default;
    ChildBounds(const ChildBounds&) = delete;
    ChildBounds& operator=(const ChildBounds&) = delete;
    ~ChildBounds();
};

namespace {

// Copies the bounded output of every running child into its file as it grows (every 50 ms), so
// that a log can be read while its child runs, as when the child wrote it directly; the copy at
// reap is the exact one. One thread for the process, started with the first such child; never
// destroyed, as the thread may outlive main.
class OutputMirror {
public:
    static OutputMirror& get()
    {
        static OutputMirror* mirror = new OutputMirror;
        return *mirror;
    }
    void add(ChildBounds& bounds)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!started_) {
            try {
                std::thread([this] { run(); }).detach();
                started_ = true;
            } catch (const std::exception&) {
                return;  // no mirror: the output reaches its file at reap only
            }
        }
        live_.push_back(&bounds);
        bounds.live = true;
        wake_.notify_one();
    }
    // Once this returns, the thread is not copying `bounds` and never will again.
    void remove(ChildBounds& bounds)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        live_.erase(std::remove(live_.begin(), live_.end(), &bounds), live_.end());
        bounds.live = false;
    }

private:
    [[noreturn]] void run()
    {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return !live_.empty(); });
            for (ChildBounds* bounds : live_)
                bounds->mirrored = copy_output(bounds->reader, bounds->destination, bounds->mirrored, false);
            wake_.wait_for(lock, std::chrono::milliseconds(50));
        }
    }
    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<ChildBounds*> live_;
    bool started_ = false;
};

}  // namespace

ChildBounds::~ChildBounds()
{
    if (live) OutputMirror::get().remove(*this);
    for (int fd : {writer, reader, destination}) close_quietly(fd);
}

namespace {

// The tree's group and the bounded output `options` ask for, before fork; `error` says why
// they cannot be had (a failure to start).
void prepare_bounds(const SpawnOptions& options, ChildBounds& bounds, std::string& error)
{
    const ProcessLimits& limits = options.limits;
    if (limits.tree_processes > 0 || limits.tree_memory_bytes > 0) {
        const CgroupSupport& support = cgroup_support();
        const std::uint64_t processes = support.processes ? limits.tree_processes : 0;
        const std::uint64_t memory = support.memory ? limits.tree_memory_bytes : 0;
        if (processes > 0 || memory > 0) {
            std::string why;
            bounds.group = TreeGroup::create(processes, memory, why);
            if (!bounds.group) {
                error = "cannot make a control group for the process tree: " + why;
                return;
            }
        }
    }
    if (!options.bounded_output || options.output_file.empty()) return;
    const int destination =
        ::open(options.output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (destination < 0) {
        error = "cannot open output file '" + options.output_file + "': " + errno_text(errno);
        return;
    }
    try {
        bounds.destination = above_fixed_fds(destination);  // closes it on failure
    } catch (const std::exception& e) {
        error = "cannot open output file '" + options.output_file + "': " + e.what();
        return;
    }
    if (!output_bound_problem().empty()) return;  // the child writes straight into the destination
    const std::uint64_t size = limits.max_file_bytes > 0 ? limits.max_file_bytes : max_child_file_bytes;
    int writer = -1, reader = -1;
    // A little over the file-size limit, so that a write past it meets that limit (SIGXFSZ) first.
    if (private_tmpfs_file(size + (64u << 10), writer, reader) != 0) return;
    try {
        bounds.writer = above_fixed_fds(writer);  // closes it on failure
        bounds.reader = reader;
    } catch (const std::exception&) {
        ::close(reader);
    }
}

}  // namespace

const std::string& output_bound_problem()
{
    static const std::string problem = [] {
        int writer = -1, reader = -1;
        const int error = private_tmpfs_file(64u << 10, writer, reader);
        close_quietly(writer);
        close_quietly(reader);
        if (error == 0) return std::string();
        if (error == ENOSYS)
            return std::string("the kernel cannot make a file system that is mounted nowhere (fsopen: Linux 5.2 or newer)");
        if (error == EPERM)
            return std::string("making a tmpfs needs the right to mount (CAP_SYS_ADMIN): the grader is not root");
        return "cannot make a tmpfs that is mounted nowhere: " + errno_text(error);
    }();
    return problem;
}

std::string ExitStatus::describe() const
{
    const std::string limit = limit_reached.empty() ? "" : " after reaching " + limit_reached;
    std::string text;
    switch (kind) {
        case Kind::exited:
            return "exit code " + std::to_string(code) + limit;
        case Kind::timed_out:
            return "timed out" + limit;
        case Kind::failed_to_start:
            return "failed to start: " + error;
        case Kind::signaled:
            break;
    }
    static const struct {
        int number;
        const char* name;
    } names[] = {
        {SIGSEGV, "SIGSEGV"},
        {SIGABRT, "SIGABRT"},
        {SIGBUS, "SIGBUS"},
        {SIGFPE, "SIGFPE"},
        {SIGKILL, "SIGKILL"},
        {SIGILL, "SIGILL"},
        {SIGTERM, "SIGTERM"},
        {SIGPIPE, "SIGPIPE"},
        {SIGINT, "SIGINT"},
        {SIGXCPU, "SIGXCPU"},
        {SIGTRAP, "SIGTRAP"},
        {SIGSYS, "SIGSYS"},
        {SIGXFSZ, "SIGXFSZ: wrote more output than the limit"},
    };
    text = "killed by signal " + std::to_string(signal);
    for (const auto& entry : names)
        if (entry.number == signal) {
            text += std::string(" (") + entry.name + ")";
            break;
        }
    return text + limit;
}

Child Child::spawn(const SpawnOptions& options)
{
    if (options.argv.empty()) throw std::runtime_error("Child::spawn: empty argv");

    // Pipes: [0] reads, [1] writes. The child reads `command` and writes `channel`.
    int command[2] = {-1, -1};
    int channel[2] = {-1, -1};
    int error_pipe[2] = {-1, -1};
    int handles[2] = {-1, -1};  // [0] the grader's, [1] the child's
    auto close_all = [&] {
        for (int fd : {command[0], command[1], channel[0], channel[1], error_pipe[0], error_pipe[1], handles[0], handles[1]})
            close_quietly(fd);
    };
    try {
        make_pipe(error_pipe);
        if (options.create_channel) {
            make_pipe(command);
            make_pipe(channel);
            // Bigger pipe, fewer round trips for multi-megabyte blobs (best effort).
            ::fcntl(channel[0], F_SETPIPE_SZ, 1 << 20);
            if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, handles) != 0) throw_errno("socketpair");
            handles[0] = above_fixed_fds(handles[0]);
            handles[1] = above_fixed_fds(handles[1]);
        }
    } catch (...) {
        close_all();
        throw;
    }

    // The tree's control group and the bounded output, made before fork: without them the child
    // does not start (its channel ends at once, as when exec fails).
    auto bounds = std::make_unique<ChildBounds>();
    std::string bounds_error;
    prepare_bounds(options, *bounds, bounds_error);
    if (!bounds_error.empty()) {
        for (int fd : {command[0], channel[1], handles[1], error_pipe[0], error_pipe[1]}) close_quietly(fd);
        Child child;
        child.channel_fd_ = channel[0];
        child.command_fd_ = command[1];
        child.handles_fd_ = handles[0];
        child.reaped_ = true;
        child.status_.kind = ExitStatus::Kind::failed_to_start;
        child.status_.error = bounds_error;
        return child;
    }

    std::vector<std::string> args = options.argv;
    std::vector<std::string> env = child_environment(options);
    std::vector<char*> argv = c_strings(args);
    std::vector<char*> envp = c_strings(env);

    ChildPlan plan;
    plan.argv = argv.data();
    plan.envp = envp.data();
    plan.output_path = options.output_file.empty() ? "/dev/null" : options.output_file.c_str();
    plan.output_fd = bounds->writer >= 0 ? bounds->writer : bounds->destination;
    if (bounds->group) {
        plan.join = bounds->group->join_descriptors().data();
        plan.join_count = static_cast<int>(bounds->group->join_descriptors().size());
    }
    plan.working_dir = options.working_dir.empty() ? nullptr : options.working_dir.c_str();
    plan.command_read = command[0];
    plan.channel_write = channel[1];
    plan.handles = handles[1];
    plan.error_pipe = error_pipe[1];
    struct rlimit files {};
    plan.max_fd = ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < (1u << 16)
                      ? static_cast<int>(files.rlim_cur)
                      : (1 << 16);
    const ProcessLimits& limits = options.limits;
    for (auto [resource, value] : {std::pair<int, unsigned long>{RLIMIT_FSIZE, limits.max_file_bytes},
                                   {RLIMIT_NPROC, limits.max_processes},
                                   {RLIMIT_NOFILE, limits.max_open_files},
                                   {RLIMIT_CPU, limits.cpu_seconds},
                                   {RLIMIT_DATA, limits.max_data_bytes}})
        if (value != 0) plan.limits[plan.limit_count++] = {resource, static_cast<rlim_t>(value)};
    plan.drop_privileges = ::geteuid() == 0 && options.run_as_uid >= 0 && options.run_as_gid >= 0;
    plan.uid = static_cast<uid_t>(options.run_as_uid);
    plan.gid = static_cast<gid_t>(options.run_as_gid);
    plan.setup = options.child_setup ? &options.child_setup : nullptr;

    // Registered as live before any other thread can look for orphans (kill_orphaned_children).
    std::unique_lock<std::mutex> registering(live_children_mutex);
    pid_t pid = ::fork();
    if (pid < 0) {
        int saved = errno;
        close_all();
        errno = saved;
        throw_errno("fork");
    }
    if (pid == 0) exec_child(plan);
    live_children.insert(pid);
    registering.unlock();

    // Also set the group from this side: whichever of the two runs first, the group exists
    // before spawn() returns (EACCES here just means the child has already exec'd).
    ::setpgid(pid, pid);
    close_quietly(command[0]);
    close_quietly(channel[1]);
    close_quietly(handles[1]);
    ::close(error_pipe[1]);
    close_quietly(bounds->writer);  // the child's
    bounds->writer = -1;
    if (bounds->reader < 0) {  // the child writes straight into the destination: nothing to copy
        close_quietly(bounds->destination);
        bounds->destination = -1;
    } else {
        OutputMirror::get().add(*bounds);
    }

    Child child;
    child.pid_ = pid;
    child.channel_fd_ = channel[0];
    child.command_fd_ = command[1];
    child.handles_fd_ = handles[0];
    child.exit_code_reports_signal_ = options.exit_code_reports_signal;
    child.bounds_ = std::move(bounds);

    // The error pipe closes on a successful exec (EOF) or carries the reason it failed.
    SpawnFailure failure{};
    ssize_t got;
    do {
        got = ::read(error_pipe[0], &failure, sizeof failure);
    } while (got < 0 && errno == EINTR);
    ::close(error_pipe[0]);
    if (got == static_cast<ssize_t>(sizeof failure)) {
        reap(pid);
        forget_live_child(pid);
        child.reaped_ = true;
        child.status_.kind = ExitStatus::Kind::failed_to_start;
        child.status_.error = failure_text(failure, options);
        child.settle_bounds();
    }
    return child;
}

Child::Child() = default;

Child::Child(Child&& other) noexcept
    : pid_(other.pid_),
      channel_fd_(other.channel_fd_),
      command_fd_(other.command_fd_),
      handles_fd_(other.handles_fd_),
      exit_code_reports_signal_(other.exit_code_reports_signal_),
      reaped_(other.reaped_),
      status_(std::move(other.status_)),
      bounds_(std::move(other.bounds_))
{
    other.pid_ = -1;
    other.channel_fd_ = -1;
    other.command_fd_ = -1;
    other.handles_fd_ = -1;
    other.reaped_ = true;
}

Child& Child::operator=(Child&& other) noexcept
{
    if (this != &other) {
        Child discarded(std::move(*this));  // its destructor kills and reaps what we held
        pid_ = other.pid_;
        channel_fd_ = other.channel_fd_;
        command_fd_ = other.command_fd_;
        handles_fd_ = other.handles_fd_;
        exit_code_reports_signal_ = other.exit_code_reports_signal_;
        reaped_ = other.reaped_;
        status_ = std::move(other.status_);
        bounds_ = std::move(other.bounds_);
        other.pid_ = -1;
        other.channel_fd_ = -1;
        other.command_fd_ = -1;
        other.handles_fd_ = -1;
        other.reaped_ = true;
    }
    return *this;
}

Child::~Child()
{
    if (pid_ > 0 && !reaped_) kill_and_reap();
    close_quietly(channel_fd_);
    close_quietly(command_fd_);
    close_quietly(handles_fd_);
}

ExitStatus Child::wait_until(Clock::time_point deadline)
{
    if (reaped_ || pid_ <= 0) return status_;

    bool terminated = wait_for_termination(pid_, deadline);
    // Either way, nothing of the group may outlive the child: grandchildren it left behind, or
    // the whole group on timeout.
    kill_group(pid_);
    int wait_status = reap(pid_);
    reaped_ = true;
    forget_live_child(pid_);

    bool killed_by_us = !terminated && WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL;
    if (killed_by_us) {
        status_ = ExitStatus{};
        status_.kind = ExitStatus::Kind::timed_out;
        status_.signal = SIGKILL;
    } else {
        // Terminated on its own, possibly in the instant between the deadline and our kill.
        status_ = decode(wait_status, exit_code_reports_signal_);
    }
    settle_bounds();
    return status_;
}

void Child::settle_bounds()
{
    if (!bounds_) return;
    if (bounds_->group) {
        // Whatever of the tree is left (a process that left the process group) dies with it.
        bounds_->group->kill_all();
        if (bounds_->group->memory_limit_reached())
            status_.limit_reached = "the memory limit of its process tree (" +
                                    std::to_string(bounds_->group->max_memory_bytes() >> 20) + " MiB)";
        else if (bounds_->group->process_limit_reached())
            status_.limit_reached =
                "the process limit of its process tree (" + std::to_string(bounds_->group->max_processes()) + ")";
        bounds_->group.reset();
    }
    if (bounds_->live) OutputMirror::get().remove(*bounds_);
    if (bounds_->reader >= 0 && bounds_->destination >= 0) copy_output(bounds_->reader, bounds_->destination, 0, true);
    bounds_.reset();
}

// The caller has given up on the child: this is wait_until with a deadline already passed, so a
// child still running is reported as timed_out (signal SIGKILL), one already gone as it ended.
ExitStatus Child::kill_and_reap()
{
    return wait_until(Clock::now());
}

void become_subreaper()
{
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

namespace {

struct ProcessLink {
    int pid = 0, parent = 0;
    char state = 0;
};

// One process's link from /proc/PID/stat ("pid (comm) state ppid ...": comm may hold spaces and
// parentheses, so the fields are read after the last ')'); false where it cannot be read.
bool read_link(const std::string& pid, ProcessLink& link)
{
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    long ppid = 0;
    if (close == std::string::npos || std::sscanf(text.c_str() + close + 1, " %c %ld", &link.state, &ppid) != 2)
        return false;
    link.pid = std::atoi(pid.c_str());
    link.parent = static_cast<int>(ppid);
    return true;
}

// Every process's parent and state letter.
std::vector<ProcessLink> process_links()
{
    std::vector<ProcessLink> links;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return links;
    while (const dirent* entry = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        ProcessLink link;
        if (*end != '\0' || pid <= 0 || !read_link(entry->d_name, link)) continue;
        links.push_back(link);
    }
    ::closedir(proc);
    return links;
}

// `root` and every process below it in `links`, with its state letter.
std::map<int, char> tree_below(int root, const std::vector<ProcessLink>& links)
{
    std::map<int, char> tree{{root, 0}};
    for (const auto& link : links)
        if (link.pid == root) tree[root] = link.state;
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& link : links)
            if (tree.count(link.parent) && tree.emplace(link.pid, link.state).second) grew = true;
    }
    return tree;
}

// Stopped (SIGSTOP: 'T'; a tracer's stop: 't') or no longer running at all (zombie, dead).
bool stopped_state(char state)
{
    return state == 'T' || state == 't' || state == 'Z' || state == 'X' || state == 'x';
}

// What a thread has run: its CPU ticks (utime + stime, /proc/PID/task/TID/stat) and its context
// switches (/proc/PID/task/TID/status), which any run of it, however short, increments.
std::string thread_activity(const std::string& task)
{
    std::ifstream stat(task + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    std::string activity;
    if (close != std::string::npos) {
        std::istringstream fields(text.substr(close + 1));
        std::string field;
        for (int k = 3; k <= 15 && fields >> field; ++k)
            if (k == 14 || k == 15) activity += field + " ";  // utime, stime
    }
    std::ifstream status(task + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.find("ctxt_switches:") != std::string::npos) activity += line + " ";
    return activity;
}

}  // namespace

int Child::stop_tree(bool stopped)
{
    if (pid_ <= 0 || reaped_) return 0;
    const int signal = stopped ? SIGSTOP : SIGCONT;
    std::set<int> signalled;
    // A process that forks between two scans is found by the next one; a tree that keeps
    // changing is given up on after a few rounds (tree_stopped() tells whether it held still).
    for (int round = 0; round < 8; ++round) {
        bool fresh = false;
        for (const auto& [pid, state] : tree_below(pid_, process_links()))
            if (signalled.insert(pid).second) {
                ::kill(pid, signal);
                fresh = true;
            }
        if (!fresh) break;
    }
    return static_cast<int>(signalled.size());
}

bool Child::tree_stopped(std::chrono::milliseconds patience)
{
    if (pid_ <= 0 || reaped_) return false;
    const auto give_up = std::chrono::steady_clock::now() + patience;
    // Two scans in a row with every process stopped: one that was continued after the first
    // scan read it (by another of the tree, not stopped yet) runs during the second.
    for (int clean = 0; clean < 2;) {
        bool all = true;
        for (const auto& [pid, state] : tree_below(pid_, process_links()))
            if (!stopped_state(state)) {
                all = false;
                ::kill(pid, SIGSTOP);  // continued by another process of the tree, or not stopped yet
            }
        clean = all ? clean + 1 : 0;
        if (clean == 2) break;
        // Patience is for processes still running: a first clean scan always gets its second (with
        // none, the check after the scan gave up on a tree that was all stopped, and stayed_paused()
        // never held: the reference's anchor after the turns and the idle windows were dropped).
        if (!all && std::chrono::steady_clock::now() > give_up) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

std::map<int, std::string> Child::tree_activity() const
{
    std::map<int, std::string> activity;
    if (pid_ <= 0 || reaped_) return activity;
    for (const auto& [pid, state] : tree_below(pid_, process_links())) {
        const std::string dir = "/proc/" + std::to_string(pid) + "/task";
        std::string all;
        if (DIR* tasks = ::opendir(dir.c_str())) {
            std::vector<std::string> names;
            while (const dirent* entry = ::readdir(tasks))
                if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
            ::closedir(tasks);
            std::sort(names.begin(), names.end());
            for (const auto& name : names) all += name + ": " + thread_activity(dir + "/" + name) + "; ";
        }
        activity[pid] = std::string(1, state ? state : '?') + " " + all;
    }
    return activity;
}

int kill_orphaned_children(int except)
{
    // The children of every Child object still in use, in this thread or another, are not orphans.
    std::lock_guard<std::mutex> scanning(live_children_mutex);
    const int self = static_cast<int>(::getpid());
    int killed = 0;
    for (const auto& link : process_links()) {
        if (link.parent != self || link.pid == except || live_children.count(link.pid)) continue;
        ::kill(static_cast<pid_t>(link.pid), SIGKILL);
        ::waitpid(static_cast<pid_t>(link.pid), nullptr, 0);
        ++killed;
    }
    return killed;
}

std::string read_file_tail(const std::string& path, std::size_t max_bytes)
{
    // A child cannot make the grader read another file through a link it planted (O_NOFOLLOW),
    // nor block it on a FIFO (O_NONBLOCK, and only regular files are read).
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return {};
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        return {};
    }
    if (static_cast<std::uint64_t>(info.st_size) > max_bytes)
        ::lseek(fd, info.st_size - static_cast<off_t>(max_bytes), SEEK_SET);

    // Reads to the end even if the file grew meanwhile, trimming so memory stays bounded.
    std::string text;
    char buffer[64 * 1024];
    for (;;) {
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        text.append(buffer, static_cast<std::size_t>(got));
        if (text.size() > 2 * max_bytes + sizeof buffer) text.erase(0, text.size() - max_bytes);
    }
    ::close(fd);
    if (text.size() > max_bytes) text.erase(0, text.size() - max_bytes);
    return text;
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit, std::size_t max_output,
                          const std::string& working_dir)
{
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/grader-output-XXXXXX";
    int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw_errno("mkstemp " + pattern);
    ::close(fd);  // the child reopens it by name

    // Removes the output file however we leave (spawn may throw).
    struct RemoveFile {
        std::string path;
        ~RemoveFile() { ::unlink(path.c_str()); }
    } remove_output{pattern};

    SpawnOptions options;
    options.argv = argv;
    options.working_dir = working_dir;
    options.output_file = pattern;

    CommandResult result;
    auto start = Clock::now();
    Child child = Child::spawn(options);
    result.status = child.wait_until(start + limit);
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.output = read_file_tail(pattern, max_output);
    return result;
}

int parent_of(int pid)
{
    ProcessLink link;
    return pid > 0 && read_link(std::to_string(pid), link) ? link.parent : 0;
}

}  // namespace harness

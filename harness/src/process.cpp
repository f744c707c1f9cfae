// Child processes: spawn in a fresh process group, wait with a deadline, kill the whole group.
//
// Between fork() and exec() the child only makes async-signal-safe system calls: everything it
// needs (argv, environment, paths) is prepared before fork, so spawning from a multithreaded
// grader is safe.
#include "harness/process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include <dirent.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kChannelVariable = "GRADER_CHANNEL_FD";

// What the child reports through the error pipe when it cannot reach exec().
enum class SpawnStage : int { stdin_redirect, output_open, chdir, exec };
struct SpawnFailure {
    SpawnStage stage;
    int error;
};

std::string errno_text(int error) { return std::strerror(error); }

[[noreturn]] void throw_errno(const std::string& what) {
    throw std::runtime_error(what + ": " + errno_text(errno));
}

void close_quietly(int fd) {
    if (fd >= 0) ::close(fd);
}

// Moves `fd` to a number >= 3 (keeping CLOEXEC), so redirecting stdio in the child cannot
// overwrite it. Only matters when the grader itself runs with a standard stream closed.
int above_stdio(int fd) {
    if (fd > 2) return fd;
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int saved = errno;
    ::close(fd);
    if (moved < 0) {
        errno = saved;
        throw_errno("fcntl(F_DUPFD_CLOEXEC)");
    }
    return moved;
}

// A pipe whose ends are close-on-exec and clear of fds 0-2. ends[0] reads, ends[1] writes.
void make_pipe(int ends[2]) {
    if (::pipe2(ends, O_CLOEXEC) != 0) throw_errno("pipe2");
    try {
        ends[0] = above_stdio(ends[0]);
        ends[1] = above_stdio(ends[1]);
    } catch (...) {
        close_quietly(ends[0]);
        close_quietly(ends[1]);
        throw;
    }
}

std::string variable_name(const std::string& entry) { return entry.substr(0, entry.find('=')); }

// The child's environment: ours, minus any stale channel variable and the names that
// `extra_env` overrides, plus `extra_env`, plus the channel variable when there is a channel.
std::vector<std::string> child_environment(const SpawnOptions& options, int channel_write_fd) {
    std::vector<std::string> overridden{kChannelVariable};
    for (const auto& entry : options.extra_env) overridden.push_back(variable_name(entry));

    std::vector<std::string> env;
    for (char** entry = environ; entry && *entry; ++entry) {
        std::string text = *entry;
        bool replaced = false;
        for (const auto& name : overridden) replaced = replaced || variable_name(text) == name;
        if (!replaced) env.push_back(std::move(text));
    }
    env.insert(env.end(), options.extra_env.begin(), options.extra_env.end());
    if (channel_write_fd >= 0)
        env.push_back(std::string(kChannelVariable) + "=" + std::to_string(channel_write_fd));
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> pointers;
    for (auto& s : strings) pointers.push_back(s.data());
    pointers.push_back(nullptr);
    return pointers;
}

[[noreturn]] void report_and_exit(int error_pipe, SpawnStage stage) {
    SpawnFailure failure{stage, errno};
    ssize_t ignored = ::write(error_pipe, &failure, sizeof failure);
    (void)ignored;
    ::_exit(127);
}

// Runs in the forked child: async-signal-safe calls only, and it never returns.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, const char* output_path,
                             const char* working_dir, int channel_write_fd, int error_pipe,
                             rlim_t max_file_bytes) {
    ::setpgid(0, 0);

    // Start the program with a clean signal state: the grader may block or ignore signals
    // (SIGPIPE, typically), and ignored dispositions survive exec.
    sigset_t nothing;
    sigemptyset(&nothing);
    ::sigprocmask(SIG_SETMASK, &nothing, nullptr);
    ::signal(SIGPIPE, SIG_DFL);

    // A crashing student program should not spend time writing a core file.
    struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    // Nor fill the disk: a program that prints without end gets SIGXFSZ at this size.
    struct rlimit file_size = {max_file_bytes, max_file_bytes};
    ::setrlimit(RLIMIT_FSIZE, &file_size);

    int input = ::open("/dev/null", O_RDONLY);
    if (input < 0 || ::dup2(input, 0) < 0) report_and_exit(error_pipe, SpawnStage::stdin_redirect);
    if (input > 2) ::close(input);

    // Opened before chdir, so a relative output path is relative to the grader's directory.
    int output = ::open(output_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (output < 0 || ::dup2(output, 1) < 0 || ::dup2(output, 2) < 0)
        report_and_exit(error_pipe, SpawnStage::output_open);
    if (output > 2) ::close(output);

    // The channel's write end is the one pipe end that must survive exec.
    if (channel_write_fd >= 0) ::fcntl(channel_write_fd, F_SETFD, 0);

    if (working_dir && ::chdir(working_dir) != 0) report_and_exit(error_pipe, SpawnStage::chdir);

    ::execvpe(argv[0], argv, envp);
    report_and_exit(error_pipe, SpawnStage::exec);
}

std::string failure_text(const SpawnFailure& failure, const SpawnOptions& options) {
    std::string what;
    switch (failure.stage) {
        case SpawnStage::stdin_redirect: what = "cannot open /dev/null"; break;
        case SpawnStage::output_open: what = "cannot open output file '" + options.output_file + "'"; break;
        case SpawnStage::chdir: what = "cannot change directory to '" + options.working_dir + "'"; break;
        case SpawnStage::exec: what = "cannot execute '" + options.argv.front() + "'"; break;
    }
    return what + ": " + errno_text(failure.error);
}

ExitStatus decode(int wait_status) {
    ExitStatus status;
    if (WIFEXITED(wait_status)) {
        status.kind = ExitStatus::Kind::exited;
        status.code = WEXITSTATUS(wait_status);
    } else {
        status.kind = ExitStatus::Kind::signaled;
        status.signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
    }
    return status;
}

int reap(int pid) {
    int wait_status = 0;
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    return wait_status;
}

void kill_group(int pid) {
    // The group id is the child's pid. Should the child not lead a group (it never reached its
    // setpgid), kill(-pid) finds nothing and only the child itself is signalled.
    if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
}

// True once the child has terminated. Uses WNOWAIT so it stays a zombie: the zombie keeps its
// pid, and so the process group id, reserved until we have killed what is left of the group.
bool has_terminated(int pid) {
    siginfo_t info{};
    int rc;
    do {
        rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc < 0 && errno == EINTR);
    return rc == 0 && info.si_pid == pid;
}

// Rounded up, so a poll() that times out has really reached the deadline.
int milliseconds_until(Clock::time_point deadline) {
    auto now = Clock::now();
    if (deadline <= now) return 0;   // also keeps time_point::min() from overflowing below
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    return static_cast<int>(std::max<long long>(0, std::min<long long>(left, 1 << 30)));
}

// Waits until the child terminates (true) or the deadline passes (false). Sleeps in poll() on a
// pidfd where the kernel has them; otherwise checks every few milliseconds.
bool wait_for_termination(int pid, Clock::time_point deadline) {
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

}  // namespace

std::string ExitStatus::describe() const {
    switch (kind) {
        case Kind::exited: return "exit code " + std::to_string(code);
        case Kind::timed_out: return "timed out";
        case Kind::failed_to_start: return "failed to start: " + error;
        case Kind::signaled: break;
    }
    static const struct { int number; const char* name; } names[] = {
        {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"},
        {SIGKILL, "SIGKILL"}, {SIGILL, "SIGILL"},   {SIGTERM, "SIGTERM"}, {SIGPIPE, "SIGPIPE"},
        {SIGINT, "SIGINT"},   {SIGXCPU, "SIGXCPU"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},
        {SIGXFSZ, "SIGXFSZ: wrote more output than the limit"},
    };
    std::string text = "killed by signal " + std::to_string(signal);
    for (const auto& entry : names)
        if (entry.number == signal) return text + " (" + entry.name + ")";
    return text;
}

Child Child::spawn(const SpawnOptions& options) {
    if (options.argv.empty()) throw std::runtime_error("Child::spawn: empty argv");

    int channel[2] = {-1, -1};
    int error_pipe[2] = {-1, -1};
    make_pipe(error_pipe);
    if (options.create_channel) {
        try {
            make_pipe(channel);
        } catch (...) {
            close_quietly(error_pipe[0]);
            close_quietly(error_pipe[1]);
            throw;
        }
        // Bigger pipe, fewer round trips for multi-megabyte blobs (best effort).
        ::fcntl(channel[0], F_SETPIPE_SZ, 1 << 20);
    }

    std::vector<std::string> args = options.argv;
    std::vector<std::string> env = child_environment(options, channel[1]);
    std::vector<char*> argv = c_strings(args);
    std::vector<char*> envp = c_strings(env);
    const char* output_path = options.output_file.empty() ? "/dev/null" : options.output_file.c_str();
    const char* working_dir = options.working_dir.empty() ? nullptr : options.working_dir.c_str();

    pid_t pid = ::fork();
    if (pid < 0) {
        int saved = errno;
        for (int fd : {channel[0], channel[1], error_pipe[0], error_pipe[1]}) close_quietly(fd);
        errno = saved;
        throw_errno("fork");
    }
    if (pid == 0)
        exec_child(argv.data(), envp.data(), output_path, working_dir, channel[1], error_pipe[1],
                   static_cast<rlim_t>(options.max_file_bytes));

    // Also set the group from this side: whichever of the two runs first, the group exists
    // before spawn() returns (EACCES here just means the child has already exec'd).
    ::setpgid(pid, pid);
    close_quietly(channel[1]);
    ::close(error_pipe[1]);

    Child child;
    child.pid_ = pid;
    child.channel_fd_ = channel[0];

    // The error pipe closes on a successful exec (EOF) or carries the reason it failed.
    SpawnFailure failure{};
    ssize_t got;
    do {
        got = ::read(error_pipe[0], &failure, sizeof failure);
    } while (got < 0 && errno == EINTR);
    ::close(error_pipe[0]);
    if (got == static_cast<ssize_t>(sizeof failure)) {
        reap(pid);
        child.reaped_ = true;
        child.status_.kind = ExitStatus::Kind::failed_to_start;
        child.status_.error = failure_text(failure, options);
    }
    return child;
}

Child::Child(Child&& other) noexcept
    : pid_(other.pid_), channel_fd_(other.channel_fd_), reaped_(other.reaped_),
      status_(std::move(other.status_)) {
    other.pid_ = -1;
    other.channel_fd_ = -1;
    other.reaped_ = true;
}

Child& Child::operator=(Child&& other) noexcept {
    if (this != &other) {
        Child discarded(std::move(*this));   // its destructor kills and reaps what we held
        pid_ = other.pid_;
        channel_fd_ = other.channel_fd_;
        reaped_ = other.reaped_;
        status_ = std::move(other.status_);
        other.pid_ = -1;
        other.channel_fd_ = -1;
        other.reaped_ = true;
    }
    return *this;
}

Child::~Child() {
    if (pid_ > 0 && !reaped_) kill_and_reap();
    close_quietly(channel_fd_);
}

ExitStatus Child::wait_until(Clock::time_point deadline) {
    if (reaped_ || pid_ <= 0) return status_;

    bool terminated = wait_for_termination(pid_, deadline);
    // Either way, nothing of the group may outlive the child: grandchildren it left behind, or
    // the whole group on timeout.
    kill_group(pid_);
    int wait_status = reap(pid_);
    reaped_ = true;

    bool killed_by_us = !terminated && WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL;
    if (killed_by_us) {
        status_ = ExitStatus{};
        status_.kind = ExitStatus::Kind::timed_out;
        status_.signal = SIGKILL;
    } else {
        // Terminated on its own, possibly in the instant between the deadline and our kill.
        status_ = decode(wait_status);
    }
    return status_;
}

// The caller has given up on the child: this is wait_until with a deadline already passed, so a
// child still running is reported as timed_out (signal SIGKILL), one already gone as it ended.
ExitStatus Child::kill_and_reap() { return wait_until(Clock::now()); }

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

int kill_orphaned_children(int except) {
    const pid_t self = ::getpid();
    int killed = 0;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return 0;
    while (const dirent* entry = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == except) continue;
        std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
        std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse after the last ')'.
        const std::size_t close = text.rfind(')');
        if (close == std::string::npos) continue;
        char state = 0;
        long ppid = 0;
        if (std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &ppid) != 2 || ppid != self) continue;
        ::kill(static_cast<pid_t>(pid), SIGKILL);
        ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
        ++killed;
    }
    ::closedir(proc);
    return killed;
}

std::string read_file_tail(const std::string& path, std::size_t max_bytes) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    struct stat info{};
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
        static_cast<std::uint64_t>(info.st_size) > max_bytes)
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

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                          std::size_t max_output, const std::string& working_dir) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/grader-output-XXXXXX";
    int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw_errno("mkstemp " + pattern);
    ::close(fd);   // the child reopens it by name

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

}  // namespace harness

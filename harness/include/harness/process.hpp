// Child processes for the grader: spawn in a fresh process group, capture output, kill on timeout.
//
// Host-only (no CUDA). The grader runs every piece of student code (the compiler on a student's
// file, each exercise's runner) through this, so a hang or crash ends only that child.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness {

// How a child ended, decoded from waitpid's status.
struct ExitStatus {
    enum class Kind { exited, signaled, timed_out, failed_to_start };
    Kind kind = Kind::failed_to_start;
    int code = 0;        // exit code when kind == exited
    int signal = 0;      // signal number when kind == signaled (or the signal we killed it with)
    std::string error;   // why it failed to start, when kind == failed_to_start

    bool ok() const { return kind == Kind::exited && code == 0; }
    std::string describe() const;   // "exit code 3", "signal 11 (SIGSEGV)", "timed out", ...
};

// No file a child writes (its captured output included) may grow past this; past it the child
// gets SIGXFSZ, which describe() names.
constexpr unsigned long max_child_file_bytes = 256ul << 20;

struct SpawnOptions {
    std::vector<std::string> argv;             // argv[0] is the program (PATH is searched)
    std::vector<std::string> extra_env;        // "NAME=value" entries added to the environment
    std::string working_dir;                   // empty: inherit
    std::string output_file;                   // stdout+stderr go here (truncated); empty: /dev/null
    bool create_channel = false;               // a private pipe child -> parent, see Channel below
    unsigned long max_file_bytes = max_child_file_bytes;   // RLIMIT_FSIZE of the child
};

// A running child in its own process group. Destruction kills the group and reaps the child.
class Child {
public:
    static Child spawn(const SpawnOptions& options);   // throws std::runtime_error on pipe/fork failure

    Child(Child&&) noexcept;
    Child& operator=(Child&&) noexcept;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    int pid() const { return pid_; }
    // Read end of the private channel (-1 without one). The child sees the write end's number in
    // the environment variable GRADER_CHANNEL_FD; it is not inherited by anything else.
    int channel_fd() const { return channel_fd_; }

    // Waits until the child exits or `deadline` passes; on deadline, SIGKILLs the whole process
    // group and reports Kind::timed_out. Reaps the child either way.
    ExitStatus wait_until(std::chrono::steady_clock::time_point deadline);
    // Kills the whole group now (SIGKILL) and reaps; returns the status as wait_until would.
    ExitStatus kill_and_reap();

private:
    Child() = default;
    int pid_ = -1;
    int channel_fd_ = -1;
    bool reaped_ = false;
    ExitStatus status_{};
};

// Runs a command to completion with a wall-clock limit, capturing its combined output.
struct CommandResult {
    ExitStatus status;
    std::string output;           // combined stdout+stderr, at most max_output bytes (tail kept)
    double seconds = 0;
};
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                          std::size_t max_output = 64 * 1024, const std::string& working_dir = {});

// Makes this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER): a
// grandchild that leaves its process group with setsid() is re-parented here when its parent
// dies, so kill_orphaned_children() can still end it.
void become_subreaper();
// SIGKILLs and reaps every child of this process that is not `except` (a Child still in use);
// returns how many there were.
int kill_orphaned_children(int except = -1);

// Reads the last `max_bytes` of a file (empty if it does not exist).
std::string read_file_tail(const std::string& path, std::size_t max_bytes);

}  // namespace harness

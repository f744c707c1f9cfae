// Child processes for the grader: spawn in a fresh process group, capture output, kill on timeout.
//
// Host-only (no CUDA). The grader runs every piece of student code (the compiler on a student's
// file, each exercise's runner) through this, so a hang or crash ends only that child.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/channel.hpp"

namespace harness {

// How a child ended, decoded from waitpid's status.
struct ExitStatus {
    enum class Kind { exited, signaled, timed_out, failed_to_start };
    Kind kind = Kind::failed_to_start;
    int code = 0;       // exit code when kind == exited
    int signal = 0;     // signal number when kind == signaled (or the signal we killed it with)
    std::string error;  // why it failed to start, when kind == failed_to_start
    // A limit of the whole process tree it reached (ProcessLimits::tree_*): "the memory limit of its
    // process tree (64 MiB)", "the process limit of its process tree (512)"; empty if none.
    std::string limit_reached;

    bool ok() const { return kind == Kind::exited && code == 0; }
    // "exit code 3", "signal 11 (SIGSEGV)", "timed out", ..., followed by " after reaching " and the
    // limit when one was reached.
    std::string describe() const;
};

// No file a child writes (its captured output included) may grow past this; past it the child
// gets SIGXFSZ, which describe() names.
constexpr unsigned long max_child_file_bytes = 256ul << 20;

// Resource limits set in the child before exec (setrlimit); 0 leaves a limit as inherited.
struct ProcessLimits {
    unsigned long max_file_bytes = max_child_file_bytes;  // RLIMIT_FSIZE
    unsigned long max_processes = 0;                      // RLIMIT_NPROC (counts per real uid: see run_as_uid)
    unsigned long max_open_files = 0;                     // RLIMIT_NOFILE
    unsigned long cpu_seconds = 0;                        // RLIMIT_CPU
    unsigned long max_data_bytes = 0;                     // RLIMIT_DATA (heap and private writable mappings)
    // The whole process tree together (the child and everything it starts, whatever their uid), in
    // a control group of its own that the child joins before it execs (harness/cgroup.hpp), where
    // this machine allows (cgroup_support() says what holds); 0: no such limit. The group is
    // emptied and removed once the child is reaped.
    unsigned long tree_processes = 0;     // pids.max: processes and threads
    unsigned long tree_memory_bytes = 0;  // memory (and swap): pages, tmpfs files and kernel memory
};

// Empty when Child::spawn can put a child's output on a file system of its own
// (SpawnOptions::bounded_output) on this machine, else why not (probed once).
const std::string& output_bound_problem();

struct SpawnOptions {
    std::vector<std::string> argv;       // argv[0] is the program (PATH is searched)
    std::vector<std::string> extra_env;  // "NAME=value" entries added to the environment
    bool clear_env = false;              // start from an empty environment (extra_env only)
    std::string working_dir;             // empty: inherit
    std::string output_file;             // stdout+stderr go here (truncated; a symbolic link
                                         // is refused); empty: /dev/null
    bool create_channel = false;         // two private pipes and a descriptor socket, see
                                         // child_command_fd (harness/channel.hpp). The child has
                                         // fds 0-2 (and these three), no other
    ProcessLimits limits;
    int run_as_uid = -1, run_as_gid = -1;  // when both >= 0 and the grader is root: drop to these
                                           // (setgroups({}), setresgid, setresuid) before exec
    // Runs in the child after its output file is open and before it drops privileges and execs:
    // async-signal-safe calls only (no allocation, no locks). Returns 0, or an errno value that
    // fails the spawn (failed_to_start). Sandbox::wrap uses it to prepare mounts as root.
    std::function<int()> child_setup;
    // The program is a wrapper (bwrap) that reports its own child's death by signal N as exit
    // code 128 + N: such a code is then reported as Kind::signaled with signal N.
    bool exit_code_reports_signal = false;
    // The output goes to a file on a tmpfs of its own, of limits.max_file_bytes and mounted nowhere,
    // and is copied into output_file (opened by the grader at spawn, truncated) as it grows (every
    // 50 ms, by one thread of the grader's) and exactly once the child is reaped: whatever the child
    // does with its descriptors (fallocate and the preallocation ioctls, which RLIMIT_FSIZE does not
    // bound, included) takes no more than that of memory, counted in its tree's memory limit, and
    // puts no more than the output itself on the grader's disk. Where the machine cannot
    // (output_bound_problem()), the output goes straight into output_file as without it.
    bool bounded_output = false;
};

struct ChildBounds;  // the control group and the bounded output of a child (process.cpp)

// A running child in its own process group. Destruction kills the group and reaps the child.
class Child {
public:
    static Child spawn(const SpawnOptions& options);  // throws std::runtime_error on pipe/fork failure

    Child(Child&&) noexcept;
    Child& operator=(Child&&) noexcept;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    int pid() const { return pid_; }  // -1 when it could not be started at all
    // The grader's ends of the private pipes (-1 without a channel): it reads the child's messages
    // from channel_fd() and writes commands to command_fd(). The child has the other ends as fds
    // child_command_fd and child_channel_fd; nothing else it starts inherits them unless it passes them on.
    int channel_fd() const { return channel_fd_; }
    int command_fd() const { return command_fd_; }
    // The grader's end of the descriptor socket (child_handles_fd in the child), or -1.
    int handles_fd() const { return handles_fd_; }

    // Waits until the child exits or `deadline` passes; on deadline, SIGKILLs the whole process
    // group and reports Kind::timed_out. Reaps the child either way.
    ExitStatus wait_until(std::chrono::steady_clock::time_point deadline);
    // Kills the whole group now (SIGKILL) and reaps; returns the status as wait_until would.
    ExitStatus kill_and_reap();
    // Stops (SIGSTOP) or continues (SIGCONT) the child and every process below it, found through
    // the parent links in /proc (a sandbox's processes descend from its bwrap, also across
    // --new-session). Returns how many processes were signalled. GPU work they queued before
    // the stop still runs: only the CPU side stops.
    int stop_tree(bool stopped);
    // After stop_tree(true): whether every process of the tree is stopped (or gone), in two scans
    // of /proc in a row; one still running (continued by another process of the tree before that
    // one stopped, a tracer that swallowed its SIGSTOP) is stopped again meanwhile. False where
    // some still ran after `patience`.
    bool tree_stopped(std::chrono::milliseconds patience);
    // What each process of the tree has run so far (its threads' CPU ticks and context switches,
    // and its state): unchanged between two calls only where none of them ran in between.
    std::map<int, std::string> tree_activity() const;

private:
    Child();
    void settle_bounds();  // once reaped: the tree's group emptied and removed, the output copied
    int pid_ = -1;
    int channel_fd_ = -1;
    int command_fd_ = -1;
    int handles_fd_ = -1;
    bool exit_code_reports_signal_ = false;
    bool reaped_ = false;
    ExitStatus status_{};
    std::unique_ptr<ChildBounds> bounds_;
};

// Runs a command to completion with a wall-clock limit, capturing its combined output.
struct CommandResult {
    ExitStatus status;
    std::string output;  // combined stdout+stderr, at most max_output bytes (tail kept)
    double seconds = 0;
};
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                          std::size_t max_output = 64 * 1024, const std::string& working_dir = {});

// Makes this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER): a
// grandchild that leaves its process group with setsid() is re-parented here when its parent
// dies, so kill_orphaned_children() can still end it.
void become_subreaper();
// SIGKILLs and reaps every child of this process that no Child object holds (in any thread) and
// that is not `except`; returns how many there were.
int kill_orphaned_children(int except = -1);

// The parent of `pid` (/proc/PID/stat), or 0 where it cannot be read.
int parent_of(int pid);

// Reads the last `max_bytes` of a file (empty if it does not exist, or is not a regular file: a
// symbolic link is not followed (O_NOFOLLOW), so a child cannot make the grader read another file
// through it, and a FIFO cannot block the grader).
std::string read_file_tail(const std::string& path, std::size_t max_bytes);

}  // namespace harness

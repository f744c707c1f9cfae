// The sandbox around every compile and every run of submitted code, built on bubblewrap (`bwrap`).
//
// Inside: an unprivileged uid, new PID, network, IPC, UTS and mount namespaces, a read-only view of
// the system (/usr, /etc, the libraries, the CUDA driver), a small private /tmp, the GPU's device
// nodes where the policy asks for them, and exactly the files the policy binds. The grader's build
// and install trees, reference/, other submissions, the work directory and the grader's own
// process are not visible. A run (a policy with the GPU) does not see the CUDA toolkit nor any
// compiler: their directories look empty and their programs and libraries in the system's
// directories are replaced by /dev/null (NVRTC, nvJitLink, nvcc, ptxas, gcc, clang, LLVM...); the
// driver's libraries stay. The environment holds only what the policy sets. / and /dev are
// read-only: /tmp and the policy's writable mounts are the only places to write. The whole PID
// namespace dies with the sandboxed program, so nothing it starts outlives it.
//
// Limits per sandbox (limits() lists what holds on this machine): the whole sandbox (bwrap and
// everything the program starts) is a process tree with a control group of its own
// (harness/cgroup.hpp) that bounds its processes (policy.limits.max_processes) and its memory,
// tmpfs files included (policy.limits.tree_memory_bytes, else max_data_bytes); its output goes to
// a tmpfs of its own of max_file_bytes, so that fallocate cannot reserve the grader's disk
// (SpawnOptions::bounded_output); its /tmp is a tmpfs of tmp_bytes. Without cgroups, the process
// limit falls back to RLIMIT_NPROC, which counts every process of the host uid: one pool shared
// by every sandbox of that uid, which is why a root grader gives each grading a uid of its own.
//
// When the grader runs as root, bwrap itself runs as this grading's host uid (harness/uid_slot.hpp:
// base + k, one per `grade` process; 65534, shared with every other grading, when no slot is
// free): the sandboxed program is then that uid on the host, and still uid 65534 inside. Mount
// sources are opened as root, so they may lie below directories that uid cannot enter (a checkout
// under /root); what the program reads or writes there is still subject to the files' own
// permissions (see make_writable).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/process.hpp"
#include "harness/uid_slot.hpp"

namespace harness {

struct SandboxMount {
    std::string host_path;     // a file or directory on the grader's side; not a symbolic link
    std::string sandbox_path;  // where the program sees it (absolute)
    bool writable = false;
};

struct SandboxPolicy {
    std::vector<SandboxMount> mounts;             // beyond the read-only system, bound in this order
    std::vector<std::string> system_paths_extra;  // more read-only system paths (e.g. a toolchain
                                                  // root), seen at their real path (links kept)
    bool gpu = false;                             // bind /dev/nvidia* (and /sys, which the driver reads)
    // With `gpu`: the one GPU's node (/dev/nvidiaN, gpu_device_node) to bind among the numbered
    // ones, so that the program sees that GPU alone; empty: every GPU of the machine.
    std::string gpu_node;
    std::string working_dir = "/tmp";             // inside the sandbox
    std::vector<std::string> env;                 // "NAME=value": the program's whole environment (but
                                                  // PWD, the working directory, which bwrap always sets)
    std::uint64_t tmp_bytes = 512ull << 20;       // size of the private /tmp (tmpfs)
    // A writable /dev/shm of this size (tmpfs), for a tool that talks to its program through shared
    // memory (compute-sanitizer); 0: /dev/shm read-only and empty, as the rest of /dev.
    std::uint64_t shm_bytes = 0;
    // Processes (per sandbox: the tree's control group, else RLIMIT_NPROC), open files, CPU
    // seconds, file size (and the output's tmpfs), memory per process (RLIMIT_DATA) and of the whole
    // sandbox (tree_memory_bytes; 0: max_data_bytes). tree_processes is taken from max_processes.
    ProcessLimits limits;
    // Whether the CUDA toolkit and the compilers are hidden; unset: hidden where the program may
    // use the GPU (a run needs the driver, never a compiler), shown for a compile. What
    // system_paths_extra names is never hidden; one inside a hidden directory (compute-sanitizer's
    // directory in a toolkit root) is shown alone, the rest of that directory still empty.
    std::optional<bool> hide_toolchains;
};

// Which limits hold for each sandbox on this machine, by name: "processes" (per sandbox),
// "memory" (of the whole sandbox), "output" (its size, fallocate included), "tmp" (the private
// /tmp's size), "file_size", "open_files", "cpu_seconds", "data" (per process). What does not
// hold is in `not_enforced`, with why.
struct SandboxLimits {
    std::vector<std::string> enforced;
    std::vector<std::pair<std::string, std::string>> not_enforced;  // name, why
};

class Sandbox {
public:
    // bubblewrap from `bwrap_path`, else PATH, else /usr/bin/bwrap, checked to work on this machine
    // by running a trivial program in it; nullopt with `why` filled (what to do included) when it
    // is missing, too old (before 0.8.0), or cannot create namespaces here. When the grader is
    // root, takes a slot of `uids` for as long as the Sandbox (or a copy) lives: call it once per
    // grading and keep it.
    static std::optional<Sandbox> find(std::string& why, const std::string& bwrap_path = {},
                                       const UidPool& uids = {});

    // The spawn options that run `inner` (argv, output file, channel) inside the sandbox. Only
    // inner's argv, output_file and create_channel are used: the policy decides the rest. The
    // sandboxed program has fds 0-2, plus child_command_fd and child_channel_fd with a channel.
    // A child killed by signal N is reported as signaled with N (bwrap exits with 128 + N).
    // Throws std::runtime_error when a mount source is missing or a symbolic link, or the policy
    // is malformed (a relative sandbox path, an environment entry without '=').
    SpawnOptions wrap(const SpawnOptions& inner, const SandboxPolicy& policy) const;

    // Makes `path` (not recursively) belong to the uid and gid the sandboxed program has on the
    // host, so that a writable mount of it is writable inside (a chown to host_uid() when the
    // grader is root; nothing otherwise). Throws std::runtime_error on failure.
    void make_writable(const std::string& path) const;

    // Whether policy.limits.max_processes holds: per sandbox with a control group, else as
    // RLIMIT_NPROC (false when bwrap must run as root and there is no control group).
    bool enforces_process_limit() const;
    // Whether each sandbox's processes are counted apart from every other's (a control group).
    bool process_limit_per_sandbox() const;
    // What holds per sandbox here (see SandboxLimits).
    SandboxLimits limits() const;
    // The uid (and gid) the sandboxed program has on the host: this grading's own when the grader
    // is root (65534 where no slot was free), the grader's when it is not, root's when bwrap must
    // run as root.
    uid_t host_uid() const;

    const std::string& bwrap() const { return bwrap_; }
    // "bubblewrap 0.8.0 (/usr/bin/bwrap), uid 65534 (host uid 2000000003, this grading's own)",
    // plus any weakness of this machine's setup (limits() has the limits).
    std::string describe() const;

private:
    // How bwrap runs: as an unprivileged uid (the grader is root: host_id_), as the grader's own
    // uid (it is not root), or as root when an unprivileged uid cannot create namespaces (the
    // sandbox's uid 65534 is then root outside, and RLIMIT_NPROC does not apply).
    enum class Mode { as_nobody, as_grader, as_root };

    std::string bwrap_;
    std::string version_;
    Mode mode_ = Mode::as_grader;
    std::string note_;  // why the mode is weaker than it should be
    // As nobody: the grading's uid slot (shared by copies), and the host uid and gid bwrap runs as:
    // the slot's, else 65534 (shared with every grading without one), with why in shared_uid_.
    std::shared_ptr<const UidSlot> slot_;
    uid_t host_id_ = 65534;
    std::string shared_uid_;
};

// Whether `path` is `root` or below it, compared as text: both absolute and normal (no "..", no
// trailing '/'; resolve links first where they matter).
bool is_below(const std::string& path, const std::string& root);

// The device node (/dev/nvidiaN) of the GPU at `pci_bus_id` ("0000:1b:00.0", as CUDA spells it),
// from the driver's <driver_proc>/gpus/<id>/information; empty when it cannot be told.
std::string gpu_device_node(const std::string& pci_bus_id, const std::string& driver_proc = "/proc/driver/nvidia");
// How many GPU nodes (/dev/nvidia0, /dev/nvidia1, ...) the machine has.
int gpu_device_node_count();

// `name` as exec finds it on PATH (an empty entry is the working directory), unresolved; empty
// when no entry holds an executable of that name.
std::string search_path(const std::string& name);

}  // namespace harness

// A control group per process tree: how many processes (threads included) and how much memory one
// child and everything it starts may take together, whatever uid they run as. Child::spawn puts a
// child in a group of its own before it execs when ProcessLimits asks for tree limits
// (harness/process.hpp); the group is emptied (SIGKILL) and removed once the child is reaped.
//
// Whichever the machine mounts: cgroup v1 (a `pids` and a `memory` hierarchy, each group created
// below the grader's own group there) or cgroup v2 (the unified hierarchy; groups below the
// grader's own group, which must hand the controllers down: the grader moves itself into a leaf
// `grader-<pid>` of its group when that is what it takes, since a group that holds processes
// cannot hand controllers down). Both need the right to write the cgroup file system: root, or a
// delegated v2 group. Where neither can be used, cgroup_support() says why and the tree limits are
// not enforced (the sandbox then falls back to RLIMIT_NPROC, which is one pool per uid).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace harness {

// What this machine lets the grader bound per process tree. Probed once per process (the first
// call creates, uses and removes a trial group).
struct CgroupSupport {
    bool processes = false;  // pids.max
    bool memory = false;     // memory.max (v2) or memory.limit_in_bytes (v1)
    std::string how;         // "cgroup v1 (pids: DIR, memory: DIR)", "cgroup v2 (DIR)"; empty with neither
    std::string why_not;     // why one or both cannot be used (what to do included); empty with both
};
const CgroupSupport& cgroup_support();

// One process tree's group (a directory per hierarchy used). Not copyable; the destructor kills
// what is left in it and removes it.
class TreeGroup {
public:
    // A new group with these limits (0: none for that resource; one the machine cannot enforce is
    // left out). nullptr with `error` filled when the group cannot be made.
    static std::unique_ptr<TreeGroup> create(std::uint64_t max_processes, std::uint64_t max_memory_bytes,
                                             std::string& error);
    ~TreeGroup();
    TreeGroup(const TreeGroup&) = delete;
    TreeGroup& operator=(const TreeGroup&) = delete;

    // Each hierarchy's cgroup.procs, open for writing (close-on-exec): a process that writes "0" to
    // each of them is in the group (async-signal-safe: what a forked child does before exec).
    const std::vector<int>& join_descriptors() const { return join_fds_; }
    // SIGKILLs every process in the group until it is empty (bounded: a few seconds at most).
    void kill_all();
    // Whether the kernel killed a process of the tree for memory (the group's OOM count), and
    // whether a fork or clone was refused at the process limit.
    bool memory_limit_reached() const;
    bool process_limit_reached() const;
    std::uint64_t max_processes() const { return max_processes_; }
    std::uint64_t max_memory_bytes() const { return max_memory_bytes_; }

private:
    TreeGroup() = default;
    struct Directory {
        std::string path;
        bool v2 = false;
        bool pids = false, memory = false;
    };
    std::vector<Directory> dirs_;
    std::vector<int> join_fds_;
    std::uint64_t max_processes_ = 0, max_memory_bytes_ = 0;
};

// The parsing behind cgroup_support(), for tests.
namespace cgroup_detail {

struct Mount {
    std::string root;                 // the mount's root inside its file system
    std::string point;                // where it is mounted
    std::string type;                 // "cgroup", "cgroup2", ...
    std::vector<std::string> options;  // the super options ("rw", "pids", "memory", "name=systemd")
};
// /proc/self/mountinfo; lines that do not parse are skipped.
std::vector<Mount> parse_mountinfo(const std::string& text);
// /proc/self/cgroup: controller name ("pids", "memory"; "" for the v2 line) -> the group's path.
std::map<std::string, std::string> parse_proc_cgroup(const std::string& text);
// The directory of this process's group for `controller` in a v1 hierarchy that has it, or (with
// controller "") in the v2 hierarchy; empty when none is mounted or the group lies outside the mount.
std::string own_group_directory(const std::vector<Mount>& mounts, const std::map<std::string, std::string>& groups,
                                const std::string& controller);
// "key value" lines (pids.events, memory.events, memory.oom_control): the value of `key`, or 0.
std::uint64_t flat_key(const std::string& text, const std::string& key);

}  // namespace cgroup_detail

}  // namespace harness

// A host uid of its own for each grading's sandboxes, when the grader is root.
//
// Without a control group per sandbox (cgroup v2 without delegation), the process limit falls back
// to RLIMIT_NPROC, which counts every process of the host uid: were every sandbox of the machine
// uid 65534, one submission's processes would stop another grading's build or runner from starting.
// So each grading (each `grade` process) takes slot k of a pool by an exclusive flock(2) on
// <directory>/slot-<k>.lock, held for the whole life of the process (a lock dies with the process,
// so a killed grader never keeps its slot), and its sandboxes run as host uid and gid base + k.
// Inside the sandbox the program still sees uid 65534 (bwrap's --uid, harness/sandbox.hpp).
//
// A slot whose uid or gid is a user or group of this machine (the passwd and group databases) is
// skipped: a real account's processes and files are never mixed with a sandbox's. The directory
// must be the grader's own (owned by its effective uid, a real directory, writable by no one else)
// and so must every lock file: another user's link or file there would otherwise decide the slot.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <sys/types.h>

namespace harness {

struct UidPool {
    // In the range systemd leaves unused (0x70000000 to 0x7FFDFFFF: above its containers' ranges,
    // below its "foreign" range and 2^31), easy to tell in `ps`: 2,000,000,000 + k. A constant:
    // `grade` has no option for it (taken uids are skipped in any case).
    static constexpr uid_t default_base = 2'000'000'000;
    static constexpr int default_count = 4096;

    uid_t base = default_base;
    int count = default_count;
    std::string directory = default_directory();
    // Whether `id` is a uid or gid this machine knows (a real account): such a slot is skipped.
    // Default: getpwuid and getgrgid.
    std::function<bool(uid_t id)> taken;

    // /run/pmpp-grader-uids (only root may create entries in /run), else /tmp/pmpp-grader-uids.
    static std::string default_directory();
};

// One slot of the pool, held until destroyed.
class UidSlot {
public:
    // The first free slot (its lock not held by another process, nor by another UidSlot of this
    // one) whose uid is no account's; nullptr with `why` when there is none, or the directory is
    // not the grader's own (created 0700 where missing). Never blocks.
    static std::unique_ptr<UidSlot> take(const UidPool& pool, std::string& why);

    uid_t uid() const { return uid_; }  // uid and gid
    int index() const { return index_; }

    UidSlot(const UidSlot&) = delete;
    UidSlot& operator=(const UidSlot&) = delete;
    ~UidSlot();

private:
    UidSlot(int fd, int index, uid_t uid) : fd_(fd), index_(index), uid_(uid) {}
    int fd_;
    int index_;
    uid_t uid_;
};

// Whether `id` is a uid in the passwd database or a gid in the group database.
bool is_known_id(uid_t id);

}  // namespace harness

// The GPU to itself while it is timed, across processes: several gradings on one machine (a
// batch, two CI jobs, a student beside an instructor) share one lock file per GPU. A timed case
// holds it exclusively, from its first command to its last repetition; an untimed case holds it
// shared, so correctness phases run side by side but never during another grading's timing. Holds
// are granted in turn: an untimed case that asks after a waiting timed case goes after it.
//
// The lock is flock(2) on a file the grader opens itself; submitted code never sees the file
// (the sandbox hides the grader's /tmp), and a lock dies with the process that held it, so a
// killed grader never leaves the GPU locked. What a lock cannot stop, work a submission starts on
// the GPU outside its cases, is the business of the timing checks (grading/timing_model.hpp).
#pragma once

#include <chrono>
#include <string>

namespace harness {

class GpuLock {
public:
    // Opens the lock file at `path` and its queue, `path`.queue, creating them (readable by every
    // user) where they are missing. Throws std::runtime_error when it cannot.
    explicit GpuLock(const std::string& path);

    // Held until destroyed. `waited` is how long taking it took.
    class Hold {
    public:
        Hold() = default;
        Hold(Hold&& other) noexcept;
        Hold& operator=(Hold&& other) noexcept;
        ~Hold();
        std::chrono::steady_clock::duration waited{};

    private:
        friend class GpuLock;
        int fd_ = -1;
    };

    // Blocks until the lock is held: exclusively for a timed case, shared otherwise.
    Hold hold(bool exclusive) const;
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::string queue_path_;  // <path>.queue: where holds line up, so a timed case is never overtaken
};

// The lock file of a GPU: <directory>/pmpp-grader-gpu-<key>.lock, the key being the GPU's UUID
// (or its name, where the UUID is unknown) with every character but letters, digits, '-' and '_'
// replaced by '_'.
std::string gpu_lock_path(const std::string& directory, const std::string& gpu_key);

}  // namespace harness

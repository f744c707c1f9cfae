// The GPU to itself while it is timed, across processes: several gradings on one machine (a
// batch, two CI jobs, a student beside an instructor) share one lock file per GPU. A timed case's
// repetitions hold it exclusively, from the first warm-up to the last repetition; every case's run
// (a timed case's checked run and its reference's too) holds it shared while it uses the GPU, from
// run_case until the runner says case_ran (the input is made before, the checks come after:
// harness/channel.hpp), so correctness phases run side by side but never during another grading's
// timing, and a timed case waits for no one's CPU work. Holds are granted in turn, timed ones first:
// an untimed case that asks while any timed case waits or holds the GPU goes after every timed case
// that asked meanwhile, so the timings of all gradings follow each other and the GPU is emptied of
// correctness runs once for them, not once for each (in a class two at once, waiting timed cases
// with the GPU emptying were 16% of the time: docs/gpu-runs.md, eighteenth session).
//
// The lock is flock(2) on a file the grader opens itself; submitted code never sees the file
// (the sandbox hides the grader's /tmp), and a lock dies with the process that held it, so a
// killed grader never leaves the GPU locked. What a lock cannot stop, work a submission starts on
// the GPU outside its cases, is the business of the timing checks (grading/timing_model.hpp).
//
// The CPU matters too: a launch takes a few microseconds of host time and the kernels timed here
// tens, so a grader checking other cases on every core meanwhile (caches thrashed, clocks lowered)
// moves the times by several per cent from one grading to the next. A batch of timed repetitions
// therefore also holds the lock's quiet file exclusively, and every grading's checking
// (parallel_for's chunks, through QuietWhileTimed) waits for it before its next chunk.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "harness/parallel.hpp"

namespace harness {

class GpuLock {
public:
    // Opens the lock file at `path`, its queue `path`.queue, `path`.quiet and `path`.wanted, creating them
    // (readable by every user) where they are missing. Throws std::runtime_error when it cannot.
    // `wanted_wait`: how long an untimed hold waits at most while timed holds are asked for, before it
    // lines up anyway (a grading stopped while its timed hold waits in line holds the wish: SIGSTOP,
    // a scheduler's suspend; then the others' correctness runs only lose their precedence).
    explicit GpuLock(const std::string& path, std::chrono::milliseconds wanted_wait = max_wanted_wait);

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
        void release() noexcept;
        int fd_ = -1;
        int wanted_fd_ = -1;  // a timed hold's share of <path>.wanted, from its asking to its dropping
    };

    // Blocks until the lock is held: exclusively for timed repetitions, shared otherwise.
    Hold hold(bool exclusive) const;
    // Held by a batch of timed repetitions (inside its timed case's exclusive hold): checking waits.
    Hold quiet() const;
    // Returns once no batch of any grading on this GPU holds quiet(), or after `limit` at most: a
    // grading stopped in the middle of a batch (or any process holding the file) slows checking
    // down, never stops it.
    void wait_while_quiet(std::chrono::milliseconds limit = max_quiet_wait) const;
    // Longer than two batches at their 8-second cap.
    static constexpr std::chrono::milliseconds max_quiet_wait{30'000};
    // Longer than most timed cases' holds; one still held after it is waited for in the queue.
    static constexpr std::chrono::milliseconds max_wanted_wait{30'000};
    // One of `places` places for an exercise on this GPU, shared by every grading: an exercise
    // holds one from its reference runner's start to its last case, so that gradings side by side
    // never run more exercises at once than the GPU's memory holds (each has two runners, their
    // contexts and the buffers of cases up to gigabytes). Blocks until a place is free.
    Hold exercise_place(int places) const;
    // Every one of `places` places, taken in index order, each waited for: then no exercise of any
    // other grading runs on this GPU, and none starts, until they are dropped. For what must run
    // with the GPU's memory to itself (an exercise graded again alone, a calibration that ran out
    // of memory beside another grading's runner). In order, so that two such never deadlock; an
    // exercise holds one place and never waits for another, so it never deadlocks with them. The
    // gate (<path>.gate, held exclusively while the places are taken; exercise_place looks for a
    // free place only through it) keeps an exercise that asks meanwhile from overtaking it: the
    // wait is for the exercises running when it asked.
    std::vector<Hold> every_place(int places) const;
    // The most places a GPU has (the grader's count is clamped to it): every_place(most_places)
    // takes them all where the count is unknown.
    static constexpr int most_places = 48;
    const std::string& path() const { return path_; }

    GpuLock(const GpuLock&) = delete;
    GpuLock& operator=(const GpuLock&) = delete;
    ~GpuLock();

private:
    std::string path_;
    std::string queue_path_;  // <path>.queue: where holds line up, so a timed case is never overtaken
    std::string quiet_path_;  // <path>.quiet: held exclusively while repetitions are timed
    std::string gate_path_;   // <path>.gate: every_place holds it while it takes the places
    std::string wanted_path_;  // <path>.wanted: held shared by every timed hold asked and not dropped
    int quiet_fd_ = -1;       // shared by the checking threads, which take it shared only to wait
    std::chrono::milliseconds wanted_wait_;
    // Returns once no timed hold is asked for or held (polled: untimed holds never block a timed
    // one), or after wanted_wait_.
    void wait_while_wanted() const;
};

// The grader's chunk gate: its checking pauses while any grading on the GPU times repetitions.
class QuietWhileTimed : public ChunkGate {
public:
    explicit QuietWhileTimed(const GpuLock& lock) : lock_(lock) {}
    void wait() const override { lock_.wait_while_quiet(); }

private:
    const GpuLock& lock_;
};

// The lock file of a GPU: <directory>/pmpp-grader-gpu-<key>.lock, the key being the GPU's UUID
// (or its name, where the UUID is unknown) with every character but letters, digits, '-' and '_'
// replaced by '_'.
std::string gpu_lock_path(const std::string& directory, const std::string& gpu_key);

}  // namespace harness

// The reference's side of a speed case's timing: the reference runner, started in the same
// sandbox as the submission's runner (so that both pay the same costs), running the hidden
// reference's launcher on the timing server's buffers when told. It holds no secret either: the
// server writes its inputs and checks its outputs exactly as the submission's.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/process.hpp"
#include "harness/timed_worker.hpp"

namespace harness::timing {

// What the reference's side throws when it cannot go on: the timing goes on without it.
struct ReferenceFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ReferenceWorker : public TimedWorker {
public:
    // `spawn` starts the reference runner (`--exercise NAME` is added here), on first use.
    ReferenceWorker(std::function<SpawnOptions()> spawn, std::string exercise, std::chrono::milliseconds startup_limit,
                    std::chrono::milliseconds command_limit);
    ~ReferenceWorker() override;
    ReferenceWorker(const ReferenceWorker&) = delete;
    ReferenceWorker& operator=(const ReferenceWorker&) = delete;

    void map(int descriptor, const nlohmann::json& layout, const nlohmann::json& args) override;
    void run_batch(bool launch) override;
    void unmap() override;
    // Starts the runner now (it otherwise starts on first use), in two steps so that several start
    // side by side: spawn_early() starts the process, await_start() waits for its hello. Both on
    // the thread that uses the worker (the sandbox dies with the thread that started it). Called
    // before a timing, so that a start (a sandbox, a CUDA context: about half a second) is not
    // spent holding the GPU to itself. A failure is kept and thrown by the first command.
    void spawn_early();
    void await_start();
    // Set once it failed: later calls throw at once, until retry().
    const std::string& failure() const { return failure_; }
    // Forgets a failure: the next command starts a fresh runner. For a new timing alone, where the
    // cause may be gone (a start that ran out of GPU memory beside another grading's runner).
    void retry();

private:
    void start();
    void spawn();
    void await_hello();
    // Sends a command (and `descriptor` after it, where one is given) and waits for its answer.
    Message command(MessageType type, const nlohmann::json& meta, MessageType answer, int descriptor = -1);
    [[noreturn]] void fail(const std::string& why);

    std::function<SpawnOptions()> spawn_;
    std::string exercise_;
    std::chrono::milliseconds startup_limit_, command_limit_;
    std::optional<Child> child_;
    bool started_ = false;  // its hello was read
    std::string failure_;
};

}  // namespace harness::timing

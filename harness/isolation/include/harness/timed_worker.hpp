// A runner that runs a speed case's timed batches when told (harness/timing/): the submission's,
// through the conversation its supervisor holds, or the reference's. It maps device memory the
// grader's timing server owns and calls its launcher there; it writes no input, reads no output
// back and reports nothing but that it is done. Errors are thrown by each implementation its own
// way (the supervisor ends the submission's conversation; the reference throws ReferenceFailure).
#pragma once

#include <nlohmann/json.hpp>

namespace harness {

class TimedWorker {
public:
    virtual ~TimedWorker() = default;
    // Maps the allocation behind `descriptor` (passed on, not closed: the caller owns it), laid
    // out as `layout` (harness/batch_layout.hpp); `args` are the launcher's other arguments.
    virtual void map(int descriptor, const nlohmann::json& layout, const nlohmann::json& args) = 0;
    // Calls the launcher once per repetition (launch) or an empty kernel, and returns when the runner says
    // it is done.
    virtual void run_batch(bool launch) = 0;
    virtual void unmap() = 0;
    // Stops (true) or continues (false) every process of the runner, so that it cannot start GPU
    // work while the reference is timed alone beside it (work queued before shows in the timing
    // server's own GPU times). The reference's worker never needs it.
    virtual void pause(bool /*paused*/) {}
};

}  // namespace harness

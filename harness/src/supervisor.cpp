#include "harness/supervisor.hpp"

#include <deque>

namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One runner process's conversation with the grader. settle() hands finished cases to the
// caller; the first failure ends the conversation and the caller starts a fresh runner for the
// cases still pending.
class Conversation {
public:
    Conversation(const SupervisorLimits& limits, Clock::time_point budget_end, std::deque<RunCase>& pending,
                 ExerciseRun& run, const std::function<void(CaseRun&&)>& on_case)
        : limits_(limits), budget_end_(budget_end), pending_(pending), run_(run), on_case_(on_case)
    {
    }

    void run(Child& child)
    {
        ChannelReader reader(child.channel_fd());
        last_event_ = Clock::now();
        for (;;) {
            Message message;
            const auto got = reader.receive(message, deadline());
            if (got == ChannelReader::Result::message) {
                std::string problem;
                try {
                    problem = handle(message);
                } catch (const std::exception& e) {   // a meta field of the wrong type
                    problem = std::string("a message the runner never sends (") + e.what() + ")";
                }
                if (problem == "done") return;
                if (!problem.empty()) return violation(child, problem);
                continue;
            }
            if (got == ChannelReader::Result::malformed)
                return violation(child, "data on the grader's channel that the runner never sends");
            return ended(child, got == ChannelReader::Result::timed_out);
        }
    }

private:
    Clock::time_point deadline() const
    {
        if (!said_hello_) return std::min(last_event_ + limits_.startup_limit, budget_end_);
        if (!current_) return std::min(last_event_ + limits_.case_limit, budget_end_);
        auto limit = limits_.case_limit + std::chrono::milliseconds(static_cast<long long>(
                                              limits_.case_ns_per_element * static_cast<double>(case_.elements) / 1e6));
        if (case_.timed) limit += limits_.timing_extra;
        return std::min(case_started_ + limit, budget_end_);
    }

    // Applies one message; returns "" to go on, "done" at the end, or what broke the protocol.
    std::string handle(Message& message)
    {
        if (!message.meta.is_object()) return "a message whose data is not an object";
        const bool has_case = message.meta.contains("case");
        if (has_case && !message.meta.at("case").is_number_integer()) return "a message with a malformed case";
        const int index = has_case ? message.meta.at("case").get<int>() : -1;
        last_event_ = Clock::now();
        switch (message.type) {
        case MessageType::hello:
            if (said_hello_) return "a second hello";
            said_hello_ = true;
            if (run_.hello.is_null()) run_.hello = message.meta;
            run_.launcher_found = message.meta.value("launcher_found", false);
            return "";
        case MessageType::case_begin: {
            // The next case: after the front one while that waits for confirmation.
            const std::size_t next = finished_ ? 1 : 0;
            if (!said_hello_ || current_ || pending_.size() <= next || index != pending_[next].index)
                return "case_begin out of turn";
            confirm_finished();
            current_ = CaseRun{};
            current_->index = index;
            case_ = pending_.front();
            case_started_ = Clock::now();
            return "";
        }
        case MessageType::case_output:
            if (!current_ || index != current_->index || current_->output) return "case_output out of turn";
            current_->output = std::move(message);
            current_->outcome = CaseRun::Outcome::output;
            return "";
        case MessageType::timing:
            if (!current_ || index != current_->index || !current_->output || current_->timing || !case_.timed)
                return "a timing out of turn";
            current_->timing = std::move(message);
            return "";
        case MessageType::case_end:
            if (!current_ || index != current_->index || !current_->output || (case_.timed && !current_->timing))
                return "case_end out of turn";
            current_->seconds = seconds_since(case_started_);
            finished_ = std::move(current_);
            current_.reset();
            return "";
        case MessageType::cuda_error:
            if (!said_hello_) {
                startup_error_ = message.meta.value("message", std::string("a CUDA error before the first case"));
                return "";
            }
            if (!current_ || index != current_->index) return "a CUDA error out of turn";
            current_->outcome = CaseRun::Outcome::cuda_error;
            current_->error = message.meta;
            return "";   // the runner exits next
        case MessageType::done:
            if (!said_hello_ || current_) return "done out of turn";
            confirm_finished();
            return "done";
        }
        return "an unknown message";
    }

    void confirm_finished()
    {
        if (!finished_) return;
        settle(std::move(*finished_));
        finished_.reset();
    }

    void settle(CaseRun&& result)
    {
        pending_.pop_front();
        on_case_(std::move(result));
    }

    // The runner broke the protocol: its messages cannot be trusted any more.
    void violation(Child& child, const std::string& what)
    {
        child.kill_and_reap();
        finished_.reset();   // not confirmed: its messages may be forged as well
        if (pending_.empty()) return;
        CaseRun failed;
        failed.index = pending_.front().index;
        failed.outcome = CaseRun::Outcome::protocol_error;
        failed.error = {{"reason", "the grader's private channel received " + what +
                                       ": submitted code must not write to the grader's file descriptors"}};
        settle(std::move(failed));
    }

    // The runner closed the channel or went quiet past the deadline.
    void ended(Child& child, bool timed_out)
    {
        const bool budget_cut = timed_out && deadline() >= budget_end_;
        const ExitStatus status = timed_out ? child.kill_and_reap() : child.wait_until(Clock::now() + std::chrono::seconds(5));
        if (!said_hello_ || !startup_error_.empty()) return startup_failed(timed_out, status);
        if (!run_.launcher_found) return;
        if (pending_.empty()) return;
        if (finished_) {
            // case_end arrived but neither done nor the next case_begin: the runner died in
            // between, which its own code never does, so the case cannot be confirmed.
            finished_.reset();
            CaseRun failed;
            failed.index = pending_.front().index;
            failed.outcome = CaseRun::Outcome::crashed;
            failed.error = {{"reason", "the runner " + status.describe() + " right after the case, before confirming it"},
                            {"exit", status.describe()}};
            return settle(std::move(failed));
        }
        CaseRun failed = current_ ? std::move(*current_) : CaseRun{};
        failed.index = pending_.front().index;
        failed.seconds = current_ ? seconds_since(case_started_) : 0;
        const std::string limit = budget_cut ? "the exercise's time budget ran out during the case"
                                             : "stopped after exceeding the case's time limit";
        if (current_ && failed.outcome == CaseRun::Outcome::output && timed_out && case_.timed) {
            failed.timing_timed_out = true;   // its output arrived; the timing runs did not finish
        } else if (failed.outcome != CaseRun::Outcome::cuda_error) {
            failed.outcome = timed_out ? CaseRun::Outcome::timeout : CaseRun::Outcome::crashed;
            const std::string when = current_ ? " during the case" : " before the case began";
            failed.error = {{"reason", timed_out ? limit : "the runner " + status.describe() + when},
                            {"exit", status.describe()}};
        }
        settle(std::move(failed));
    }

    // No case could run in this process: a CUDA error before the first case means the GPU is
    // unusable (not the submission's fault); ending before hello is the submission's (its static
    // initializers run first).
    void startup_failed(bool timed_out, const ExitStatus& status)
    {
        run_.startup_failure = !startup_error_.empty() ? "the runner could not use the GPU: " + startup_error_
                               : timed_out            ? "the runner did not start within the time limit"
                                                      : "the runner ended before its first case (" + status.describe() + ")";
        while (!pending_.empty()) {
            CaseRun failed;
            failed.index = pending_.front().index;
            failed.outcome = !startup_error_.empty() ? CaseRun::Outcome::not_run
                             : timed_out             ? CaseRun::Outcome::timeout
                                                     : CaseRun::Outcome::crashed;
            failed.error = {{"reason", run_.startup_failure}};
            settle(std::move(failed));
        }
    }

    const SupervisorLimits& limits_;
    Clock::time_point budget_end_;
    std::deque<RunCase>& pending_;
    ExerciseRun& run_;
    const std::function<void(CaseRun&&)>& on_case_;

    bool said_hello_ = false;
    std::string startup_error_;
    std::optional<CaseRun> current_, finished_;
    RunCase case_;                          // the case in progress
    Clock::time_point case_started_{}, last_event_{};
};

std::string join_indices(const std::deque<RunCase>& cases)
{
    std::string list;
    for (const auto& c : cases) list += (list.empty() ? "" : ",") + std::to_string(c.index);
    return list;
}

}  // namespace

ExerciseRun run_exercise(const RunRequest& request, const SupervisorLimits& limits,
                         const std::function<void(CaseRun&&)>& on_case)
{
    ExerciseRun run;
    const auto started = Clock::now();
    const auto budget_end = started + limits.exercise_budget;
    std::deque<RunCase> pending(request.cases.begin(), request.cases.end());
    while (!pending.empty() && run.launcher_found && run.startup_failure.empty()) {
        if (Clock::now() >= budget_end) {
            for (; !pending.empty(); pending.pop_front()) {
                CaseRun skipped;
                skipped.index = pending.front().index;
                skipped.error = {{"reason", "not run: the exercise's time limit was used up by earlier cases"}};
                on_case(std::move(skipped));
            }
            break;
        }
        SpawnOptions spawn;
        spawn.argv = {request.runner, "--exercise", request.exercise, "--cases", join_indices(pending),
                      "--reps", std::to_string(limits.reps), "--warmup", std::to_string(limits.warmup)};
        spawn.output_file = request.log_prefix + "-" + std::to_string(++run.processes) + ".log";
        spawn.working_dir = request.working_dir;
        spawn.create_channel = true;
        Child child = Child::spawn(spawn);
        Conversation(limits, budget_end, pending, run, on_case).run(child);
        child.kill_and_reap();
        kill_orphaned_children();   // anything it left behind outside its process group
    }
    run.seconds = seconds_since(started);
    return run;
}

}  // namespace harness

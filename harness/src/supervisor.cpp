#include "harness/supervisor.hpp"

#include <deque>

namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

std::string join_indices(const std::deque<int>& cases)
{
    std::string list;
    for (int c : cases) list += (list.empty() ? "" : ",") + std::to_string(c);
    return list;
}

}  // namespace

const char* outcome_name(CaseRun::Outcome outcome)
{
    switch (outcome) {
    case CaseRun::Outcome::output: return "output";
    case CaseRun::Outcome::cuda_error: return "cuda_error";
    case CaseRun::Outcome::crashed: return "crashed";
    case CaseRun::Outcome::timeout: return "timeout";
    case CaseRun::Outcome::not_run: return "not_run";
    }
    return "?";
}

ExerciseRun run_exercise(const RunRequest& request, const SupervisorLimits& limits,
                         const std::function<void(CaseRun&&)>& on_case)
{
    ExerciseRun run;
    const auto started = Clock::now();
    const auto budget_end = started + limits.exercise_budget;
    std::deque<int> pending(request.cases.begin(), request.cases.end());
    auto position = [&](int index) {
        for (std::size_t k = 0; k < request.cases.size(); ++k)
            if (request.cases[k] == index) return k;
        return std::size_t{0};
    };
    auto case_deadline = [&](int index, Clock::time_point from) {
        const std::size_t k = position(index);
        auto limit = limits.case_limit + std::chrono::milliseconds(static_cast<long long>(
                                             limits.case_ns_per_element * static_cast<double>(request.case_elements[k]) / 1e6));
        if (request.case_timed[k]) limit += limits.timing_extra;
        return std::min(from + limit, budget_end);
    };
    // Settles the front case of `pending` and removes it.
    auto settle = [&](CaseRun&& result) {
        pending.pop_front();
        on_case(std::move(result));
    };

    while (!pending.empty()) {
        if (Clock::now() >= budget_end) {
            while (!pending.empty()) {
                CaseRun skipped;
                skipped.index = pending.front();
                skipped.error = {{"reason", "not run: the exercise's time limit was used up by earlier cases"}};
                settle(std::move(skipped));
            }
            break;
        }
        SpawnOptions spawn;
        spawn.argv = {request.runner, "--exercise", request.exercise, "--cases", join_indices(pending),
                      "--reps", std::to_string(limits.reps), "--warmup", std::to_string(limits.warmup)};
        spawn.output_file = request.log_prefix + "-" + std::to_string(++run.processes) + ".log";
        spawn.create_channel = true;
        Child child = Child::spawn(spawn);
        ChannelReader reader(child.channel_fd());

        Message message;
        auto deadline = std::min(Clock::now() + limits.startup_limit, budget_end);
        std::optional<CaseRun> current;         // the case in progress
        Clock::time_point case_started{};
        bool said_hello = false;
        for (;;) {
            const auto got = reader.receive(message, current ? case_deadline(current->index, case_started) : deadline);
            if (got == ChannelReader::Result::message) {
                const int index = message.meta.value("case", -1);
                switch (message.type) {
                case MessageType::hello:
                    said_hello = true;
                    if (run.hello.is_null()) run.hello = message.meta;
                    run.launcher_found = message.meta.value("launcher_found", false);
                    deadline = budget_end;
                    continue;
                case MessageType::case_begin:
                    current = CaseRun{};
                    current->index = index;
                    case_started = Clock::now();
                    continue;
                case MessageType::case_output:
                    if (current) current->output = std::move(message), current->outcome = CaseRun::Outcome::output;
                    continue;
                case MessageType::timing:
                    if (current) current->timing = std::move(message);
                    continue;
                case MessageType::case_end:
                    if (current && !pending.empty() && pending.front() == current->index) {
                        current->seconds = std::chrono::duration<double>(Clock::now() - case_started).count();
                        settle(std::move(*current));
                    }
                    current.reset();
                    continue;
                case MessageType::cuda_error:
                    if (!current) current = CaseRun{}, current->index = pending.front(), case_started = Clock::now();
                    current->outcome = CaseRun::Outcome::cuda_error;
                    current->error = message.meta;
                    continue;   // the runner exits next
                case MessageType::done: break;
                }
                break;   // done
            }
            // The runner went quiet past a deadline, closed the channel, or sent garbage.
            const bool timed_out = got == ChannelReader::Result::timed_out;
            const ExitStatus status = timed_out ? child.kill_and_reap() : child.wait_until(Clock::now() + std::chrono::seconds(10));
            if (!said_hello && !current) {
                run.startup_failure = timed_out ? "the runner did not start within the time limit"
                                                : "the runner ended before starting (" + status.describe() + ")";
                while (!pending.empty()) {
                    CaseRun failed;
                    failed.index = pending.front();
                    failed.outcome = timed_out ? CaseRun::Outcome::timeout : CaseRun::Outcome::crashed;
                    failed.error = {{"reason", run.startup_failure}};
                    settle(std::move(failed));
                }
                break;
            }
            if (!run.launcher_found) break;
            CaseRun failed = current ? std::move(*current) : CaseRun{};
            if (!current) failed.index = pending.front();
            failed.seconds = std::chrono::duration<double>(Clock::now() - case_started).count();
            if (failed.outcome == CaseRun::Outcome::output && timed_out) {
                failed.timing_timed_out = true;   // correct output arrived, the timing did not finish
            } else if (failed.outcome != CaseRun::Outcome::cuda_error) {
                failed.outcome = timed_out ? CaseRun::Outcome::timeout : CaseRun::Outcome::crashed;
                failed.error = {{"reason", timed_out ? "stopped after exceeding the case's time limit"
                                                     : "the runner " + status.describe() + " during the case"},
                                {"exit", status.describe()}};
            }
            if (!pending.empty() && pending.front() == failed.index) settle(std::move(failed));
            break;
        }
        if (!run.launcher_found) break;
        child.kill_and_reap();
    }
    run.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return run;
}

}  // namespace harness

#include "harness/supervisor.hpp"

#include "harness/poison.hpp"

#include <algorithm>
#include <deque>

namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// What the grader keeps of a runner's cuda_error or exception message: the fields it reports, each
// of the type it reads (its strings were made valid and bounded as they arrived, harness/channel.hpp),
// and nothing else of whatever else the runner put in it.
nlohmann::json reported_error(const nlohmann::json& meta)
{
    nlohmann::json kept = nlohmann::json::object();
    for (const char* key : {"phase", "error", "type", "message"})
        if (const auto field = meta.find(key); field != meta.end() && field->is_string()) kept[key] = *field;
    if (const auto field = meta.find("case"); field != meta.end() && field->is_number_integer()) kept["case"] = *field;
    return kept;
}

// Why a conversation ended before the grader was done with it.
struct Ended {
    enum class Why { cuda_error, exception, closed, timed_out, violation } why;
    std::string what;      // violation: what arrived
    nlohmann::json error;  // cuda_error, exception: the runner's meta
};

// One runner process's conversation with the grader: the grader sends a command, waits for its
// answer, and settles each case once it has everything it asked for. The first failure ends the
// conversation; the caller starts a fresh runner for the cases still pending.
class Conversation {
public:
    Conversation(const RunRequest& request, const SupervisorLimits& limits, Clock::time_point& budget_end,
                 std::deque<RunCase>& pending, ExerciseRun& run, const std::function<void(CaseRun&&)>& on_case)
        : request_(request), limits_(limits), budget_end_(budget_end), pending_(pending), run_(run), on_case_(on_case)
    {
    }

    void run(Child& child)
    {
        child_ = &child;
        ChannelWriter commands(child.command_fd());
        ChannelReader answers(child.channel_fd());
        try {
            deadline_ = std::min(Clock::now() + limits_.startup_limit, budget_end_);
            const Message hello = expect(answers, MessageType::hello);
            const auto found = hello.meta.find("launcher_found");
            if (found != hello.meta.end() && !found->is_boolean())
                throw Ended{Ended::Why::violation, "a hello that the runner never sends", {}};
            said_hello_ = true;
            run_.launcher_found = found != hello.meta.end() && found->get<bool>();
            if (!run_.launcher_found) {
                // Nothing to run: told to quit, the runner ends by itself (a wrapper's wait for it,
                // exit_wait, is not spent on a runner left waiting for a command).
                quit(commands, answers);
                return;
            }
            // Cases of one visibility per runner: the first hidden case after visible ones starts a
            // fresh runner (and the other way round).
            const bool hidden = pending_.front().hidden;
            while (!pending_.empty() && pending_.front().hidden == hidden) run_case(commands, answers);
            answered_all_ = true;
            quit(commands, answers);
        } catch (const Ended& ended) {
            end(child, ended);
        }
    }

    // Every case this runner was given got its answer (whatever the runner did after).
    bool answered_all() const { return answered_all_; }

private:
    // Tells the runner to end and waits (5 s at most) for its last word.
    void quit(ChannelWriter& commands, ChannelReader& answers)
    {
        deadline_ = Clock::now() + std::chrono::seconds(5);
        send(commands, MessageType::quit, nlohmann::json::object());
        expect(answers, MessageType::done);
    }

    void run_case(ChannelWriter& commands, ChannelReader& answers)
    {
        const RunCase c = pending_.front();
        current_ = CaseRun{};
        current_->index = c.index;
        case_started_ = Clock::now();
        auto limit = limits_.case_limit + std::chrono::milliseconds(static_cast<long long>(
                                              limits_.case_ns_per_element * static_cast<double>(c.elements) / 1e6));
        if (c.timed) limit += limits_.timing_extra;
        deadline_ = std::min(case_started_ + limit, budget_end_);

        // The input is the host's work: it is made while other exercises (and gradings) use the GPU,
        // but not started while a batch of repetitions is timed (its CPU quiet, harness/gpu_lock.hpp).
        if (request_.gpu_lock) {
            const auto quiet_from = Clock::now();
            request_.gpu_lock->wait_while_quiet();
            waited_for_gpu(Clock::now() - quiet_from);
        }
        nlohmann::json named = {{"case", c.index}};
        if (!c.spec.is_null()) named["spec"] = c.spec;
        send(commands, MessageType::load_case, named);
        expect_case(answers, MessageType::case_loaded, c.index);
        // The case's GPU work shares the GPU; another grading's timing goes first, and the wait is not
        // the submission's time. A timed case's repetitions take it alone (time_case).
        if (request_.gpu_lock) {
            gpu_ = request_.gpu_lock->hold(false);
            waited_for_gpu(gpu_.waited);
        }
        send(commands, MessageType::run_case, named);
        expect_case(answers, MessageType::case_ran, c.index);
        gpu_ = {};  // the runner's checks and the output's transfer are the host's work again
        // An output is the case's elements with guard zones, three buffers' worth at most; a header
        // announcing more is malformed rather than an allocation the grader makes. No other
        // answer carries a blob.
        answers.set_max_blob_bytes(
            8 * static_cast<std::uint64_t>(std::max<std::int64_t>(c.elements, 1) + 8 * guard_elements));
        current_->output = expect(answers, MessageType::case_output);
        answers.set_max_blob_bytes(0);
        if (!current_->output->meta.contains("case") || current_->output->meta.at("case") != c.index)
            throw Ended{Ended::Why::violation, "an output for another case", {}};
        current_->outcome = CaseRun::Outcome::output;
        if (c.timed) time_case(c, commands, answers);
        settle_current();
    }

    // An answer that names the case it answers for.
    void expect_case(ChannelReader& answers, MessageType type, int index)
    {
        const Message answer = expect(answers, type);
        const auto named = answer.meta.find("case");
        if (named == answer.meta.end() || *named != index)
            throw Ended{Ended::Why::violation, "an answer for another case", {}};
    }

    // The submission's runner as the timing drives it (harness/timed_worker.hpp). Time spent outside
    // its own commands (the timing server's work, the reference's turns) moves the case's deadline
    // and the exercise's budget on: only the runner's own answers count against them.
    class StudentWorker : public TimedWorker {
    public:
        StudentWorker(Conversation& conversation, Child& child, ChannelWriter& commands, ChannelReader& answers)
            : conversation_(conversation), child_(child), commands_(commands), answers_(answers)
        {
            answers_.spin_while_waiting(batch_spin);  // a batch's "done" is read at once
        }
        ~StudentWorker() override { answers_.spin_while_waiting({}); }
        void map(int descriptor, const nlohmann::json& layout, const nlohmann::json& args) override
        {
            const Own own(*this);
            send(commands_, MessageType::map_timing, {{"layout", layout}, {"args", args}});
            try {
                send_descriptor(child_.handles_fd(), descriptor);
            } catch (const std::exception&) {
                throw Ended{Ended::Why::closed, {}, {}};
            }
            conversation_.expect(answers_, MessageType::timing_mapped);
        }
        void run_batch(bool launch) override
        {
            const Own own(*this);
            send(commands_, MessageType::run_batch, {{"launch", launch}});
            conversation_.expect(answers_, MessageType::batch_ran);
        }
        void unmap() override
        {
            const Own own(*this);
            send(commands_, MessageType::unmap_timing, nlohmann::json::object());
            conversation_.expect(answers_, MessageType::timing_unmapped);
        }
        bool pause(bool paused) override
        {
            child_.stop_tree(paused);
            if (!paused) return false;
            const bool stopped = child_.tree_stopped(std::chrono::milliseconds(500));
            paused_activity_ = child_.tree_activity();
            return stopped;
        }
        int process_id() const override { return child_.pid(); }
        bool stayed_paused() override
        {
            return child_.tree_stopped(std::chrono::milliseconds(0)) && child_.tree_activity() == paused_activity_;
        }

    private:
        // One of the runner's own commands: the time since its last one was not its own.
        struct Own {
            StudentWorker& worker;
            explicit Own(StudentWorker& w) : worker(w) { worker.conversation_.extend(Clock::now() - worker.last_); }
            ~Own() { worker.last_ = Clock::now(); }
        };
        Conversation& conversation_;
        Child& child_;
        ChannelWriter& commands_;
        ChannelReader& answers_;
        Clock::time_point last_ = Clock::now();
        std::map<int, std::string> paused_activity_;  // the tree's, once pause(true) stopped it
    };

    void extend(Clock::duration by)
    {
        deadline_ += by;
        budget_end_ += by;
    }

    // A wait for the GPU lock (or for another grading's batch to end): not the submission's time.
    void waited_for_gpu(Clock::duration waited)
    {
        extend(waited);
        current_->gpu_wait_seconds += std::chrono::duration<double>(waited).count();
    }

    // The speed case's timing (harness/timing/): the request's, with this runner as its worker and
    // the GPU held exclusively here, so that a runner that fails during it is dead (end()) before
    // another grading's timing may start.
    void time_case(const RunCase& c, ChannelWriter& commands, ChannelReader& answers)
    {
        if (!request_.time_case) return;
        if (request_.gpu_lock) {
            gpu_ = request_.gpu_lock->hold(true);
            waited_for_gpu(gpu_.waited);
        }
        StudentWorker worker(*this, *child_, commands, answers);
        Clock::duration waited{};
        const auto started = Clock::now();
        current_->timing = request_.time_case(c, worker, waited);
        current_->gpu_wait_seconds += std::chrono::duration<double>(waited).count();
        current_->gpu_exclusive_seconds = std::max(0.0, seconds_since(started) - std::chrono::duration<double>(waited).count());
        gpu_ = {};
    }

    static void send(ChannelWriter& commands, MessageType type, const nlohmann::json& meta)
    {
        try {
            commands.send(type, meta);
        } catch (const std::exception&) {  // the runner has closed its end: it is gone
            throw Ended{Ended::Why::closed, {}, {}};
        }
    }

    // The answer the grader waits for, or the reason there is none.
    Message expect(ChannelReader& answers, MessageType type)
    {
        Message message;
        switch (answers.receive(message, deadline_)) {
            case ChannelReader::Result::message:
                break;
            case ChannelReader::Result::end_of_stream:
                throw Ended{Ended::Why::closed, {}, {}};
            case ChannelReader::Result::timed_out:
                throw Ended{Ended::Why::timed_out, {}, {}};
            case ChannelReader::Result::malformed:
                throw Ended{Ended::Why::violation, "data that the runner never sends", {}};
        }
        if (message.type == MessageType::cuda_error && message.meta.is_object())
            throw Ended{Ended::Why::cuda_error, {}, reported_error(message.meta)};
        if (message.type == MessageType::exception && message.meta.is_object())
            throw Ended{Ended::Why::exception, {}, reported_error(message.meta)};
        if (message.type != type || !message.meta.is_object())
            throw Ended{Ended::Why::violation, "a message that does not answer the grader's command", {}};
        return message;
    }

    void settle_current()
    {
        current_->seconds = std::max(0.0, seconds_since(case_started_) - current_->gpu_wait_seconds);
        pending_.pop_front();
        on_case_(std::move(*current_));
        current_.reset();
    }

    void end(Child& child, const Ended& ended)
    {
        const bool timed_out = ended.why == Ended::Why::timed_out;
        // A runner that closed its channel, or reported an error and exits by itself, may end on its
        // own: under a wrapper (compute-sanitizer), whose findings about the case (memcheck's
        // out-of-bounds access, which stops the kernel and fails its launch) come after the
        // program's end, for as long as exit_wait; otherwise 5 s after a closed channel.
        const bool ends_itself = ended.why == Ended::Why::cuda_error || ended.why == Ended::Why::exception;
        const auto wait = std::max<Clock::duration>(std::chrono::seconds(5), request_.exit_wait);
        const ExitStatus status =
            ended.why == Ended::Why::closed || (ends_itself && request_.exit_wait > std::chrono::seconds(5))
                ? child.wait_until(Clock::now() + wait)
                : child.kill_and_reap();
        // Only now, with the runner and its kernels gone, may another grading's timing start.
        gpu_ = {};
        if (!said_hello_) return startup_failed(ended, status);
        if (!current_) return;  // every case was settled: what came after does not matter
        CaseRun& failed = *current_;
        failed.timing.reset();  // a conversation that broke off leaves no batch to count
        switch (ended.why) {
            case Ended::Why::cuda_error:
                failed.outcome = CaseRun::Outcome::cuda_error;
                failed.error = ended.error;
                if (ended.error.value("error", std::string()) == "cudaErrorMemoryAllocation")
                    run_.gpu_memory_ran_out = true;
                break;
            case Ended::Why::exception:
                failed.outcome = CaseRun::Outcome::exception;
                failed.error = ended.error;
                break;
            case Ended::Why::violation:
                failed.outcome = CaseRun::Outcome::protocol_error;
                failed.error = {{"reason", "the grader's private channel received " + ended.what +
                                               ": submitted code must not write to the grader's file descriptors"}};
                failed.output.reset();
                break;
            case Ended::Why::timed_out:
            case Ended::Why::closed:
                if (failed.outcome == CaseRun::Outcome::output && timed_out) {
                    failed.timing_incomplete = true;  // its output arrived; the timing did not finish
                    break;
                }
                const bool budget_cut = timed_out && deadline_ >= budget_end_;
                const std::string limit = budget_cut ? "the exercise's time budget ran out during the case"
                                                     : "stopped after exceeding the case's time limit";
                failed.outcome = timed_out ? CaseRun::Outcome::timeout : CaseRun::Outcome::crashed;
                failed.error = {{"reason", timed_out ? limit : "the runner " + status.describe() + " during the case"},
                                {"exit", status.describe()}};
                failed.output.reset();
                break;
        }
        settle_current();
    }

    // No case could run in this process: a process that could not be started, or a CUDA error
    // before the first case, is the machine's state (not the submission's fault); anything else
    // before hello is the submission's (its static initializers run first).
    void startup_failed(const Ended& ended, const ExitStatus& status)
    {
        if (ended.why == Ended::Why::timed_out && deadline_ >= budget_end_) {
            // The exercise's budget ran out while this runner started: the cases left were not
            // run, which is the earlier cases' doing, not this runner's.
            while (!pending_.empty()) {
                CaseRun skipped;
                skipped.index = pending_.front().index;
                skipped.error = {{"reason", "not run: the exercise's time limit was used up by earlier cases"}};
                pending_.pop_front();
                on_case_(std::move(skipped));
            }
            return;
        }
        const bool gpu = ended.why == Ended::Why::cuda_error;
        const bool not_started = status.kind == ExitStatus::Kind::failed_to_start;
        run_.machine_failure = gpu || not_started;
        run_.ended_before_hello = ended.why == Ended::Why::closed;
        run_.startup_failure =
            gpu ? "the runner could not use the GPU: " + ended.error.value("message", std::string("a CUDA error"))
            : not_started                        ? "the runner could not be started (" + status.describe() + ")"
            : ended.why == Ended::Why::timed_out ? "the runner did not start within the time limit"
            : ended.why == Ended::Why::violation ? "the grader's private channel received " + ended.what +
                                                       " before the first case: submitted code must not write to it"
                                                 : "the runner ended before its first case (" + status.describe() + ")";
        while (!pending_.empty()) {
            CaseRun failed;
            failed.index = pending_.front().index;
            failed.outcome = run_.machine_failure                 ? CaseRun::Outcome::not_run
                             : ended.why == Ended::Why::timed_out ? CaseRun::Outcome::timeout
                             : ended.why == Ended::Why::violation ? CaseRun::Outcome::protocol_error
                                                                  : CaseRun::Outcome::crashed;
            failed.error = {{"reason", run_.startup_failure}};
            pending_.pop_front();
            on_case_(std::move(failed));
        }
    }

    const RunRequest& request_;
    const SupervisorLimits& limits_;
    Clock::time_point& budget_end_;  // run_exercise's: moved on by the time spent waiting for the GPU
    std::deque<RunCase>& pending_;
    ExerciseRun& run_;
    const std::function<void(CaseRun&&)>& on_case_;

    Child* child_ = nullptr;
    bool said_hello_ = false;
    bool answered_all_ = false;
    GpuLock::Hold gpu_;  // shared for a case's GPU work, exclusive for its repetitions; kept until a failed runner is dead
    std::optional<CaseRun> current_;
    Clock::time_point case_started_{}, deadline_{};
};

}  // namespace

ExerciseRun run_exercise(const RunRequest& request, const SupervisorLimits& limits,
                         const std::function<void(CaseRun&&)>& on_case)
{
    ExerciseRun run;
    const auto started = Clock::now();
    auto budget_end = started + limits.exercise_budget;
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
        run.hidden_processes.push_back(pending.front().hidden);
        SpawnOptions spawn = request.spawn(++run.processes);
        spawn.argv.insert(spawn.argv.end(), {"--exercise", request.exercise});
        spawn.create_channel = true;
        Child child = Child::spawn(spawn);
        Conversation conversation(request, limits, budget_end, pending, run, on_case);
        conversation.run(child);
        if (request.exit_wait.count() > 0) child.wait_until(Clock::now() + request.exit_wait);
        run.process_ends.push_back({child.kill_and_reap(), conversation.answered_all()});
        kill_orphaned_children();  // anything it left behind outside its process group
    }
    run.seconds = seconds_since(started);
    return run;
}

}  // namespace harness

#include "harness/paired_timing.hpp"

#include <random>

namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

std::uint64_t draw_key(std::random_device& random)
{
    return (static_cast<std::uint64_t>(random()) << 32) ^ random();
}

int timed_count(const std::vector<TimedRep>& reps)
{
    int count = 0;
    for (const auto& rep : reps) count += !rep.warmup;
    return count;
}

}  // namespace

TimedRep time_repetition(const std::function<void(MessageType, const nlohmann::json&)>& send,
                         const std::function<Message(MessageType)>& expect, std::uint64_t key, bool warmup,
                         double hold_us)
{
    TimedRep rep;
    rep.warmup = warmup;
    rep.key = key;
    rep.hold_limit_ms = hold_us / 1000;
    const auto t0 = Clock::now();
    send(MessageType::prepare, nlohmann::json::object());
    expect(MessageType::prepared);
    const auto t1 = Clock::now();
    send(MessageType::launch, {{"key", key}, {"hold_us", hold_us}});
    const Message launched = expect(MessageType::launched);
    const auto t2 = Clock::now();
    send(MessageType::checksum, nlohmann::json::object());
    const Message checksummed = expect(MessageType::checksummed);
    const auto t3 = Clock::now();
    rep.prepare_ms = ms_between(t0, t1);
    rep.launch_ms = ms_between(t1, t2);
    rep.checksum_ms = ms_between(t2, t3);
    // A missing or mistyped field is thrown as the caller's own protocol failure by `expect`'s
    // caller; here it only has to be read.
    rep.event_ms = launched.meta.at("event_ms").get<double>();
    rep.checksum = checksummed.meta.at("checksum").get<std::uint64_t>();
    rep.hold_ran_out = rep.held() && launched.meta.at("hold_ran_out").get<bool>();
    return rep;
}

bool launcher_waits_for_gpu(const std::vector<TimedRep>& warmups)
{
    std::size_t held = 0, ran_out = 0;
    for (const auto& rep : warmups) {
        held += rep.held();
        ran_out += rep.held() && rep.hold_ran_out && rep.launch_ms >= rep.hold_limit_ms;
    }
    return held > 0 && 2 * ran_out >= held;
}

TimedBatch run_batch(TimingSide* student, TimingSide* reference, const TimingPlan& plan,
                     const std::function<bool(const TimedBatch&)>& settled)
{
    TimedBatch batch;
    const auto started = Clock::now();
    std::random_device random;
    const int max_reps = std::max(1, plan.max_reps);
    const int min_reps = std::min(std::max(1, plan.min_reps), max_reps);

    // A side's turn of repetitions on the given keys; the reference's failure ends its part only.
    auto turn = [&](TimingSide* side, std::vector<TimedRep>& reps, const std::vector<std::uint64_t>& keys, bool warmup,
                    double hold_us) {
        if (side == nullptr) return;
        if (side == reference) {
            try {
                for (auto key : keys) reps.push_back(side->repetition(key, warmup, hold_us));
            } catch (const ReferenceFailure& failure) {
                batch.reference_failure = failure.what();
                reference = nullptr;
            }
            return;
        }
        for (auto key : keys) reps.push_back(side->repetition(key, warmup, hold_us));
    };

    std::uniform_int_distribution<int> warmups(plan.warmup_min, std::max(plan.warmup_min, plan.warmup_max));
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(warmups(random)));
    for (auto& key : keys) key = draw_key(random);
    turn(student, batch.student, keys, true, plan.hold_us);
    batch.held = plan.hold_us > 0 && (student == nullptr || !launcher_waits_for_gpu(batch.student));
    const double hold_us = batch.held ? plan.hold_us : 0;
    turn(reference, batch.reference, keys, true, hold_us);

    for (;;) {
        const int done = timed_count(student != nullptr ? batch.student : batch.reference);
        keys.assign(static_cast<std::size_t>(std::min(std::max(1, plan.turn_reps), max_reps - done)), 0);
        for (auto& key : keys) key = draw_key(random);
        // A B, then B A: a drift within the batch is charged to both sides alike.
        if (batch.rounds % 2 == 0) {
            turn(student, batch.student, keys, false, hold_us);
            turn(reference, batch.reference, keys, false, hold_us);
        } else {
            turn(reference, batch.reference, keys, false, hold_us);
            turn(student, batch.student, keys, false, hold_us);
        }
        ++batch.rounds;
        const int count = done + static_cast<int>(keys.size());
        if (count >= min_reps && (!settled || settled(batch))) break;
        if (count >= max_reps || Clock::now() - started >= plan.cap) {
            batch.capped = true;
            break;
        }
    }
    batch.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return batch;
}

ReferenceRunner::ReferenceRunner(std::function<SpawnOptions()> spawn, std::string exercise,
                                 std::chrono::milliseconds startup_limit, std::chrono::milliseconds command_limit)
    : spawn_(std::move(spawn)),
      exercise_(std::move(exercise)),
      startup_limit_(startup_limit),
      command_limit_(command_limit)
{
}

ReferenceRunner::~ReferenceRunner()
{
    if (!child_) return;
    try {
        deadline_ = Clock::now() + std::chrono::seconds(5);
        send(MessageType::quit, nlohmann::json::object());
        expect(MessageType::done);
    } catch (const ReferenceFailure&) {
    }
    if (child_) child_->kill_and_reap();
}

void ReferenceRunner::fail(const std::string& why)
{
    failure_ = "the reference runner " + why;
    if (child_) child_->kill_and_reap();
    child_.reset();
    throw ReferenceFailure(failure_);
}

void ReferenceRunner::send(MessageType type, const nlohmann::json& meta)
{
    try {
        ChannelWriter(child_->command_fd()).send(type, meta);
    } catch (const std::exception&) {
        fail("closed its channel");
    }
}

Message ReferenceRunner::expect(MessageType type)
{
    Message message;
    ChannelReader answers(child_->channel_fd());
    answers.set_max_blob_bytes(std::uint64_t{1} << 34);
    switch (answers.receive(message, deadline_)) {
        case ChannelReader::Result::message:
            break;
        case ChannelReader::Result::timed_out:
            fail("did not answer in time");
        default:
            fail("ended");
    }
    if (message.type == MessageType::cuda_error || message.type == MessageType::exception)
        fail("failed: " + message.meta.value("message", std::string("an error")));
    if (message.type != type) fail("answered something else");
    return message;
}

void ReferenceRunner::start()
{
    SpawnOptions spawn = spawn_();
    spawn.argv.insert(spawn.argv.end(), {"--exercise", exercise_});
    spawn.create_channel = true;
    try {
        child_ = Child::spawn(spawn);
    } catch (const std::exception& e) {
        fail(std::string("could not start: ") + e.what());
    }
    deadline_ = Clock::now() + startup_limit_;
    expect(MessageType::hello);
}

Clock::duration ReferenceRunner::begin_case(int index, std::int64_t elements, const GpuLock* gpu_lock)
{
    if (!failure_.empty()) throw ReferenceFailure(failure_);
    if (current_case_ == index) return {};
    if (!child_) start();
    const auto limit = command_limit_ +
                       std::chrono::milliseconds(static_cast<long long>(20 * static_cast<double>(elements) / 1e6));
    const auto quiet_from = Clock::now();
    if (gpu_lock) gpu_lock->wait_while_quiet();  // no input made while a batch is timed
    Clock::duration waited = Clock::now() - quiet_from;
    deadline_ = Clock::now() + limit;
    send(MessageType::load_case, {{"case", index}});
    expect(MessageType::case_loaded);
    GpuLock::Hold shared;
    if (gpu_lock) shared = gpu_lock->hold(false);
    waited += shared.waited;
    deadline_ = Clock::now() + limit;
    send(MessageType::run_case, {{"case", index}});
    expect(MessageType::case_ran);
    shared = {};
    expect(MessageType::case_output);
    current_case_ = index;
    return waited;
}

void ReferenceRunner::end_timing()
{
    if (!failure_.empty()) throw ReferenceFailure(failure_);
    if (current_case_ < 0) return;
    deadline_ = Clock::now() + command_limit_;
    send(MessageType::end_timing, nlohmann::json::object());
    expect(MessageType::timing_ended);
}

TimedRep ReferenceRunner::repetition(std::uint64_t key, bool warmup, double hold_us)
{
    if (!failure_.empty() || !child_) throw ReferenceFailure(failure_.empty() ? "no case begun" : failure_);
    deadline_ = Clock::now() + command_limit_;
    try {
        return time_repetition([this](MessageType type, const nlohmann::json& meta) { send(type, meta); },
                               [this](MessageType type) { return expect(type); }, key, warmup, hold_us);
    } catch (const ReferenceFailure&) {
        throw;
    } catch (const std::exception& e) {
        fail(std::string("sent a malformed answer: ") + e.what());
    }
}

}  // namespace harness

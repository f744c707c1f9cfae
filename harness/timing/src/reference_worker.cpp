#include "harness/timing/reference_worker.hpp"

#include "exchange.hpp"

namespace harness::timing {

using Clock = std::chrono::steady_clock;

ReferenceWorker::ReferenceWorker(std::function<SpawnOptions()> spawn, std::string exercise,
                                 std::chrono::milliseconds startup_limit, std::chrono::milliseconds command_limit)
    : spawn_(std::move(spawn)),
      exercise_(std::move(exercise)),
      startup_limit_(startup_limit),
      command_limit_(command_limit)
{
}

ReferenceWorker::~ReferenceWorker()
{
    if (child_) detail::quit(*child_);
}

void ReferenceWorker::fail(const std::string& why)
{
    failure_ = "the reference runner " + why;
    if (child_) child_->kill_and_reap();
    child_.reset();
    throw ReferenceFailure(failure_);
}

void ReferenceWorker::retry()
{
    if (failure_.empty()) return;
    if (child_) child_->kill_and_reap();
    child_.reset();
    started_ = false;
    failure_.clear();
}

void ReferenceWorker::start()
{
    spawn();
    await_hello();
}

void ReferenceWorker::spawn()
{
    SpawnOptions spawn = spawn_();
    spawn.argv.insert(spawn.argv.end(), {"--exercise", exercise_});
    spawn.create_channel = true;
    try {
        child_ = Child::spawn(spawn);
    } catch (const std::exception& e) {
        fail(std::string("could not start: ") + e.what());
    }
}

void ReferenceWorker::await_hello()
{
    Message hello;
    if (ChannelReader(child_->channel_fd()).receive(hello, Clock::now() + startup_limit_) !=
            ChannelReader::Result::message ||
        hello.type != MessageType::hello || !hello.meta.value("launcher_found", false))
        fail("did not start (" + child_->kill_and_reap().describe() + ")");
    started_ = true;
}

void ReferenceWorker::spawn_early()
{
    if (child_ || !failure_.empty()) return;
    try {
        spawn();
    } catch (const ReferenceFailure&) {  // kept in failure_: the first command throws it
    }
}

void ReferenceWorker::await_start()
{
    if (!child_ || started_ || !failure_.empty()) return;
    try {
        await_hello();
    } catch (const ReferenceFailure&) {
    }
}

Message ReferenceWorker::command(MessageType type, const nlohmann::json& meta, MessageType answer, int descriptor)
{
    if (!failure_.empty()) throw ReferenceFailure(failure_);
    if (!child_)
        start();
    else if (!started_)
        await_hello();
    std::string why;
    std::optional<Message> message = detail::exchange(*child_, type, meta, answer, command_limit_, descriptor, why);
    if (!message) fail(why);
    return std::move(*message);
}

void ReferenceWorker::map(int descriptor, const nlohmann::json& layout, const nlohmann::json& args)
{
    command(MessageType::map_timing, {{"layout", layout}, {"args", args}}, MessageType::timing_mapped, descriptor);
}

void ReferenceWorker::run_batch(bool launch)
{
    command(MessageType::run_batch, {{"launch", launch}}, MessageType::batch_ran);
}

void ReferenceWorker::unmap()
{
    command(MessageType::unmap_timing, nlohmann::json::object(), MessageType::timing_unmapped);
}

}  // namespace harness::timing

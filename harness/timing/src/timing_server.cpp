#include "harness/timing/timing_server.hpp"

#include <unistd.h>

#include "exchange.hpp"
#include "harness/cases.hpp"

namespace harness::timing {

using Clock = std::chrono::steady_clock;

TimingServer::TimingServer(SpawnOptions spawn, std::chrono::milliseconds command_limit)
    : spawn_(std::move(spawn)), command_limit_(command_limit)
{
    spawn_.argv.push_back("--timing-server");
    spawn_.create_channel = true;
    // The grader's own program: no file-size limit (a stand-in server's "device memory" is a file).
    spawn_.limits.max_file_bytes = 0;
}

TimingServer::~TimingServer()
{
    if (child_) detail::quit(*child_);
}

void TimingServer::fail(const std::string& why)
{
    if (child_) child_->kill_and_reap();
    child_.reset();
    throw TimingServerFailure("the grader's timing server " + why);
}

Message TimingServer::command(MessageType type, const nlohmann::json& meta, MessageType answer)
{
    if (!child_) {
        try {
            child_ = Child::spawn(spawn_);
        } catch (const std::exception& e) {
            fail(std::string("could not start: ") + e.what());
        }
    }
    std::string why;
    std::optional<Message> message = detail::exchange(*child_, type, meta, answer, command_limit_, -1, why);
    if (!message) fail(why);
    return std::move(*message);
}

nlohmann::json TimingServer::calibrate()
{
    return command(MessageType::calibrate, nlohmann::json::object(), MessageType::calibration).meta;
}

TimingServer::Allocation TimingServer::allocate(const std::string& set, const BatchShape& shape)
{
    const Message allocated =
        command(MessageType::allocate_timing, {{"set", set}, {"shape", to_json(shape)}}, MessageType::timing_allocated);
    Allocation allocation;
    allocation.layout = allocated.meta.value("layout", nlohmann::json::object());
    allocation.descriptor = receive_descriptor(child_->handles_fd(), Clock::now() + command_limit_);
    if (allocation.descriptor < 0) fail("sent no descriptor for its allocation");
    return allocation;
}

void TimingServer::generate(const std::string& set, std::uint64_t seed, TimedValues values)
{
    command(MessageType::generate, {{"set", set}, {"seed", hex64(seed)}, {"values", {{"lo", values.lo}, {"hi", values.hi}}}},
            MessageType::generated);
}

Checksummed TimingServer::checksum(const std::string& set)
{
    const Message answer = command(MessageType::checksum, {{"set", set}}, MessageType::checksummed);
    Checksummed result;
    try {
        for (const auto& sum : answer.meta.at("checksums"))
            result.checksums.push_back(std::stoull(sum.get<std::string>(), nullptr, 16));
        result.window_ms = answer.meta.at("window_ms").get<double>();
        result.generate_gpu_ms = answer.meta.at("gpu_ms").at("generate").get<double>();
        result.checksum_gpu_ms = answer.meta.at("gpu_ms").at("checksum").get<double>();
    } catch (const std::exception& e) {
        fail(std::string("sent a malformed checksum: ") + e.what());
    }
    return result;
}

void TimingServer::free(const std::string& set)
{
    command(MessageType::free_timing, {{"set", set}}, MessageType::timing_freed);
}

}  // namespace harness::timing

#include "exchange.hpp"

namespace harness::timing::detail {

using Clock = std::chrono::steady_clock;

std::optional<Message> exchange(Child& child, MessageType type, const nlohmann::json& meta, MessageType answer,
                                std::chrono::milliseconds limit, int descriptor, std::string& why)
{
    try {
        ChannelWriter(child.command_fd()).send(type, meta);
        if (descriptor >= 0) send_descriptor(child.handles_fd(), descriptor);
    } catch (const std::exception&) {
        why = "closed its channel";
        return std::nullopt;
    }
    Message message;
    ChannelReader reader(child.channel_fd());
    reader.spin_while_waiting(batch_spin);
    switch (reader.receive(message, Clock::now() + limit)) {
        case ChannelReader::Result::message:
            break;
        case ChannelReader::Result::timed_out:
            why = "did not answer in time";
            return std::nullopt;
        default:
            why = "ended (" + child.kill_and_reap().describe() + ")";
            return std::nullopt;
    }
    if (message.type == MessageType::cuda_error || message.type == MessageType::exception) {
        why = "failed: " + message.meta.value("message", std::string("an error"));
        return std::nullopt;
    }
    if (message.type != answer || !message.meta.is_object()) {
        why = "answered something else";
        return std::nullopt;
    }
    return message;
}

void quit(Child& child)
{
    try {
        ChannelWriter(child.command_fd()).send(MessageType::quit, nlohmann::json::object());
        Message done;
        ChannelReader(child.channel_fd()).receive(done, Clock::now() + std::chrono::seconds(5));
    } catch (const std::exception&) {
    }
    child.kill_and_reap();
}

}  // namespace harness::timing::detail

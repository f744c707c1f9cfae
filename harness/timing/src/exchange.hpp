// Private to harness/timing: one command to one of the grader's own programs (its timing server, a
// reference runner) and the answer it must give. Both sides' handles call this; each turns a
// failure into its own exception.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "harness/channel.hpp"
#include "harness/process.hpp"

namespace harness::timing::detail {

// Sends `type` (and `descriptor` on the handles socket after it, where one is given), then waits up
// to `limit` for `answer`, spinning (harness/channel.hpp: batch_spin). Returns the answer, or
// nothing with `why` saying what went wrong ("closed its channel", "did not answer in time", ...).
std::optional<Message> exchange(Child& child, MessageType type, const nlohmann::json& meta, MessageType answer,
                                std::chrono::milliseconds limit, int descriptor, std::string& why);

// Asks the program to quit (five seconds for its answer), then kills what is left of it.
void quit(Child& child);

}  // namespace harness::timing::detail

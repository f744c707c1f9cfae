// A stand-in for an exercise runner that needs no GPU: it speaks the runner's channel protocol
// and computes its "output" on the CPU, or misbehaves on purpose. With fake_nvcc.sh it lets the
// tests drive the real `grade` end to end on a machine without a GPU (CI).
//
//   fake_runner --behaviour B --exercise NAME --cases 0,1,... [--reps N] [--warmup N]
//
// Behaviours: correct | exclusive_scan | unwritten | hang_at:K | crash_at:K | cuda_error_at:K |
// fake_score (prints a fake score on stdout, writes nothing) | no_launcher | hidden_stream
// (correct, but its timing says work escaped the events) | too_fast | cached_timing |
// forged_timing (sends a second timing message, as submitted code writing to the channel would) |
// garbage_meta | escape (forks a grandchild that calls setsid and sleeps forever) | racy (wrong,
// and a second run gives another output)
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <unistd.h>
#include <string>
#include <thread>
#include <vector>

#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/poison.hpp"

using namespace harness;

namespace {

template <typename T>
void append(std::vector<std::uint8_t>& blob, T value, std::int64_t count)
{
    for (std::int64_t i = 0; i < count; ++i) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
        blob.insert(blob.end(), p, p + sizeof(T));
    }
}

// Sends the case's output and returns the checksum of its data (the timing message repeats it).
std::uint64_t send_output(ChannelWriter& channel, const Exercise& e, const Case& c, const std::string& behaviour)
{
    const CaseInputs inputs = make_inputs(e, c);
    const Expected expected = golden(e, c, inputs);
    std::vector<std::uint8_t> blob;
    append(blob, unwritten_f32, guard_elements);
    for (std::size_t i = 0; i < expected.value.size(); ++i) {
        if (behaviour == "unwritten" || behaviour == "fake_score") {
            append(blob, unwritten_f32, 1);
        } else {
            double v = expected.value[i];
            if (behaviour == "exclusive_scan" || behaviour == "racy") v -= inputs.in_f32[i];
            append(blob, static_cast<float>(v), 1);
        }
    }
    const std::uint64_t out_checksum =
        checksum64(blob.data() + guard_elements * 4, blob.size() - static_cast<std::size_t>(guard_elements) * 4);
    append(blob, unwritten_f32, guard_elements);
    const std::size_t out_bytes = blob.size();
    append(blob, input_guard_f32, 2 * guard_elements);
    const std::size_t in_guard_bytes = blob.size() - out_bytes;
    std::size_t scratch_bytes = 0;
    if (e.family == Family::full_scan) {
        append(blob, scratch_f32, 2 * guard_elements);
        scratch_bytes = blob.size() - out_bytes - in_guard_bytes;
    }
    channel.send(MessageType::case_output,
                 {{"case", c.index},
                  {"segments", {{{"name", "out"}, {"bytes", out_bytes}},
                                {{"name", "in_guards"}, {"bytes", in_guard_bytes}},
                                {{"name", "scratch_guards"}, {"bytes", scratch_bytes}}}},
                  {"input_checksum", checksum64(inputs.input_data(), inputs.input_bytes())},
                  {"input_first_changed", -1},
                  {"input_changed_elements", 0},
                  {"repeat_checksum", behaviour == "racy" ? out_checksum ^ 1 : out_checksum}},
                 blob.data(), blob.size());
    return out_checksum;
}

int at(const std::string& behaviour, const std::string& prefix)
{
    return behaviour.rfind(prefix, 0) == 0 ? std::stoi(behaviour.substr(prefix.size())) : -1;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string behaviour = "correct", exercise_name, cases_text;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--behaviour") behaviour = argv[i + 1];
        else if (flag == "--exercise") exercise_name = argv[i + 1];
        else if (flag == "--cases") cases_text = argv[i + 1];
    }
    auto channel = ChannelWriter::from_environment();
    const Exercise* exercise = find_exercise(exercise_name);
    if (!channel || !exercise) return 2;
    const auto cases = cases_for(*exercise);

    channel->send(MessageType::hello, {{"exercise", exercise->name}, {"device", "fake device (CPU)"}, {"cc", "0.0"},
                                       {"l2_bytes", 0}, {"peak_gb_s", 1000.0},
                                       {"launcher_found", behaviour != "no_launcher"}});
    if (behaviour == "no_launcher") return channel->send(MessageType::done, nlohmann::json::object()), 0;
    if (behaviour == "fake_score")
        std::cout << R"({"exercise": ")" << exercise->name << R"(", "status": "pass", "points": 10})" << "\nALL TESTS PASSED"
                  << std::endl;

    for (std::size_t pos = 0; pos < cases_text.size();) {
        const std::size_t comma = cases_text.find(',', pos);
        const int index = std::stoi(cases_text.substr(pos, comma - pos));
        pos = comma == std::string::npos ? cases_text.size() : comma + 1;
        const Case& c = cases.at(static_cast<std::size_t>(index));
        channel->send(MessageType::case_begin, {{"case", index}});
        if (behaviour == "escape" && index == 0 && fork() == 0) {
            // A grandchild that leaves the runner's process group and would live on.
            setsid();
            std::ofstream("escaped.pid") << getpid() << "\n";
            for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        }
        if (index == at(behaviour, "hang_at:"))
            for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        if (index == at(behaviour, "crash_at:")) std::raise(SIGSEGV);
        if (index == at(behaviour, "cuda_error_at:")) {
            channel->send(MessageType::cuda_error, {{"case", index}, {"phase", "launch"}, {"error", "cudaErrorIllegalAddress"},
                                                    {"message", "cudaErrorIllegalAddress (an illegal memory access was encountered)"}});
            return 3;
        }
        const std::uint64_t out_checksum = send_output(*channel, *exercise, c, behaviour);
        if (c.timed) {
            // Five event times, then five host times: hidden_stream fakes work the events miss,
            // too_fast a time no memory allows, cached_timing a launcher that skips repeated work.
            const float event_ms = behaviour == "too_fast" ? 1e-4f : 1.0f;
            std::vector<float> samples(10, event_ms);
            for (std::size_t k = 5; k < 10; ++k) samples[k] = behaviour == "hidden_stream" ? 4.0f : event_ms * 1.02f;
            channel->send(MessageType::timing,
                          {{"case", index}, {"reps", 5}, {"warmup", 0},
                           {"output_checksum", behaviour == "cached_timing" ? out_checksum + 1 : out_checksum}},
                          samples.data(), samples.size() * sizeof(float));
        }
        if (behaviour == "forged_timing" && c.timed) {
            const std::vector<float> tiny(10, 1e-3f);
            channel->send(MessageType::timing, {{"case", index}, {"reps", 5}, {"output_checksum", out_checksum}},
                          tiny.data(), tiny.size() * sizeof(float));
        }
        if (behaviour == "garbage_meta" && index == 2) {
            channel->send(MessageType::case_end, {{"case", "two"}});
            continue;
        }
        channel->send(MessageType::case_end, {{"case", index}});
    }
    channel->send(MessageType::done, nlohmann::json::object());
    return 0;
}

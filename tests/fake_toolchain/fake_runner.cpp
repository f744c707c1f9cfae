// A stand-in for an exercise runner that needs no GPU: it answers the grader's commands like the
// real runner (harness/runner/runner_main.cu) and computes its "output" on the CPU, or misbehaves
// on purpose. With the fake toolchain it lets the tests drive the real `grade` end to end on a
// machine without a GPU (CI). Its "kernel" is a 20 ms sleep, which its events time honestly.
//
//   fake_runner --exercise NAME      (the behaviour comes from fake_behaviour(): see fake_nvcc.sh)
//
// Behaviours: correct | exclusive_scan | unwritten | hang_at:K | crash_at:K | cuda_error_at:K |
// out_of_memory_at:K (cudaErrorMemoryAllocation at case K, as when another runner took the memory) |
// fake_score (prints a fake score on stdout, writes nothing) | no_launcher | hidden_stream (its
// events report 20 ms of a 200 ms launch, as work on another stream would) | too_fast (reports a
// time no memory allows) | cached_replay (answers every timed repetition with the output of the
// case's own input) | waits_for_gpu (says each held launch ran the hold out) | forged_timing (sends a second
// `launched`, as submitted code writing to the channel would) | garbage_meta | escape (forks a grandchild named
// grader_escapee that calls setsid and sleeps forever) | racy (wrong, and a second run gives another output) |
// skips_most (on four calls in five, answers fast with the first output it computed: a kernel that
// skips its work on most calls, so the median is a skipped call) | slow_start (sleeps 3 s before its hello) |
// exits_at_start (exit code 1 before its hello, as a static initializer or a sandbox that cannot fork would) |
// disturbed_once (its first 7 launches take 200 ms of which the events see 20, as if something else had held the
// machine; later ones are honest) | slow_host (says on stderr when a case is loaded, has run and is sent, and
// spends 8 s between the last two, as the host's checks of a large case do)
#include <sys/prctl.h>
#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "fake_behaviour.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "harness/process.hpp"
#include "harness/variant.hpp"

using namespace harness;

namespace {

template <typename T>
void append(std::vector<std::uint8_t>& blob, T value, std::int64_t count)
{
    const std::size_t at = blob.size();
    blob.resize(at + sizeof(T) * static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
        std::memcpy(blob.data() + at + sizeof(T) * static_cast<std::size_t>(i), &value, sizeof(T));
}

// Sends the case's output and returns the checksum of its data (the timing message repeats it).
std::uint64_t send_output(ChannelWriter& channel, const Exercise& e, const Case& c, const std::string& behaviour)
{
    const CaseInputs inputs = make_inputs(e, c);
    const Expected expected = golden(e, c, inputs);
    std::vector<std::uint8_t> blob;
    blob.reserve(4 * (expected.value.size() + 6 * static_cast<std::size_t>(guard_elements)));
    append(blob, unwritten_f32, guard_elements);
    const bool unwritten = behaviour == "unwritten" || behaviour == "fake_score";
    const bool exclusive = behaviour == "exclusive_scan" || behaviour == "racy";
    const std::size_t out_at = blob.size();
    blob.resize(out_at + expected.value.size() * sizeof(float));
    for (std::size_t i = 0; i < expected.value.size(); ++i) {
        const float v = unwritten
                            ? unwritten_f32
                            : static_cast<float>(exclusive ? expected.value[i] - inputs.in_f32[i] : expected.value[i]);
        std::memcpy(blob.data() + out_at + i * sizeof(float), &v, sizeof(float));
    }
    const std::uint64_t out_checksum = bits_checksum(blob.data() + out_at, expected.value.size(), false);
    append(blob, unwritten_f32, guard_elements);
    const std::size_t out_bytes = blob.size();
    append(blob, input_guard_f32, 2 * guard_elements);
    const std::size_t in_guard_bytes = blob.size() - out_bytes;
    std::size_t scratch_bytes = 0;
    if (uses_scratch(e)) {
        append(blob, scratch_f32, 2 * guard_elements);
        scratch_bytes = blob.size() - out_bytes - in_guard_bytes;
    }
    channel.send(MessageType::case_output,
                 {{"case", c.index},
                  {"segments",
                   {{{"name", "out"}, {"bytes", out_bytes}},
                    {{"name", "in_guards"}, {"bytes", in_guard_bytes}},
                    {{"name", "scratch_guards"}, {"bytes", scratch_bytes}}}},
                  {"input_checksum", bits_checksum(inputs.input_data(), inputs.input_bytes() / (inputs.in_f64.empty() ? 4 : 8),
                                                     !inputs.in_f64.empty())},
                  {"input_first_changed", -1},
                  {"input_changed_elements", 0},
                  {"repeat_checksum", behaviour == "racy" ? out_checksum ^ 1 : out_checksum}},
                 blob.data(), blob.size());
    return out_checksum;
}

// The message a runner sends when a CUDA call of the case failed, before it exits.
void send_cuda_error(ChannelWriter& channel, int index, const std::string& phase, const std::string& error,
                     const std::string& description)
{
    channel.send(MessageType::cuda_error,
                 {{"case", index}, {"phase", phase}, {"error", error}, {"message", error + " (" + description + ")"}});
}

// What a correct fake answers for its output on the variant of key `key`: a hash of case and key, the
// same in every fake_runner process, instead of the checksum of the true output, which takes the CPU
// seconds per call at 2^26 elements. The grader accepts a repetition whose checksum equals the
// reference runner's on the same key (in these tests fake_runner too) without computing the true
// one, and judges any other against the true one, which no stand-in equals: so the fake is correct
// only beside a reference, which every test that times it has.
std::uint64_t correct_output_checksum(const Case& c, std::uint64_t key)
{
    const std::uint64_t words[2] = {c.seed, key};
    return fnv1a64(words, sizeof words);
}

int at(const std::string& behaviour, const std::string& prefix)
{
    return behaviour.rfind(prefix, 0) == 0 ? std::stoi(behaviour.substr(prefix.size())) : -1;
}

// A grandchild that leaves the runner's process group and would live on; it has its name before
// the runner goes on, so a test that finds no process of that name knows it was killed.
void escape()
{
    int ready[2];
    if (pipe(ready) != 0) return;
    if (fork() == 0) {
        setsid();
        prctl(PR_SET_NAME, "grader_escapee");
        char byte = 1;
        if (write(ready[1], &byte, 1) != 1) _exit(1);
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    char byte = 0;
    if (read(ready[0], &byte, 1) != 1) std::exit(5);
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string behaviour = fake_behaviour();
    std::string exercise_name;
    for (int i = 1; i + 1 < argc; i += 2)
        if (std::string(argv[i]) == "--exercise") exercise_name = argv[i + 1];
    const Exercise* exercise = find_exercise(exercise_name);
    if (!exercise) return 2;
    const auto cases = cases_for(*exercise);
    ChannelWriter channel(child_channel_fd);
    ChannelReader commands(child_command_fd);

    if (behaviour == "slow_start") std::this_thread::sleep_for(std::chrono::seconds(3));
    if (behaviour == "exits_at_start") return 1;
    channel.send(MessageType::hello, {{"exercise", exercise->name}, {"launcher_found", behaviour != "no_launcher"}});
    if (behaviour == "fake_score")
        std::cout << R"({"exercise": ")" << exercise->name << R"(", "status": "pass", "points": 10})"
                  << "\nALL TESTS PASSED" << std::endl;

    const Case* current = nullptr;
    CaseInputs inputs;
    std::uint64_t key = 0;
    std::uint64_t case_output_checksum = 0;  // of the output sent for the current case's own input
    int launches = 0;
    bool skipped = false;
    int loaded = -1;  // the case whose input load_case made
    for (;;) {
        Message command;
        if (commands.receive(command, std::chrono::steady_clock::time_point::max()) != ChannelReader::Result::message)
            return 0;
        switch (command.type) {
            case MessageType::load_case: {
                const int index = command.meta.at("case").get<int>();
                current = &cases.at(static_cast<std::size_t>(index));
                inputs = make_inputs(*exercise, *current);
                loaded = index;
                if (behaviour == "slow_host") std::cerr << "fake_runner: case " << index << " loaded" << std::endl;
                channel.send(MessageType::case_loaded, {{"case", index}});
                break;
            }
            case MessageType::run_case: {
                const int index = command.meta.at("case").get<int>();
                current = &cases.at(static_cast<std::size_t>(index));
                if (behaviour == "escape" && index == 0) escape();
                if (index == at(behaviour, "hang_at:"))
                    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
                if (index == at(behaviour, "crash_at:")) std::raise(SIGSEGV);
                if (index == at(behaviour, "cuda_error_at:")) {
                    send_cuda_error(channel, index, "launch", "cudaErrorIllegalAddress",
                                    "an illegal memory access was encountered");
                    return 3;
                }
                if (index == at(behaviour, "out_of_memory_at:")) {
                    send_cuda_error(channel, index, "timing", "cudaErrorMemoryAllocation", "out of memory");
                    return 3;
                }
                if (loaded != index) inputs = make_inputs(*exercise, *current);
                loaded = -1;
                channel.send(MessageType::case_ran, {{"case", index}});
                if (behaviour == "slow_host") {  // the host's checks of a large case, after its GPU work
                    std::cerr << "fake_runner: case " << index << " ran" << std::endl;
                    std::this_thread::sleep_for(std::chrono::seconds(8));
                }
                if (behaviour == "garbage_meta" && index == 2) {
                    channel.send(MessageType::case_output, {{"case", "two"}});
                    break;
                }
                case_output_checksum = send_output(channel, *exercise, *current, behaviour);
                if (behaviour == "slow_host") std::cerr << "fake_runner: case " << index << " sent" << std::endl;
                break;
            }
            case MessageType::prepare:
                channel.send(MessageType::prepared, nlohmann::json::object());
                break;
            case MessageType::launch: {
                key = command.meta.at("key").get<std::uint64_t>();
                const auto start = std::chrono::steady_clock::now();
                const bool disturbed =
                    behaviour == "hidden_stream" || (behaviour == "disturbed_once" && ++launches <= 7);
                skipped = behaviour == "skips_most" && ++launches % 5 != 0;
                if (behaviour != "too_fast")
                    std::this_thread::sleep_for(std::chrono::milliseconds(disturbed ? 200 : skipped ? 2 : 20));
                const double ms =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
                const double reported = behaviour == "too_fast" ? 1e-4 : disturbed ? 20.0 : ms;
                // A launcher that waits for the GPU runs out every hold of the stream.
                const bool ran_out = behaviour == "waits_for_gpu" && command.meta.at("hold_us").get<double>() > 0;
                channel.send(MessageType::launched, {{"event_ms", reported}, {"hold_ran_out", ran_out}});
                if (behaviour == "forged_timing")
                    channel.send(MessageType::launched, {{"event_ms", 1e-3}, {"hold_ran_out", false}});
                break;
            }
            case MessageType::checksum:
                // A replayed or skipped call answers with the output of the case's own input; a correct one with
                // a stand-in for the correct output on this key (see correct_output_checksum).
                channel.send(MessageType::checksummed, {{"checksum", behaviour == "cached_replay" || skipped
                                                                         ? case_output_checksum
                                                                         : correct_output_checksum(*current, key)}});
                break;
            case MessageType::calibrate:
                // A "device" whose copy bandwidth is 100 GB/s: the 20 ms "kernel" (512 MB of the 2^26 scan, 27
                // GB/s) is plausible, an answer within a pipe's round trip is not, however loaded the machine.
                // Its 80 GiB make thirteen exercise places (grader.cpp), more than there are exercises.
                channel.send(MessageType::calibration, {{"device", "fake device (CPU)"},
                                                        {"cc", "0.0"},
                                                        {"copy_gb_s", 100.0},
                                                        {"memory_bytes", 80LL << 30}});
                break;
            case MessageType::end_timing:
                std::cerr << "fake_runner: timing of case " << (current ? current->index : -1) << " ended" << std::endl;
                channel.send(MessageType::timing_ended, nlohmann::json::object());
                break;
            case MessageType::quit:
                channel.send(MessageType::done, nlohmann::json::object());
                return 0;
            default:
                return 4;
        }
    }
}

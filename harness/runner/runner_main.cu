// The exercise runner: linked with one submission file, started by the grader in a sandboxed
// child process as
//
//   runner --exercise NAME            (the reference runner also answers `calibrate`; started
//                                      with --bench, it measures instead: bench.hpp)
//
// It does only what the grader asks, one command at a time (harness/channel.hpp): run_case
// generates the case's input from its seed, poisons the output, calls the launcher, and sends the
// raw output with its guard zones; prepare / launch / checksum are the three steps of one timed
// repetition, each timed by the grader on its own clock. The runner decides nothing and nothing it
// says is taken on trust: the grader checks outputs against its own golden results and bounds
// every time by what it saw. A CUDA error is reported with its case and ends the process (errors
// can be sticky); the grader continues in a new one.
#include <cuda_runtime.h>

#include <cxxabi.h>
#include <typeinfo>

#include <fcntl.h>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "guarded_buffer.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/cuda_check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "launchers.hpp"
#include "runner_main.hpp"
#include "timed_runs.hpp"

namespace harness::runner {
namespace {

// Sets of buffers a speed case's repetitions take turns over (timed_runs.hpp).
constexpr int timed_placements = 4;

// Page-locked host memory: a convolution's mask lives here, so that the launcher's copy of it to
// constant memory is a DMA on the stream, never a staging copy through the driver's own buffers,
// whose host-side cost moves with the machine's load (and with it the timed launch).
struct PinnedFloats {
    struct Free {
        void operator()(float* p) const { cudaFreeHost(p); }
    };
    std::unique_ptr<float, Free> data;
};

PinnedFloats pinned_copy(const std::vector<float>& values)
{
    PinnedFloats pinned;
    if (values.empty()) return pinned;
    float* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, values.size() * sizeof(float)));
    pinned.data.reset(p);
    std::memcpy(p, values.data(), values.size() * sizeof(float));
    return pinned;
}

// One case's device buffers, poisoned and filled, and its mask (host memory, page-locked).
struct CaseBuffers {
    std::unique_ptr<GuardedBuffer> in, out, scratch;
    PinnedFloats mask;
    LauncherArgs args;
};

CaseBuffers prepare(const Exercise& exercise, const Case& c, const CaseInputs& inputs)
{
    const bool f64 = element_type(exercise) == ElementType::f64;
    const std::size_t element = f64 ? 8 : 4;
    CaseBuffers buffers;
    buffers.in = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.n), element);
    buffers.in->upload(inputs.input_data(), f64 ? input_guard_f64 : input_guard_f32);
    buffers.out = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(output_elements(exercise, c)), element);
    buffers.out->fill(f64 ? unwritten_f64 : unwritten_f32);
    if (uses_scratch(exercise)) {
        buffers.scratch = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.n + scratch_extra), element);
        buffers.scratch->fill(f64 ? scratch_f64 : scratch_f32);
    }
    LauncherArgs& a = buffers.args;
    a.in = buffers.in->data();
    a.out = buffers.out->data();
    a.scratch = buffers.scratch ? buffers.scratch->data() : nullptr;
    buffers.mask = pinned_copy(inputs.mask);
    a.mask = buffers.mask.data.get();
    a.n = static_cast<int>(c.n);
    a.height = c.height;
    a.width = c.width;
    a.mask_width = c.mask_width;
    return buffers;
}

void append_guards(const GuardedBuffer& buffer, std::vector<std::uint8_t>& blob)
{
    const std::size_t at = blob.size(), guard = buffer.guard_bytes();
    blob.resize(at + 2 * guard);
    buffer.download_range(0, guard, blob.data() + at);
    buffer.download_range(guard + buffer.data_bytes(), guard, blob.data() + at + guard);
}

struct Capture {
    nlohmann::json meta;
    std::vector<std::uint8_t> blob;
};

// The output with its guards, the input's guards and scratch's guards, and the input's checksum
// after the run (the parent compares it with its own).
Capture capture_output(const Case& c, const CaseInputs& inputs, const CaseBuffers& buffers)
{
    std::vector<std::uint8_t> blob(buffers.out->total_bytes());
    buffers.out->download_all(blob.data());
    const std::size_t out_bytes = blob.size();
    append_guards(*buffers.in, blob);
    const std::size_t in_guard_bytes = blob.size() - out_bytes;
    std::size_t scratch_guard_bytes = 0;
    if (buffers.scratch) {
        append_guards(*buffers.scratch, blob);
        scratch_guard_bytes = blob.size() - out_bytes - in_guard_bytes;
    }

    std::vector<unsigned char> input_after(buffers.in->data_bytes());
    buffers.in->download_range(buffers.in->guard_bytes(), input_after.size(), input_after.data());
    const std::size_t element = inputs.in_f64.empty() ? 4 : 8;
    long long first_changed = -1, changed = 0;
    const auto* before = static_cast<const unsigned char*>(inputs.input_data());
    if (std::memcmp(before, input_after.data(), input_after.size()) != 0) {
        for (std::size_t i = 0; i < input_after.size(); i += element) {
            if (std::memcmp(before + i, input_after.data() + i, element) != 0) {
                if (first_changed < 0) first_changed = static_cast<long long>(i / element);
                ++changed;
            }
        }
    }
    nlohmann::json meta = {
        {"case", c.index},
        {"segments",
         {{{"name", "out"}, {"bytes", out_bytes}},
          {{"name", "in_guards"}, {"bytes", in_guard_bytes}},
          {{"name", "scratch_guards"}, {"bytes", scratch_guard_bytes}}}},
        {"input_checksum", checksum64(input_after.data(), input_after.size())},
        {"input_first_changed", first_changed},
        {"input_changed_elements", changed},
    };
    return {meta, std::move(blob)};
}

// Runs the launcher once more on the same input, from a poisoned output, and returns the
// checksum of what it wrote: a wrong output that changes between runs points to a race.
std::uint64_t repeat_checksum(const Exercise& exercise, const CaseBuffers& buffers)
{
    buffers.out->fill(element_type(exercise) == ElementType::f64 ? unwritten_f64 : unwritten_f32);
    call_launcher(exercise.name, buffers.args);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> again(buffers.out->data_bytes());
    buffers.out->download_range(buffers.out->guard_bytes(), again.size(), again.data());
    return checksum64(again.data(), again.size());
}

// What the runner keeps between the commands of one case.
struct CurrentCase {
    const Case* c = nullptr;
    CaseInputs inputs;
    CaseBuffers buffers;
    std::unique_ptr<TimedRuns> timed;  // made at the first prepare
};

// Answers one command; returns false after quit.
bool answer(ChannelWriter& channel, const Exercise& exercise, const std::vector<Case>& cases, const Message& command,
            CurrentCase& current, std::string& phase, int& case_index)
{
    const bool f64 = element_type(exercise) == ElementType::f64;
    switch (command.type) {
        case MessageType::run_case: {
            const int index = command.meta.at("case").get<int>();
            if (index < 0 || index >= static_cast<int>(cases.size())) throw std::invalid_argument("no such case");
            current = CurrentCase{};  // frees the previous case's buffers first
            case_index = index;
            current.c = &cases[static_cast<std::size_t>(index)];
            phase = "setup";
            current.inputs = make_inputs(exercise, *current.c);
            const CaseInputs& inputs = current.inputs;
            current.buffers = prepare(exercise, *current.c, inputs);
            phase = "launch";
            call_launcher(exercise.name, current.buffers.args);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            phase = "readback";
            Capture capture = capture_output(*current.c, inputs, current.buffers);
            phase = "repeat";
            capture.meta["repeat_checksum"] = repeat_checksum(exercise, current.buffers);
            channel.send(MessageType::case_output, capture.meta, capture.blob.data(), capture.blob.size());
            // Only a speed case's buffers are needed again (by its repetitions): the others go back to the
            // GPU now, not at the next case, so that a runner waiting for its next case holds no more than
            // its context while other exercises' runners (and other gradings') need the memory.
            if (!current.c->timed) current = CurrentCase{};
            return true;
        }
        case MessageType::prepare: {
            if (current.c == nullptr) throw std::logic_error("prepare without a speed case");
            phase = "timing";
            if (!current.timed) {
                cudaDeviceProp props{};
                CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
                current.timed = std::make_unique<TimedRuns>(
                    *current.buffers.in, *current.buffers.out, current.buffers.scratch.get(), current.buffers.args, f64,
                    static_cast<std::size_t>(props.l2CacheSize), timed_placements);
            }
            current.timed->prepare();
            channel.send(MessageType::prepared, nlohmann::json::object());
            return true;
        }
        case MessageType::launch: {
            if (!current.timed) throw std::logic_error("launch before prepare");
            const auto launched = current.timed->launch(exercise.name, command.meta.at("key").get<std::uint64_t>(),
                                                        command.meta.at("hold_us").get<double>());
            channel.send(MessageType::launched,
                         {{"event_ms", launched.event_ms}, {"hold_ran_out", launched.hold_ran_out}});
            return true;
        }
        case MessageType::checksum:
            if (!current.timed) throw std::logic_error("checksum before prepare");
            channel.send(MessageType::checksummed, {{"checksum", current.timed->checksum()}});
            return true;
        case MessageType::end_timing:
            if (current.timed) {
                current.timed->restore_case_input();  // the next repetitions start from it again
                current.timed.reset();
            }
            channel.send(MessageType::timing_ended, nlohmann::json::object());
            return true;
        case MessageType::calibrate:
            phase = "calibration";
            channel.send(MessageType::calibration, calibrate_device());
            return true;
        case MessageType::quit:
            current = CurrentCase{};
            channel.send(MessageType::done, nlohmann::json::object());
            return false;
        default:
            throw std::logic_error("not a command");
    }
}

// "std::bad_alloc", "std::runtime_error": the dynamic type of an exception, readable.
std::string type_name(const std::exception& error)
{
    int status = 0;
    const char* mangled = typeid(error).name();
    std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
    return status == 0 && readable ? readable.get() : mangled;
}

int run(ChannelWriter& channel, ChannelReader& commands, const std::string& exercise_name)
{
    const Exercise* exercise = find_exercise(exercise_name);
    if (exercise == nullptr) {
        std::fprintf(stderr, "runner: unknown exercise '%s'\n", exercise_name.c_str());
        return 2;
    }
    const auto cases = cases_for(*exercise);
    int case_index = -1;
    std::string phase = "startup";
    try {
        CUDA_CHECK(cudaFree(nullptr));  // create the context now: a broken GPU shows before any case
        channel.send(MessageType::hello,
                     {{"exercise", exercise->name}, {"launcher_found", launcher_found(exercise->name)}});
        CurrentCase current;
        for (;;) {
            Message command;
            const auto got = commands.receive(command, std::chrono::steady_clock::time_point::max());
            if (got != ChannelReader::Result::message) return got == ChannelReader::Result::end_of_stream ? 0 : 2;
            if (!answer(channel, *exercise, cases, command, current, phase, case_index)) return 0;
        }
    } catch (const CudaError& error) {
        channel.send(MessageType::cuda_error,
                     {{"case", case_index}, {"phase", phase}, {"error", error.name()}, {"message", error.what()}});
        return 3;
    } catch (const std::exception& error) {
        // Thrown by the launcher (or by the runner on a command it cannot carry out): not a CUDA error.
        channel.send(MessageType::exception,
                     {{"case", case_index}, {"phase", phase}, {"type", type_name(error)}, {"message", error.what()}});
        return 4;
    }
}

}  // namespace
}  // namespace harness::runner

// main() is runner_entry.cu's, or the reference runner's (reference_runner_main.cu).
int harness::runner::runner_main(int argc, char** argv)
{
    std::string exercise;
    for (int i = 1; i + 1 < argc; i += 2)
        if (std::strcmp(argv[i], "--exercise") == 0) exercise = argv[i + 1];
    // The grader opens both pipes at fixed numbers before it starts the runner.
    if (fcntl(harness::child_channel_fd, F_GETFD) < 0 || fcntl(harness::child_command_fd, F_GETFD) < 0) {
        std::fprintf(stderr, "runner: no grader pipes on fds %d and %d; this program is started by `grade`\n",
                     harness::child_command_fd, harness::child_channel_fd);
        return 2;
    }
    // Programs the runner might start do not inherit them.
    fcntl(harness::child_channel_fd, F_SETFD, FD_CLOEXEC);
    fcntl(harness::child_command_fd, F_SETFD, FD_CLOEXEC);
    harness::ChannelWriter channel(harness::child_channel_fd);
    harness::ChannelReader commands(harness::child_command_fd);
    return harness::runner::run(channel, commands, exercise);
}

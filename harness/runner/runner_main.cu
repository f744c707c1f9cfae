// The exercise runner: linked with one submission file, run by the grader in a child process.
//
//   runner --exercise NAME --cases 0,3,7 [--reps 25] [--warmup 3]
//
// For each case: generate the inputs from the case's seed, poison the output, call the launcher,
// synchronize, and send the raw output (with guard zones) to the parent over the private channel
// (GRADER_CHANNEL_FD). Speed cases are then timed with CUDA events, the L2 flushed before each
// repetition. The runner decides nothing: verdicts are the parent's. A CUDA error is reported
// with its case and ends the process (errors can be sticky); the parent continues in a new one.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "guarded_buffer.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/cuda_check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/poison.hpp"
#include "launchers.hpp"

namespace harness::runner {
namespace {

struct Options {
    std::string exercise;
    std::vector<int> cases;
    int reps = 25;
    int warmup = 3;
};

Options parse(int argc, char** argv)
{
    Options options;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--exercise") options.exercise = value;
        else if (flag == "--reps") options.reps = std::stoi(value);
        else if (flag == "--warmup") options.warmup = std::stoi(value);
        else if (flag == "--cases") {
            for (std::size_t pos = 0; pos < value.size();) {
                const std::size_t comma = value.find(',', pos);
                options.cases.push_back(std::stoi(value.substr(pos, comma - pos)));
                pos = comma == std::string::npos ? value.size() : comma + 1;
            }
        }
    }
    return options;
}

// One case's device buffers, poisoned and filled.
struct CaseBuffers {
    std::unique_ptr<GuardedBuffer> in, out, scratch;
    LauncherArgs args;
};

CaseBuffers prepare(const Exercise& exercise, const Case& c, const CaseInputs& inputs)
{
    const bool f64 = element_type(exercise.family) == ElementType::f64;
    const std::size_t element = f64 ? 8 : 4;
    CaseBuffers buffers;
    buffers.in = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.n), element);
    buffers.in->upload(inputs.input_data(), f64 ? input_guard_f64 : input_guard_f32);
    buffers.out = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.output_elements(exercise.family)), element);
    buffers.out->fill(f64 ? unwritten_f64 : unwritten_f32);
    if (uses_scratch(exercise.family)) {
        buffers.scratch = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.n + scratch_extra), element);
        buffers.scratch->fill(f64 ? scratch_f64 : scratch_f32);
    }
    LauncherArgs& a = buffers.args;
    a.in = buffers.in->data();
    a.out = buffers.out->data();
    a.scratch = buffers.scratch ? buffers.scratch->data() : nullptr;
    a.mask = inputs.mask.empty() ? nullptr : inputs.mask.data();
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
        {"segments", {{{"name", "out"}, {"bytes", out_bytes}},
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
    buffers.out->fill(element_type(exercise.family) == ElementType::f64 ? unwritten_f64 : unwritten_f32);
    call_launcher(exercise.name, buffers.args);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> again(buffers.out->data_bytes());
    buffers.out->download_range(buffers.out->guard_bytes(), again.size(), again.data());
    return checksum64(again.data(), again.size());
}

// Median-ready samples: each repetition flushes the L2 (writes a buffer twice its size), then
// times one launcher call with events.
void time_case(ChannelWriter& channel, const Exercise& exercise, const Case& c, const CaseBuffers& buffers,
               const Options& options, int l2_bytes)
{
    const std::uint64_t unwritten = element_type(exercise.family) == ElementType::f64 ? unwritten_f64 : unwritten_f32;
    const std::size_t flush_bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(l2_bytes), 64u << 20);
    void* flush = nullptr;
    CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < options.warmup; ++i) call_launcher(exercise.name, buffers.args);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    // Per repetition: the event time on the legacy stream, and the host time from the launcher
    // call until the whole device is idle. Work a launcher hides on another stream escapes the
    // events but not the host clock; the parent compares the two.
    std::vector<float> samples(2 * static_cast<std::size_t>(options.reps));
    for (int rep = 0; rep < options.reps; ++rep) {
        // Every repetition must compute the output again: it starts poisoned, and what is left
        // after the last one must be the output the parent verified (checksum below).
        buffers.out->fill(unwritten);
        CUDA_CHECK(cudaMemsetAsync(flush, rep & 0xff, flush_bytes));
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto host_start = std::chrono::steady_clock::now();
        CUDA_CHECK(cudaEventRecord(start));
        call_launcher(exercise.name, buffers.args);
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto host_end = std::chrono::steady_clock::now();
        CUDA_CHECK(cudaGetLastError());
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples[static_cast<std::size_t>(rep)] = ms;
        samples[static_cast<std::size_t>(options.reps + rep)] =
            std::chrono::duration<float, std::milli>(host_end - host_start).count();
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(flush));
    std::vector<unsigned char> out_after(buffers.out->data_bytes());
    buffers.out->download_range(buffers.out->guard_bytes(), out_after.size(), out_after.data());
    channel.send(MessageType::timing, {{"case", c.index}, {"reps", options.reps}, {"warmup", options.warmup},
                                       {"layout", "event_ms[reps], host_ms[reps]"},
                                       {"output_checksum", checksum64(out_after.data(), out_after.size())}},
                 samples.data(), samples.size() * sizeof(float));
}

int run(ChannelWriter& channel, const Options& options)
{
    const Exercise* exercise = find_exercise(options.exercise);
    if (exercise == nullptr) {
        std::fprintf(stderr, "runner: unknown exercise '%s'\n", options.exercise.c_str());
        return 2;
    }
    const auto cases = cases_for(*exercise);
    int current_case = -1;
    std::string phase = "startup";
    try {
        cudaDeviceProp props{};
        CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
        const bool found = launcher_found(exercise->name);
        // The DRAM's peak (two transfers per clock): no honest timing moves bytes faster.
        int memory_khz = 0, bus_bits = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0));
        CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
        const double peak_gb_s = 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9;
        channel.send(MessageType::hello, {{"exercise", exercise->name}, {"device", props.name},
                                          {"cc", std::to_string(props.major) + "." + std::to_string(props.minor)},
                                          {"l2_bytes", props.l2CacheSize}, {"peak_gb_s", peak_gb_s},
                                          {"launcher_found", found}});
        if (!found) {
            channel.send(MessageType::done, nlohmann::json::object());
            return 0;
        }
        for (int index : options.cases) {
            if (index < 0 || index >= static_cast<int>(cases.size())) continue;
            const Case& c = cases[static_cast<std::size_t>(index)];
            current_case = index;
            channel.send(MessageType::case_begin, {{"case", index}});
            phase = "setup";
            const CaseInputs inputs = make_inputs(*exercise, c);
            CaseBuffers buffers = prepare(*exercise, c, inputs);
            phase = "launch";
            call_launcher(exercise->name, buffers.args);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            phase = "readback";
            Capture capture = capture_output(c, inputs, buffers);
            phase = "repeat";
            capture.meta["repeat_checksum"] = repeat_checksum(*exercise, buffers);
            channel.send(MessageType::case_output, capture.meta, capture.blob.data(), capture.blob.size());
            if (c.timed) {
                phase = "timing";
                time_case(channel, *exercise, c, buffers, options, props.l2CacheSize);
            }
            channel.send(MessageType::case_end, {{"case", index}});
        }
        channel.send(MessageType::done, nlohmann::json::object());
        return 0;
    } catch (const CudaError& error) {
        channel.send(MessageType::cuda_error, {{"case", current_case}, {"phase", phase}, {"error", error.name()},
                                               {"message", error.what()}});
        return 3;
    } catch (const std::exception& error) {
        channel.send(MessageType::cuda_error, {{"case", current_case}, {"phase", phase}, {"error", "runner_exception"},
                                               {"message", error.what()}});
        return 4;
    }
}

}  // namespace
}  // namespace harness::runner

int main(int argc, char** argv)
{
    auto channel = harness::ChannelWriter::from_environment();
    unsetenv("GRADER_CHANNEL_FD");   // submitted code has no business with it
    if (!channel) {
        std::fprintf(stderr, "runner: GRADER_CHANNEL_FD is not set; this program is started by `grade`\n");
        return 2;
    }
    return harness::runner::run(*channel, harness::runner::parse(argc, argv));
}

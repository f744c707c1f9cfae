// The exercise runner: linked with one submission file, started by the grader in a sandboxed
// child process as
//
//   runner --exercise NAME            (the reference runner, started with --bench, measures
//                                      instead: bench.hpp)
//
//   runner --timing-server            (the reference runner only, as the grader's timing server:
//                                      timing_server.hpp)
//
// It does only what the grader asks, one command at a time (harness/channel.hpp): load_case
// generates the case's input from its seed; run_case poisons the output, calls the launcher, says
// when the GPU's part is done and sends the raw output with its guard zones; map_timing, run_batch
// and unmap_timing run a speed case's timed batches in device memory the grader's timing server
// owns: it writes their inputs and reads their outputs, and its clock times them. The runner
// decides nothing and nothing it says is taken on trust: the grader checks outputs against its own
// golden results, and the timing server checks a batch's outputs and times it itself. A CUDA error
// is reported with its case and ends the process (errors can be sticky); the grader continues in a
// new one.
#include <cuda_runtime.h>

#include <cxxabi.h>
#include <typeinfo>

#include <fcntl.h>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "guarded_buffer.hpp"
#include "harness/batch_layout.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/cuda_check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "launchers.hpp"
#include "runner_main.hpp"
#include "shareable_memory.hpp"
#include "timing_server.hpp"

namespace harness::runner {
namespace {

// Every word of a block's shared memory set to `word` (volatile: stores nobody reads are kept).
__global__ void fill_shared_memory(unsigned word, unsigned words)
{
    extern __shared__ unsigned shared[];
    volatile unsigned* v = shared;
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) v[i] = word;
}

// Leaves `word` in the shared memory of every SM: what a kernel reads there before it writes it
// (a missing __syncthreads()). The case's run meets one pattern, the second run another (zeros,
// then NaN), so that such a race gives a different output instead of the same leftovers twice.
void scrub_shared_memory(unsigned word)
{
    static const std::pair<int, int> blocks_and_bytes = [] {
        int device = 0, sms = 0, optin = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        CUDA_CHECK(cudaFuncSetAttribute(fill_shared_memory, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
        return std::pair<int, int>{2 * sms, optin};  // one block of all the memory per SM at a time, twice over
    }();
    const auto [blocks, bytes] = blocks_and_bytes;
    fill_shared_memory<<<blocks, 1024, static_cast<std::size_t>(bytes)>>>(word, static_cast<unsigned>(bytes) / 4);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
}

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
    const Poison poison = poison_of(element_type(exercise));
    const std::size_t element = element_bytes(element_type(exercise));
    CaseBuffers buffers;
    buffers.in = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.n), element);
    buffers.in->upload(inputs.input_data(), poison.input_guard);
    buffers.out = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(output_elements(exercise, c)), element);
    buffers.out->fill(poison.unwritten);
    if (uses_scratch(exercise)) {
        buffers.scratch = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.n + scratch_extra), element);
        buffers.scratch->fill(poison.scratch);
    }
    LauncherArgs& a = buffers.args;
    a.in = buffers.in->data();
    a.out = buffers.out->data();
    a.scratch = buffers.scratch ? buffers.scratch->data() : nullptr;
    buffers.mask = pinned_copy(inputs.mask);
    a.mask = buffers.mask.data.get();
    set_shape(a, c);
    return buffers;
}

void append_guards(const GuardedBuffer& buffer, Bytes& blob)
{
    const std::size_t at = blob.size(), guard = buffer.guard_bytes();
    blob.resize(at + 2 * guard);
    buffer.download_range(0, guard, blob.data() + at);
    buffer.download_range(guard + buffer.data_bytes(), guard, blob.data() + at + guard);
}

// Eight bytes of device memory that the GPU's checksums add up in.
class DeviceSum {
public:
    DeviceSum() { CUDA_CHECK(cudaMalloc(&sum_, sizeof *sum_)); }
    ~DeviceSum() { cudaFree(sum_); }
    DeviceSum(const DeviceSum&) = delete;
    DeviceSum& operator=(const DeviceSum&) = delete;
    unsigned long long* get() const { return sum_; }

private:
    unsigned long long* sum_ = nullptr;
};

// What the GPU's part of a case leaves for the host: the output with its guards, the input's guards
// and scratch's guards (one blob, as sent), and what the GPU's checksums found.
struct Readback {
    Bytes blob;
    std::size_t out_bytes = 0, in_guard_bytes = 0, scratch_guard_bytes = 0;
    std::uint64_t input_checksum = 0;  // of the input after the run (bits_checksum)
    long long input_first_changed = -1, input_changed_elements = 0;
    std::uint64_t repeat_checksum = 0;                 // of a second run's output
    std::optional<std::uint64_t> zero_start_checksum;  // of a run from zeros, where out[0] was left NaN
};

void read_back(const CaseBuffers& buffers, Readback& r)
{
    r.blob.resize(buffers.out->total_bytes());
    buffers.out->download_all(r.blob.data());
    r.out_bytes = r.blob.size();
    append_guards(*buffers.in, r.blob);
    r.in_guard_bytes = r.blob.size() - r.out_bytes;
    if (buffers.scratch) {
        append_guards(*buffers.scratch, r.blob);
        r.scratch_guard_bytes = r.blob.size() - r.out_bytes - r.in_guard_bytes;
    }
}

// The input's checksum after the run, taken on the GPU; only where it differs from the one taken
// before the launcher ran is the input copied back, to say where it changed.
void check_input(const CaseInputs& inputs, const CaseBuffers& buffers, std::uint64_t before, const DeviceSum& sum,
                 Readback& r)
{
    const bool f64 = !inputs.in_f64.empty();
    r.input_checksum = buffers.in->bits_checksum(f64, sum.get());
    if (r.input_checksum == before) return;
    std::vector<unsigned char> after(buffers.in->data_bytes());
    buffers.in->download_range(buffers.in->guard_bytes(), after.size(), after.data());
    const std::size_t element = f64 ? 8 : 4;
    const auto* original = static_cast<const unsigned char*>(inputs.input_data());
    for (std::size_t i = 0; i < after.size(); i += element) {
        if (std::memcmp(original + i, after.data() + i, element) != 0) {
            if (r.input_first_changed < 0) r.input_first_changed = static_cast<long long>(i / element);
            ++r.input_changed_elements;
        }
    }
}

// Runs the launcher once more on the same input, from a poisoned output and other leftovers in
// shared memory, and returns the checksum of what it wrote: a wrong output that changes between
// runs points to a race.
std::uint64_t repeat_checksum(const Exercise& exercise, const CaseBuffers& buffers, const DeviceSum& sum)
{
    const bool f64 = element_type(exercise) == ElementType::f64;
    buffers.out->fill(poison_of(element_type(exercise)).unwritten);
    scrub_shared_memory(0xffffffffu);  // NaN as floats and as doubles
    call_launcher(exercise.name, buffers.args);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    return buffers.out->bits_checksum(f64, sum.get());
}

// Whether out[0] still holds the unwritten pattern or is NaN after the run: what a kernel leaves
// that adds into `out` (atomicAdd, +=) instead of storing to it, the poison taking the place of
// the 0 it assumed. (out[0] alone: a look at one element costs nothing where the output is right.)
bool first_output_untouched_or_nan(const Readback& r, bool f64)
{
    const std::uint8_t* first = r.blob.data() + static_cast<std::size_t>(guard_elements) * (f64 ? 8 : 4);
    if (f64) {
        std::uint64_t bits;
        std::memcpy(&bits, first, sizeof bits);
        double value;
        std::memcpy(&value, first, sizeof value);
        return bits == unwritten_f64 || value != value;
    }
    std::uint32_t bits;
    std::memcpy(&bits, first, sizeof bits);
    float value;
    std::memcpy(&value, first, sizeof value);
    return bits == unwritten_f32 || value != value;
}

// Runs the launcher once more on the same input, from an output of zeros, and returns the checksum
// of the values it leaves (harness::checksum_term, as golden_checksum): a wrong output that is
// right from zeros comes from a kernel that adds into `out` without setting it first.
std::uint64_t zero_start_checksum(const Exercise& exercise, const CaseBuffers& buffers, const DeviceSum& sum)
{
    const bool f64 = element_type(exercise) == ElementType::f64;
    buffers.out->fill(0);
    call_launcher(exercise.name, buffers.args);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    return buffers.out->values_checksum(f64, sum.get());
}

nlohmann::json describe_output(const Case& c, const Readback& r)
{
    nlohmann::json meta = {
        {"case", c.index},
        {"segments",
         {{{"name", "out"}, {"bytes", r.out_bytes}},
          {{"name", "in_guards"}, {"bytes", r.in_guard_bytes}},
          {{"name", "scratch_guards"}, {"bytes", r.scratch_guard_bytes}}}},
        {"input_checksum", r.input_checksum},
        {"input_first_changed", r.input_first_changed},
        {"input_changed_elements", r.input_changed_elements},
        {"repeat_checksum", r.repeat_checksum},
    };
    if (r.zero_start_checksum) meta["zero_start_checksum"] = *r.zero_start_checksum;
    return meta;
}

// What the runner keeps between the commands of one case.
struct CurrentCase {
    std::optional<Case> c;
    CaseInputs inputs;
    CaseBuffers buffers;
};

// A speed case's timed batches: the timing server's allocation, mapped here, and the launcher's
// arguments but for the buffers, which each repetition takes from the layout.
struct TimedBatches {
    std::unique_ptr<MappedAllocation> memory;
    BatchLayout layout;
    PinnedFloats mask;
    LauncherArgs args;
};

// How long the grader may take to pass the allocation's descriptor after map_timing.
constexpr std::chrono::seconds descriptor_wait{30};

TimedBatches map_timing(const Exercise& exercise, const Message& command)
{
    TimedBatches timed;
    timed.layout = layout_from_json(command.meta.at("layout"));
    if (!fits(timed.layout)) throw std::invalid_argument("a timing layout out of range");
    const nlohmann::json& args = command.meta.at("args");
    timed.mask = pinned_copy(args.at("mask").get<std::vector<float>>());
    timed.args.mask = timed.mask.data.get();
    Case shaped;
    family_of(exercise).read_shape(args.at("shape"), shaped);
    set_shape(timed.args, shaped);
    const int descriptor = receive_descriptor(child_handles_fd, std::chrono::steady_clock::now() + descriptor_wait);
    if (descriptor < 0) throw std::runtime_error("no timing buffers arrived on the handles socket");
    timed.memory = std::make_unique<MappedAllocation>(descriptor, timed.layout.bytes);
    return timed;
}

__global__ void empty_kernel() {}

// The launcher once per repetition, in order, each call synchronized and checked (CONTRACT.md);
// without `launch`, an empty kernel in its place, synchronized the same way: the grader's measure
// of what a batch costs besides the launcher's work (on the reference, alone), the switches of the
// GPU between this process and the timing server's included. The batch's arguments are updated in
// place: a copy of their shape (std::any) could allocate inside the timed window.
void run_batch(const Exercise& exercise, TimedBatches& timed, bool launch)
{
    char* base = timed.memory->data();
    LauncherArgs& args = timed.args;
    args.scratch = timed.layout.scratch >= 0 ? base + timed.layout.scratch : nullptr;
    for (const auto& rep : timed.layout.reps) {
        args.in = base + rep.in;
        args.out = base + rep.out;
        if (launch)
            call_launcher(exercise.name, args);
        else
            empty_kernel<<<1, 1>>>();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

// load_case's work, and run_case's where no load_case came first: the case's input, made on the
// host from its seed (the case as the grader sent it, or by its index in the runner's own list). The previous case's buffers go first.
void load(const Exercise& exercise, const std::vector<Case>& cases, const Message& command, CurrentCase& current,
          std::string& phase, int& case_index)
{
    const int index = command.meta.at("case").get<int>();
    const auto spec = command.meta.find("spec");  // the grader's case (harness::case_spec)
    if (spec == command.meta.end() && (index < 0 || index >= static_cast<int>(cases.size())))
        throw std::invalid_argument("no such case");
    current = CurrentCase{};
    case_index = index;
    current.c = spec != command.meta.end() ? case_from_spec(exercise, *spec, index) : cases[static_cast<std::size_t>(index)];
    phase = "setup";
    current.inputs = make_inputs(exercise, *current.c);
}

// Answers one command; returns false after quit.
bool answer(ChannelWriter& channel, const Exercise& exercise, const std::vector<Case>& cases, const Message& command,
            CurrentCase& current, std::optional<TimedBatches>& timed, std::string& phase, int& case_index)
{
    const bool f64 = element_type(exercise) == ElementType::f64;
    switch (command.type) {
        case MessageType::load_case: {
            load(exercise, cases, command, current, phase, case_index);
            channel.send(MessageType::case_loaded, {{"case", case_index}});
            return true;
        }
        case MessageType::run_case: {
            if (!current.c || current.c->index != command.meta.at("case").get<int>())
                load(exercise, cases, command, current, phase, case_index);
            current.buffers = CaseBuffers{};  // a case run twice starts from fresh buffers
            phase = "setup";
            current.buffers = prepare(exercise, *current.c, current.inputs);
            const DeviceSum sum;
            const std::uint64_t input_before = current.buffers.in->bits_checksum(f64, sum.get());
            scrub_shared_memory(0);
            phase = "launch";
            call_launcher(exercise.name, current.buffers.args);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            phase = "readback";
            Readback readback;
            read_back(current.buffers, readback);
            check_input(current.inputs, current.buffers, input_before, sum, readback);
            phase = "repeat";
            readback.repeat_checksum = repeat_checksum(exercise, current.buffers, sum);
            if (first_output_untouched_or_nan(readback, f64)) {
                phase = "a run from an output of zeros";
                readback.zero_start_checksum = zero_start_checksum(exercise, current.buffers, sum);
            }
            // The buffers go back to the GPU now, so that a runner sending its output or waiting for its
            // next case holds no more than its context while other exercises' runners (and other
            // gradings') need the memory; timed batches run in the timing server's memory.
            current.buffers = CaseBuffers{};
            channel.send(MessageType::case_ran, {{"case", case_index}});
            channel.send(MessageType::case_output, describe_output(*current.c, readback), readback.blob.data(),
                         readback.blob.size());
            current = CurrentCase{};
            return true;
        }
        case MessageType::map_timing:
            phase = "timing";
            timed.reset();
            timed = map_timing(exercise, command);
            channel.send(MessageType::timing_mapped, nlohmann::json::object());
            return true;
        case MessageType::run_batch:
            if (!timed) throw std::logic_error("run_batch before map_timing");
            phase = "timing";
            run_batch(exercise, *timed, command.meta.at("launch").get<bool>());
            channel.send(MessageType::batch_ran, nlohmann::json::object());
            return true;
        case MessageType::unmap_timing:
            timed.reset();
            channel.send(MessageType::timing_unmapped, nlohmann::json::object());
            return true;
        case MessageType::quit:
            timed.reset();
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
        // Waits for the GPU spin rather than sleep: a timed batch synchronizes after every launcher call,
        // and the microseconds a sleeping thread takes to wake would be timed with it.
        CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
        CUDA_CHECK(cudaFree(nullptr));  // create the context now: a broken GPU shows before any case
        channel.send(MessageType::hello,
                     {{"exercise", exercise->name}, {"launcher_found", launcher_found(exercise->name)}});
        CurrentCase current;
        std::optional<TimedBatches> timed;
        for (;;) {
            Message command;
            const auto got = commands.receive(command, std::chrono::steady_clock::time_point::max());
            if (got != ChannelReader::Result::message) return got == ChannelReader::Result::end_of_stream ? 0 : 2;
            if (!answer(channel, *exercise, cases, command, current, timed, phase, case_index)) return 0;
            // The next command is waited for spinning only while a speed case's batches are mapped:
            // a run_batch is then answered without waking up. Between other commands (the grader
            // checks a case's output before it sends the next one) a spin of batch_spin after every
            // case cost a core's full time, a few seconds a grading (issue 21).
            commands.spin_while_waiting(timed ? batch_spin : std::chrono::microseconds{0});
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
    bool timing_server = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--timing-server") == 0) timing_server = true;
        if (std::strcmp(argv[i], "--exercise") == 0 && i + 1 < argc) exercise = argv[++i];
    }
    // The grader opens both pipes and the handles socket at fixed numbers before it starts the runner.
    if (fcntl(harness::child_channel_fd, F_GETFD) < 0 || fcntl(harness::child_command_fd, F_GETFD) < 0 ||
        fcntl(harness::child_handles_fd, F_GETFD) < 0) {
        std::fprintf(stderr, "runner: no grader pipes on fds %d to %d; this program is started by `grade`\n",
                     harness::child_command_fd, harness::child_handles_fd);
        return 2;
    }
    // Programs the runner might start do not inherit them.
    fcntl(harness::child_channel_fd, F_SETFD, FD_CLOEXEC);
    fcntl(harness::child_command_fd, F_SETFD, FD_CLOEXEC);
    fcntl(harness::child_handles_fd, F_SETFD, FD_CLOEXEC);
    if (timing_server) return harness::runner::timing_server_main();
    harness::ChannelWriter channel(harness::child_channel_fd);
    harness::ChannelReader commands(harness::child_command_fd);
    return harness::runner::run(channel, commands, exercise);
}

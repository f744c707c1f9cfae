// A stand-in for an exercise runner that needs no GPU: it answers the grader's commands like the
// real runner (harness/runner/runner_main.cu) and computes its "output" on the CPU, or misbehaves
// on purpose. With the fake toolchain it lets the tests drive the real `grade` end to end on a
// machine without a GPU (CI).
//
//   fake_runner --exercise NAME      a worker (the behaviour comes from fake_behaviour(): see fake_nvcc.sh)
//   fake_runner --timing-server      the grader's timing server (harness/runner/timing_server.hpp)
//
// Timed batches: the server's "device memory" is a memfd (sparse), which it maps and passes on the
// handles socket; a worker maps the same file. Only a prefix of each buffer is ever touched, the
// first `timed_prefix` elements (at 2^26 elements a whole buffer would take the CPU seconds a
// batch): the server writes each repetition's input prefix from the seed (harness/timed_data.hpp)
// and checksums each output prefix; a worker's "kernel" sleeps 5 ms a repetition and writes the
// output prefix as a stand-in function of the input prefix (stand_in_output: out[i] = 2 in[i] + 1,
// or for an output of one element the sum of the input prefix). The grader accepts a batch whose
// checksums equal the reference's on the same seed (in these tests fake_runner too); any other goes
// to the golden check on the CPU, which no stand-in passes: so the fake is correct only beside a
// reference, which every test that times it has.
//
// Behaviours of cases:
//   correct | exclusive_scan | unwritten | racy (wrong, and a second run gives another output) |
//   hang_at:K | crash_at:K | exits_clean_at:K (exit code 0 in case K, unanswered) | cuda_error_at:K |
//   out_of_memory_at:K (cudaErrorMemoryAllocation at case K, as when another runner took the memory) |
//   fake_score (prints a fake score on stdout, writes nothing) | no_launcher | garbage_meta |
//   escape (forks a grandchild named grader_escapee that calls setsid and sleeps forever) | slow_start (sleeps 3 s
//   before its hello) | exits_at_start (exit code 1 before its hello, as a static initializer or a sandbox that cannot
//   fork would) | slow_host (says on stderr when a case is loaded, has run and is sent, and spends 8 s between the last
//   two, as the host's checks of a large case do) | hostile_text (prints bytes that are not UTF-8 and terminal control
//   sequences on stdout and stderr before its hello, and answers every run_case with a cuda_error whose strings hold
//   such sequences) | deep_json (answers every run_case with case_ran, then a cuda_error frame written by hand whose
//   meta nests 500,000 arrays, under the meta's 1 MiB)
// Behaviours of timed batches (all others run them like `correct`):
//   too_fast (correct outputs without sleeping) | slow_kernel (correct, 50 ms a repetition) |
//   cached_replay (every batch after the first of a mapping writes the first one's outputs, wrong
//   for the new inputs) | skips_most (four batches in five write nothing and answer at once; the
//   fifth is correct) | forged_timing (sends a second, unasked batch_ran after each one) |
//   disturbed_once (its first 3 batches take 200 ms a repetition, as if something else had held the
//   machine; later ones are honest) | early_answer (answers batch_ran at once and writes the
//   correct outputs from a detached thread 300 ms later, after the server's checksum) |
//   slower_from_map:K (from its K-th map_timing on, 20 ms a repetition: a reference slower beside
//   the submission than alone before it)
// Behaviour of the whole process (a probe of what a runner can learn, tests/adversarial/*/hidden_secret):
//   spy (prints, before its hello, its argv, its environment, /proc/self, /proc/1 and its parent's
//   cmdline and environ, every /proc/<pid>/environ it can read and the small files of its working
//   directory, /tmp and / (and one level below); then, at each case, the case's label, size, seed and first input
//   values; the timing server of a spy copy prints the same when it starts; otherwise correct)
#include <cxxabi.h>
#include <filesystem>
#include <fstream>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "fake_behaviour.hpp"
#include "harness/batch_layout.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "harness/timed_data.hpp"

using namespace harness;

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

template <typename T>
void append(Bytes& blob, T value, std::int64_t count)
{
    const std::size_t at = blob.size();
    blob.resize(at + sizeof(T) * static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
        std::memcpy(blob.data() + at + sizeof(T) * static_cast<std::size_t>(i), &value, sizeof(T));
}

// Sends the case's output, with its guard zones, as the real runner's case_output: the golden
// result of the case's inputs (made once, by load_case or run_case), in the exercise's element type.
void send_output(ChannelWriter& channel, const Exercise& e, const Case& c, const CaseInputs& inputs,
                 const std::string& behaviour)
{
    const Expected expected = golden(e, c, inputs);
    const bool f64 = element_type(e) == ElementType::f64;
    const Poison poison = poison_of(element_type(e));
    const bool unwritten = behaviour == "unwritten" || behaviour == "fake_score";
    const bool exclusive = behaviour == "exclusive_scan" || behaviour == "racy";
    const std::size_t n_out = expected.value.size();
    const std::size_t element = f64 ? 8 : 4;
    const std::size_t guard_bytes = element * static_cast<std::size_t>(guard_elements);
    Bytes blob;
    blob.reserve(n_out * element + 6 * guard_bytes);
    with_element_type(element_type(e), [&](auto zero) {
        using Value = decltype(zero);
        using Bits = bits_of<Value>;
        append(blob, static_cast<Bits>(poison.unwritten), guard_elements);
        const std::size_t out_at = blob.size();
        blob.resize(out_at + n_out * sizeof(Value));
        const auto& in = inputs.values<Value>();
        parallel_for(0, static_cast<std::int64_t>(n_out), element_grain, [&](std::int64_t begin, std::int64_t end) {
            for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
                const double golden_value = exclusive ? expected.value[i] - static_cast<double>(in[i]) : expected.value[i];
                const Value v = static_cast<Value>(golden_value);
                Bits bits = static_cast<Bits>(poison.unwritten);
                if (!unwritten) std::memcpy(&bits, &v, sizeof bits);
                std::memcpy(blob.data() + out_at + i * sizeof bits, &bits, sizeof bits);
            }
        });
        append(blob, static_cast<Bits>(poison.unwritten), guard_elements);
        append(blob, static_cast<Bits>(poison.input_guard), 2 * guard_elements);
        if (uses_scratch(e)) append(blob, static_cast<Bits>(poison.scratch), 2 * guard_elements);
    });
    const std::size_t out_bytes = n_out * element + 2 * guard_bytes;
    const std::size_t in_guard_bytes = 2 * guard_bytes;
    const std::size_t scratch_bytes = blob.size() - out_bytes - in_guard_bytes;
    const std::uint64_t out_checksum = bits_checksum(blob.data() + guard_bytes, n_out, f64);
    channel.send(
        MessageType::case_output,
        {{"case", c.index},
         {"segments",
          {{{"name", "out"}, {"bytes", out_bytes}},
           {{"name", "in_guards"}, {"bytes", in_guard_bytes}},
           {{"name", "scratch_guards"}, {"bytes", scratch_bytes}}}},
         {"input_checksum", bits_checksum(inputs.input_data(), inputs.input_bytes() / element, f64)},
         {"input_first_changed", -1},
         {"input_changed_elements", 0},
         {"repeat_checksum", behaviour == "racy" ? out_checksum ^ 1 : out_checksum}},
        blob.data(), blob.size());
}

// The message a runner sends when a CUDA call of the case failed, before it exits.
void send_cuda_error(ChannelWriter& channel, int index, const std::string& phase, const std::string& error,
                     const std::string& description)
{
    channel.send(MessageType::cuda_error,
                 {{"case", index}, {"phase", phase}, {"error", error}, {"message", error + " (" + description + ")"}});
}

// What hostile_text prints: a byte that is not UTF-8, a screen clear, a window title (OSC), an 8-bit
// CSI (U+009B), a reset (ESC c) and a carriage return that would overwrite the line.
constexpr const char* hostile_bytes =
    "fake_runner: \xff\xfe not UTF-8 \x1b[2J\x1b]0;owned\x07 \xc2\x9b"
    "31m8-bit\x1b"
    "c reset\r overwritten\n";

// deep_json: a cuda_error frame whose meta is 500,000 arrays deep (its header spelled out, as a
// submission writing to the channel's descriptor would).
void send_deep_json(int index)
{
    const std::string meta = R"({"case":)" + std::to_string(index) + R"(,"phase":"launch","error":"x","deep":)" +
                             std::string(500'000, '[') + std::string(500'000, ']') + "}";
    struct {
        std::uint32_t magic, type;
        std::uint64_t meta_bytes, blob_bytes;
    } header{0x47524452, static_cast<std::uint32_t>(MessageType::cuda_error), meta.size(), 0};
    std::string frame(reinterpret_cast<const char*>(&header), sizeof header);
    frame += meta;
    for (std::size_t done = 0; done < frame.size();) {
        const ssize_t n = ::write(child_channel_fd, frame.data() + done, frame.size() - done);
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

// What a file holds, NULs as spaces, at most 64 KiB; empty when it cannot be read.
std::string file_text(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    std::string text;
    char c;
    while (text.size() < 65536 && file.get(c)) text.push_back(c == '\0' ? ' ' : c);
    return text;
}

// spy: everything this process can find that might hold a secret of the grader's, on stdout.
void spy_on_everything(int argc, char** argv)
{
    std::cout << "spy: argv:";
    for (int i = 0; i < argc; ++i) std::cout << " " << argv[i];
    std::cout << "\nspy: environ:";
    for (char** entry = environ; entry && *entry; ++entry) std::cout << " " << *entry;
    std::cout << "\n";
    const std::string parent = std::to_string(::getppid());
    for (const std::string pid : {std::string("self"), std::string("1"), parent})
        for (const char* what : {"cmdline", "environ"})
            std::cout << "spy: /proc/" << pid << "/" << what << ": " << file_text("/proc/" + pid + "/" + what) << "\n";
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string environ_text = file_text(it->path().string() + "/environ");
        if (!environ_text.empty()) std::cout << "spy: /proc/" << name << "/environ: " << environ_text << "\n";
    }
    for (const char* dir : {".", "/tmp", "/"})
        for (std::filesystem::recursive_directory_iterator it(dir, std::filesystem::directory_options::skip_permission_denied, ec), end;
             !ec && it != end; it.increment(ec)) {
            if (it.depth() >= 1) it.disable_recursion_pending();
            if (it->path().string().rfind("/proc", 0) == 0 || it->path().string().rfind("/sys", 0) == 0) {
                it.disable_recursion_pending();
                continue;
            }
            std::error_code size_ec;
            if (it->is_regular_file(size_ec) && it->file_size(size_ec) < 4096 && !size_ec)
                std::cout << "spy: file " << it->path().string() << ": " << file_text(it->path().string()) << "\n";
        }
    std::cout << std::flush;
}

// spy: the case the grader sent, as a submission that prints its inputs would print it.
void spy_on_case(const Exercise& e, const Case& c, const CaseInputs& inputs)
{
    std::cout << "spy: case " << c.label << " n=" << c.n << " seed=" << hex64(c.seed) << " first inputs:";
    const std::size_t count = inputs.in_f64.empty() ? inputs.in_f32.size() : inputs.in_f64.size();
    for (std::size_t i = 0; i < count && i < 4; ++i)
        std::cout << " " << (inputs.in_f64.empty() ? double(inputs.in_f32[i]) : inputs.in_f64[i]);
    std::cout << " (" << e.name << ")" << std::endl;
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

// ---------------------------------------------------------------------------------------------
// Timed batches: the shared "device memory" and what is written in it
// ---------------------------------------------------------------------------------------------

// How many elements of each buffer a timed batch touches, from its start.
constexpr std::int64_t timed_prefix = 4096;

std::int64_t prefix_of(std::int64_t elements)
{
    return std::min(elements, timed_prefix);
}

// The fake's "device memory" holds only those prefixes, one slot each (input, output, by
// repetition), not the layout's gigabytes: a file as large as the layout would pass the file-size
// limit a grader under test may run with. The layout the grader sees is the real one.
constexpr std::uint64_t slot_bytes = timed_prefix * 8;
std::uint64_t fake_bytes(const BatchLayout& layout)
{
    return 2 * layout.reps.size() * slot_bytes;
}
std::uint64_t input_at(std::size_t rep)
{
    return 2 * rep * slot_bytes;
}
std::uint64_t output_at(std::size_t rep)
{
    return (2 * rep + 1) * slot_bytes;
}

// Closes a descriptor when it goes out of scope.
struct Descriptor {
    int fd = -1;
    ~Descriptor()
    {
        if (fd >= 0) ::close(fd);
    }
};

// The whole of a descriptor's file mapped MAP_SHARED, unmapped when the last owner lets go (a
// worker's early_answer thread may outlive unmap_timing).
class SharedMapping {
public:
    SharedMapping(int fd, std::uint64_t bytes) : bytes_(bytes)
    {
        struct stat file {};
        if (::fstat(fd, &file) != 0 || static_cast<std::uint64_t>(file.st_size) < bytes)
            throw std::runtime_error("the timing buffers' file is smaller than their layout");
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            throw std::runtime_error(std::string("mmap of the timing buffers: ") + std::strerror(errno));
        data_ = static_cast<char*>(p);
    }
    ~SharedMapping() { ::munmap(data_, bytes_); }
    SharedMapping(const SharedMapping&) = delete;
    SharedMapping& operator=(const SharedMapping&) = delete;
    char* data() const { return data_; }

private:
    char* data_ = nullptr;
    std::uint64_t bytes_ = 0;
};

// Element i of a buffer of floats or doubles (memcpy: a layout read back need not be aligned).
double element(const char* buffer, std::int64_t i, bool f64)
{
    if (f64) {
        double v;
        std::memcpy(&v, buffer + 8 * i, sizeof v);
        return v;
    }
    float v;
    std::memcpy(&v, buffer + 4 * i, sizeof v);
    return v;
}

void set_element(char* buffer, std::int64_t i, double value, bool f64)
{
    if (f64) {
        std::memcpy(buffer + 8 * i, &value, sizeof value);
    } else {
        const auto v = static_cast<float>(value);
        std::memcpy(buffer + 4 * i, &v, sizeof v);
    }
}

// ---------------------------------------------------------------------------------------------
// The timing server
// ---------------------------------------------------------------------------------------------

// One side's batches: its memory, and when its clock started.
struct TimingSet {
    BatchLayout layout;
    std::unique_ptr<SharedMapping> memory;
    Clock::time_point started{};
    bool generated = false;
};

using TimingSets = std::map<std::string, TimingSet>;

TimingSet& set_of(TimingSets& sets, const Message& command)
{
    const auto found = sets.find(command.meta.at("set").get<std::string>());
    if (found == sets.end()) throw std::logic_error("no such set of timing buffers");
    return found->second;
}

nlohmann::json calibration()
{
    // A "device" whose copy bandwidth is 100 GB/s, with a 48 MiB L2. Its 80 GiB make thirteen
    // exercise places (grader.cpp), more than there are exercises.
    return {{"device", "fake device (CPU)"},
            {"cc", "0.0"},
            {"copy_gb_s", 100.0},
            {"memory_bytes", 80LL << 30},
            {"l2_bytes", 50331648}};
}

// A memfd of the prefixes' slots, mapped here and passed on the handles socket after
// timing_allocated.
void allocate(ChannelWriter& channel, TimingSets& sets, const std::string& name, const BatchShape& shape)
{
    sets.erase(name);
    if (shape.reps < 1 || shape.reps > 64) throw std::invalid_argument("a batch shape out of range");  // as fits()
    TimingSet set;
    set.layout = lay_out(shape, 4096);
    if (!fits(set.layout)) throw std::invalid_argument("a batch shape out of range");
    const Descriptor memory{::memfd_create("fake timing buffers", MFD_CLOEXEC)};
    if (memory.fd < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
    if (::ftruncate(memory.fd, static_cast<off_t>(fake_bytes(set.layout))) != 0)
        throw std::runtime_error(std::string("ftruncate of the timing buffers: ") + std::strerror(errno));
    set.memory = std::make_unique<SharedMapping>(memory.fd, fake_bytes(set.layout));
    channel.send(MessageType::timing_allocated, {{"layout", to_json(set.layout)}});
    send_descriptor(child_handles_fd, memory.fd);
    sets[name] = std::move(set);
}

// The clock starts; each repetition's input prefix written from the seed.
void generate(TimingSet& set, std::uint64_t seed, TimedValues values)
{
    set.started = Clock::now();
    const BatchShape& shape = set.layout.shape;
    for (std::size_t k = 0; k < set.layout.reps.size(); ++k) {
        char* input = set.memory->data() + input_at(k);
        for (std::int64_t i = 0; i < prefix_of(shape.elements); ++i)
            set_element(input, i,
                        timed_value(seed, static_cast<std::uint32_t>(k), static_cast<std::uint64_t>(i), values),
                        shape.f64);
    }
    set.generated = true;
}

TimedValues values_of(const nlohmann::json& values)
{
    const TimedValues v{values.at("lo").get<int>(), values.at("hi").get<int>()};
    if (v.lo > v.hi || static_cast<std::int64_t>(v.hi) - v.lo >= (std::int64_t{1} << 31))
        throw std::invalid_argument("timed values out of range");
    return v;
}

// Each repetition's output prefix checksummed; the clock stops.
nlohmann::json checksum(TimingSet& set)
{
    if (!set.generated) throw std::logic_error("checksum before generate");
    set.generated = false;
    const BatchShape& shape = set.layout.shape;
    const auto count = static_cast<std::uint64_t>(prefix_of(shape.out_elements));
    nlohmann::json checksums = nlohmann::json::array();
    for (std::size_t k = 0; k < set.layout.reps.size(); ++k) {
        const char* out = set.memory->data() + output_at(k);
        checksums.push_back(hex64(shape.f64 ? output_checksum(reinterpret_cast<const double*>(out), count)
                                            : output_checksum(reinterpret_cast<const float*>(out), count)));
    }
    const double window_ms = std::chrono::duration<double, std::milli>(Clock::now() - set.started).count();
    return {{"checksums", checksums}, {"window_ms", window_ms}, {"gpu_ms", {{"generate", 0.0}, {"checksum", 0.0}}}};
}

// Answers one command; false after quit.
bool serve(ChannelWriter& channel, TimingSets& sets, const Message& command)
{
    const nlohmann::json none = nlohmann::json::object();
    switch (command.type) {
        case MessageType::calibrate:
            // FAKE_CALIBRATION_FAILS_ONCE=PATH (the grader's environment, which its timing server
            // inherits): the first calibration, while PATH does not exist, creates it and fails as
            // the real server's does where another grading's runner holds the GPU's memory.
            if (const char* marker = std::getenv("FAKE_CALIBRATION_FAILS_ONCE"); marker && *marker &&
                                                                                  !std::filesystem::exists(marker)) {
                std::ofstream(marker) << "failed once\n";
                channel.send(MessageType::cuda_error, {{"case", -1},
                                                       {"phase", "calibration"},
                                                       {"error", "cudaErrorMemoryAllocation"},
                                                       {"message", "out of memory"}});
                return false;
            }
            channel.send(MessageType::calibration, calibration());
            return true;
        case MessageType::allocate_timing:
            allocate(channel, sets, command.meta.at("set").get<std::string>(),
                     shape_from_json(command.meta.at("shape")));
            return true;
        case MessageType::generate:
            generate(set_of(sets, command), std::stoull(command.meta.at("seed").get<std::string>(), nullptr, 16),
                     values_of(command.meta.at("values")));
            channel.send(MessageType::generated, none);
            return true;
        case MessageType::checksum:
            channel.send(MessageType::checksummed, checksum(set_of(sets, command)));
            return true;
        case MessageType::free_timing:
            sets.erase(command.meta.at("set").get<std::string>());
            channel.send(MessageType::timing_freed, none);
            return true;
        case MessageType::quit:
            sets.clear();
            channel.send(MessageType::done, none);
            return false;
        default:
            throw std::logic_error("not a timing server's command");
    }
}

// "std::bad_alloc", "std::invalid_argument": the dynamic type of an exception, readable.
std::string type_name(const std::exception& error)
{
    int status = 0;
    const char* mangled = typeid(error).name();
    std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
    return status == 0 && readable ? readable.get() : mangled;
}

// Reports an exception as the real runner does; a grader that has gone hears nothing.
int report(ChannelWriter& channel, int case_index, const std::string& phase, const std::exception& error)
{
    try {
        channel.send(MessageType::exception,
                     {{"case", case_index}, {"phase", phase}, {"type", type_name(error)}, {"message", error.what()}});
    } catch (const std::exception&) {
    }
    return 4;
}

int timing_server_main()
{
    ChannelWriter channel(child_channel_fd);
    ChannelReader commands(child_command_fd);
    TimingSets sets;
    try {
        for (;;) {
            Message command;
            const auto got = commands.receive(command, Clock::time_point::max());
            if (got != ChannelReader::Result::message) return got == ChannelReader::Result::end_of_stream ? 0 : 2;
            if (!serve(channel, sets, command)) return 0;
        }
    } catch (const std::exception& error) {
        return report(channel, -1, "timing server", error);
    }
}

// ---------------------------------------------------------------------------------------------
// A worker's timed batches
// ---------------------------------------------------------------------------------------------

// The output prefix of every repetition of a batch.
using BatchOutputs = std::vector<std::vector<double>>;

// The timing server's buffers, mapped, and the outputs of the mapping's first batch (cached_replay).
struct TimedBatches {
    BatchLayout layout;
    std::shared_ptr<SharedMapping> memory;
    std::optional<BatchOutputs> first_outputs;
};

// What every correct fake writes for one repetition, from its input prefix: out[i] = 2 in[i] + 1,
// or, for an output of one element (a reduction), the sum of the input prefix.
std::vector<double> stand_in_output(const BatchLayout& layout, const char* base, std::size_t rep)
{
    const BatchShape& shape = layout.shape;
    const char* in = base + input_at(rep);
    const std::int64_t in_count = prefix_of(shape.elements);
    std::vector<double> out(static_cast<std::size_t>(prefix_of(shape.out_elements)), 0.0);
    if (shape.out_elements == 1) {
        for (std::int64_t i = 0; i < in_count; ++i) out[0] += element(in, i, shape.f64);
    } else {
        for (std::int64_t i = 0; i < std::min<std::int64_t>(in_count, static_cast<std::int64_t>(out.size())); ++i)
            out[static_cast<std::size_t>(i)] = 2 * element(in, i, shape.f64) + 1;
    }
    return out;
}

BatchOutputs stand_in_outputs(const BatchLayout& layout, const char* base)
{
    BatchOutputs outputs;
    for (std::size_t k = 0; k < layout.reps.size(); ++k) outputs.push_back(stand_in_output(layout, base, k));
    return outputs;
}

void write_output(const BatchLayout& layout, char* base, std::size_t rep, const std::vector<double>& values)
{
    char* out = base + output_at(rep);
    for (std::size_t i = 0; i < values.size(); ++i)
        set_element(out, static_cast<std::int64_t>(i), values[i], layout.shape.f64);
}

// The fake launcher's arguments: its kernel does not need them, but a map_timing without them is
// the grader's bug, which the real runner would throw on too.
void check_launcher_args(const Exercise& exercise, const nlohmann::json& args)
{
    Case shaped;
    family_of(exercise).read_shape(args.at("shape"), shaped);
    args.at("mask").get<std::vector<float>>();
}

// How long the grader may take to pass the allocation's descriptor after map_timing.
constexpr std::chrono::seconds descriptor_wait{30};

TimedBatches map_timing(const Exercise& exercise, const Message& command)
{
    TimedBatches timed;
    timed.layout = layout_from_json(command.meta.at("layout"));
    if (!fits(timed.layout)) throw std::invalid_argument("a timing layout out of range");
    check_launcher_args(exercise, command.meta.at("args"));
    const Descriptor memory{receive_descriptor(child_handles_fd, Clock::now() + descriptor_wait)};
    if (memory.fd < 0) throw std::runtime_error("no timing buffers arrived on the handles socket");
    timed.memory = std::make_shared<SharedMapping>(memory.fd, fake_bytes(timed.layout));
    return timed;
}

// The fake kernel's time for one repetition of the `batch`th launched batch (from 1), in the
// `map`th mapping (from 1).
std::chrono::milliseconds kernel_time(const std::string& behaviour, int batch, int map)
{
    if (const int from = at(behaviour, "slower_from_map:"); from > 0 && map >= from) return std::chrono::milliseconds(20);
    if (behaviour == "too_fast") return std::chrono::milliseconds(0);
    if (behaviour == "slow_kernel") return std::chrono::milliseconds(50);
    if (behaviour == "disturbed_once" && batch <= 3) return std::chrono::milliseconds(200);
    return std::chrono::milliseconds(5);
}

// early_answer: the batch's correct outputs, written 300 ms after batch_ran.
void write_late(const TimedBatches& timed)
{
    std::thread([layout = timed.layout, memory = timed.memory,
                 outputs = stand_in_outputs(timed.layout, timed.memory->data())] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        for (std::size_t k = 0; k < outputs.size(); ++k) write_output(layout, memory->data(), k, outputs[k]);
    }).detach();
}

// The launcher on each repetition, in order, as `behaviour` runs it.
void run_batch(TimedBatches& timed, const std::string& behaviour, int batch, int map)
{
    if (behaviour == "early_answer") return write_late(timed);
    if (behaviour == "skips_most" && batch % 5 != 0) return;
    char* base = timed.memory->data();
    const bool replay = behaviour == "cached_replay" && timed.first_outputs.has_value();
    BatchOutputs written;
    for (std::size_t k = 0; k < timed.layout.reps.size(); ++k) {
        std::this_thread::sleep_for(kernel_time(behaviour, batch, map));
        written.push_back(replay ? (*timed.first_outputs)[k] : stand_in_output(timed.layout, base, k));
        write_output(timed.layout, base, k, written.back());
    }
    if (behaviour == "cached_replay" && !replay) timed.first_outputs = std::move(written);
}

// ---------------------------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------------------------

struct Worker {
    explicit Worker(const Exercise& e) : exercise(e), cases(cases_for(e)), behaviour(fake_behaviour()) {}
    const Exercise& exercise;
    std::vector<Case> cases;
    std::string behaviour;
    ChannelWriter channel{child_channel_fd};
    std::optional<Case> current;
    CaseInputs inputs;
    int loaded = -1;  // the case whose input load_case made
    std::optional<TimedBatches> timed;
    int launched_batches = 0;
    int maps = 0;
    std::string phase = "startup";  // and case_index: what an exception is reported with
    int case_index = -1;
};

// The case as the grader sent it (harness::case_spec), or by its index in the runner's own list.
Case case_of(Worker& w, const Message& command)
{
    const int index = command.meta.at("case").get<int>();
    const auto spec = command.meta.find("spec");
    if (spec == command.meta.end() && (index < 0 || index >= static_cast<int>(w.cases.size())))
        throw std::invalid_argument("no such case");
    w.case_index = index;
    return spec != command.meta.end() ? case_from_spec(w.exercise, *spec, index) : w.cases[static_cast<std::size_t>(index)];
}

void load_case(Worker& w, const Message& command)
{
    w.phase = "setup";
    w.current = case_of(w, command);
    w.inputs = make_inputs(w.exercise, *w.current);
    w.loaded = w.current->index;
    if (w.behaviour == "slow_host") std::cerr << "fake_runner: case " << w.loaded << " loaded" << std::endl;
    w.channel.send(MessageType::case_loaded, {{"case", w.loaded}});
}

// Runs a case; returns the exit code where the runner ends with it.
std::optional<int> run_case(Worker& w, const Message& command)
{
    w.phase = "launch";
    w.current = case_of(w, command);
    const int index = w.current->index;
    const std::string& behaviour = w.behaviour;
    if (behaviour == "escape" && index == 0) escape();
    if (index == at(behaviour, "hang_at:"))
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (index == at(behaviour, "crash_at:")) std::raise(SIGSEGV);
    if (index == at(behaviour, "exits_clean_at:")) std::_Exit(0);  // ends with 0 in the middle of a case
    if (index == at(behaviour, "cuda_error_at:")) {
        send_cuda_error(w.channel, index, "launch", "cudaErrorIllegalAddress",
                        "an illegal memory access was encountered");
        return 3;
    }
    if (behaviour == "hostile_text") {
        w.channel.send(MessageType::cuda_error, {{"case", index},
                                                 {"phase", "launch\x1b[2J"},
                                                 {"error", "cudaErrorIllegalAddress\x1b]0;owned\x07"},
                                                 {"message",
                                                  "\xff not UTF-8, \x1b[31mred\x1b[0m, \xc2\x9b"
                                                  "2J 8-bit CSI,\r overwritten"}});
        return 3;
    }
    if (behaviour == "deep_json") {
        w.channel.send(MessageType::case_ran, {{"case", index}});
        send_deep_json(index);
        return 3;
    }
    if (index == at(behaviour, "out_of_memory_at:")) {
        send_cuda_error(w.channel, index, "timing", "cudaErrorMemoryAllocation", "out of memory");
        return 3;
    }
    if (w.loaded != index) w.inputs = make_inputs(w.exercise, *w.current);
    w.loaded = -1;
    if (behaviour == "spy") spy_on_case(w.exercise, *w.current, w.inputs);
    w.channel.send(MessageType::case_ran, {{"case", index}});
    if (behaviour == "slow_host") {  // the host's checks of a large case, after its GPU work
        std::cerr << "fake_runner: case " << index << " ran" << std::endl;
        std::this_thread::sleep_for(std::chrono::seconds(8));
    }
    w.phase = "readback";
    if (behaviour == "garbage_meta" && index == 2) {
        w.channel.send(MessageType::case_output, {{"case", "two"}});
        return std::nullopt;
    }
    send_output(w.channel, w.exercise, *w.current, w.inputs, behaviour);
    if (behaviour == "slow_host") std::cerr << "fake_runner: case " << index << " sent" << std::endl;
    return std::nullopt;
}

// Answers one command; returns the exit code once the runner is done.
std::optional<int> answer(Worker& w, const Message& command)
{
    const nlohmann::json none = nlohmann::json::object();
    switch (command.type) {
        case MessageType::load_case:
            load_case(w, command);
            return std::nullopt;
        case MessageType::run_case:
            return run_case(w, command);
        case MessageType::map_timing:
            w.phase = "timing";
            w.timed.reset();
            w.timed = map_timing(w.exercise, command);
            ++w.maps;
            w.channel.send(MessageType::timing_mapped, none);
            return std::nullopt;
        case MessageType::run_batch:
            if (!w.timed) throw std::logic_error("run_batch before map_timing");
            w.phase = "timing";
            if (command.meta.at("launch").get<bool>()) run_batch(*w.timed, w.behaviour, ++w.launched_batches, w.maps);
            w.channel.send(MessageType::batch_ran, none);
            if (w.behaviour == "forged_timing") w.channel.send(MessageType::batch_ran, none);
            return std::nullopt;
        case MessageType::unmap_timing:
            w.timed.reset();
            w.channel.send(MessageType::timing_unmapped, none);
            return std::nullopt;
        case MessageType::quit:
            w.timed.reset();
            w.channel.send(MessageType::done, none);
            return 0;
        default:
            throw std::logic_error("not a command");
    }
}

int worker_main(const Exercise& exercise)
{
    Worker w(exercise);
    ChannelReader commands(child_command_fd);
    if (w.behaviour == "slow_start") std::this_thread::sleep_for(std::chrono::seconds(3));
    if (w.behaviour == "exits_at_start") return 1;
    if (w.behaviour == "hostile_text") {
        std::cout << hostile_bytes << std::flush;
        std::cerr << hostile_bytes << std::flush;
    }
    try {
        w.channel.send(MessageType::hello,
                       {{"exercise", exercise.name}, {"launcher_found", w.behaviour != "no_launcher"}});
        if (w.behaviour == "fake_score")
            std::cout << R"({"exercise": ")" << exercise.name << R"(", "status": "pass", "points": 10})"
                      << "\nALL TESTS PASSED" << std::endl;
        for (;;) {
            Message command;
            const auto got = commands.receive(command, Clock::time_point::max());
            if (got != ChannelReader::Result::message) return got == ChannelReader::Result::end_of_stream ? 0 : 2;
            if (const auto code = answer(w, command)) return *code;
        }
    } catch (const std::exception& error) {
        return report(w.channel, w.case_index, w.phase, error);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (fake_behaviour() == "spy") spy_on_everything(argc, argv);
    std::string exercise_name;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--timing-server") return timing_server_main();
        if (std::string(argv[i]) == "--exercise" && i + 1 < argc) exercise_name = argv[++i];
    }
    const Exercise* exercise = find_exercise(exercise_name);
    if (!exercise) return 2;
    return worker_main(*exercise);
}

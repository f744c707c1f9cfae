#include "bench.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include <nlohmann/json.hpp>

#include "calibration.hpp"
#include "convolution/convolution.hpp"
#include "guarded_buffer.hpp"
#include "harness/cases.hpp"
#include "harness/cuda_check.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "launchers.hpp"

namespace harness::runner {
namespace {

using nlohmann::json;

constexpr int warmup_calls = 3;
constexpr int default_reps = 30;
// The launchers take int sizes; scan_hierarchical promises any n up to 2^30.
constexpr std::int64_t max_size = std::int64_t{1} << 30;

struct Settings {
    std::vector<std::int64_t> sizes = {10'000'000, std::int64_t{1} << 26};
    std::vector<const Exercise*> exercises;  // in the registry's (teaching) order
    int reps = default_reps;
};

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::vector<std::string> split_list(const std::string& list)
{
    std::vector<std::string> items;
    std::size_t start = 0;
    for (std::size_t comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1)
        items.push_back(list.substr(start, comma - start));
    items.push_back(list.substr(start));
    return items;
}

std::int64_t whole_number(const std::string& text, std::int64_t lo, std::int64_t hi, const std::string& option)
{
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || value < lo || value > hi)
        throw UsageError(option + " takes whole numbers from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         ", not '" + text + "'");
    return value;
}

Settings parse_settings(int argc, char** argv)
{
    Settings settings;
    std::vector<std::string> wanted;
    for (int i = 1; i < argc; i += 2) {
        const std::string option = argv[i];
        if (i + 1 >= argc) throw UsageError(option + " needs a value");
        const std::string value = argv[i + 1];
        if (option == "--sizes") {
            settings.sizes.clear();
            for (const auto& size : split_list(value))
                settings.sizes.push_back(whole_number(size, 1, max_size, option));
        } else if (option == "--reps") {
            settings.reps = static_cast<int>(whole_number(value, 1, 10000, option));
        } else if (option == "--exercise") {
            for (const auto& name : split_list(value)) {
                if (!find_exercise(name)) throw UsageError("unknown exercise '" + name + "'");
                wanted.push_back(name);
            }
        } else {
            throw UsageError("unknown option '" + option + "'");
        }
    }
    for (const auto& e : all_exercises())
        if (wanted.empty() || std::find(wanted.begin(), wanted.end(), e.name) != wanted.end())
            settings.exercises.push_back(&e);
    return settings;
}

// Device memory without guards or poison: CUB's temporary storage, the flush, the copy's target.
class DeviceMemory {
public:
    explicit DeviceMemory(std::size_t bytes) { CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(bytes, 1))); }
    ~DeviceMemory() { cudaFree(data_); }
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    void* get() const { return data_; }

private:
    void* data_ = nullptr;
};

struct Timing {
    double median_ms = 0, min_ms = 0;
};

// Times calls as the grader's speed cases are timed: `prepare` (off the clock: poison the output)
// and an L2 flush before every call, CUDA events around the call, warm-up calls not counted. The
// flush is queued just before the start event on the same stream, so the clock starts once the
// flush has finished, with the call already queued behind it.
class Stopwatch {
public:
    Stopwatch(std::size_t l2_bytes, int reps)
        : flush_bytes_(std::max<std::size_t>(2 * l2_bytes, std::size_t(64) << 20)), flush_(flush_bytes_), reps_(reps)
    {
        CUDA_CHECK(cudaEventCreate(&start_));
        CUDA_CHECK(cudaEventCreate(&stop_));
    }
    ~Stopwatch()
    {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    Stopwatch(const Stopwatch&) = delete;
    Stopwatch& operator=(const Stopwatch&) = delete;

    Timing time(const std::function<void()>& prepare, const std::function<void()>& call)
    {
        std::vector<double> ms;
        for (int k = 0; k < warmup_calls + reps_; ++k) {
            prepare();
            CUDA_CHECK(cudaMemsetAsync(flush_.get(), static_cast<int>(++flushes_ & 0xff), flush_bytes_));
            CUDA_CHECK(cudaEventRecord(start_));
            call();
            CUDA_CHECK(cudaEventRecord(stop_));
            CUDA_CHECK(cudaEventSynchronize(stop_));
            CUDA_CHECK(cudaGetLastError());
            float elapsed = 0;
            CUDA_CHECK(cudaEventElapsedTime(&elapsed, start_, stop_));
            if (k >= warmup_calls) ms.push_back(elapsed);
        }
        std::sort(ms.begin(), ms.end());
        const std::size_t middle = ms.size() / 2;
        return {ms.size() % 2 ? ms[middle] : (ms[middle - 1] + ms[middle]) / 2, ms.front()};
    }

private:
    std::size_t flush_bytes_;
    DeviceMemory flush_;  // written before each call: evicts the L2
    int reps_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    unsigned flushes_ = 0;
};

// CUB's version of an exercise's operation (its family's BenchPlan): the inclusive scan of the
// whole array (for the section scans a harder task than theirs), or the sum of the doubles. Its
// temporary storage is allocated here, off the clock.
class CubOperation {
public:
    CubOperation(const BenchPlan& plan, int n) : reduction_(plan.oracle == BenchPlan::Oracle::cub_sum), n_(n)
    {
        call(nullptr, nullptr, nullptr);  // asks for the temporary storage's size
        temp_ = std::make_unique<DeviceMemory>(temp_bytes_);
    }
    const char* name() const { return reduction_ ? "cub::DeviceReduce::Sum" : "cub::DeviceScan::InclusiveSum"; }
    void operator()(const void* in, void* out) { call(temp_->get(), in, out); }

private:
    void call(void* temp, const void* in, void* out)
    {
        if (reduction_)
            CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes_, static_cast<const double*>(in),
                                              static_cast<double*>(out), n_));
        else
            CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes_, static_cast<const float*>(in),
                                                     static_cast<float*>(out), n_));
    }

    bool reduction_;
    int n_;
    std::size_t temp_bytes_ = 0;
    std::unique_ptr<DeviceMemory> temp_;
};

// The convolutions by their definition, one output element per thread and loop step, the mask in
// global memory, ghost cells 0: a height x width image with a mask_rows x mask_width mask (1D: one
// row of n elements, a mask of one row).
__global__ void direct_convolution(const float* in, const float* mask, float* out, int height, int width, int mask_rows,
                                   int mask_width)
{
    const int ry = mask_rows / 2, rx = mask_width / 2;
    const std::int64_t pixels = std::int64_t(height) * width;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < pixels;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const int row = static_cast<int>(i / width), col = static_cast<int>(i % width);
        float sum = 0;
        for (int dy = 0; dy < mask_rows; ++dy)
            for (int dx = 0; dx < mask_width; ++dx) {
                const int y = row - ry + dy, x = col - rx + dx;
                if (y >= 0 && y < height && x >= 0 && x < width)
                    sum += mask[dy * mask_width + dx] * in[std::int64_t(y) * width + x];
            }
        out[i] = sum;
    }
}

struct Mismatches {
    unsigned long long count;
    unsigned long long first;
};

// What element i of a correct output is, from `expected`: itself, or for a section scan (`section`
// > 0) the whole-array scan's value less its value just before the section began. On the
// integer-valued inputs every such value is an integer below 2^24, so exact in float.
__host__ __device__ float expected_value(const float* expected, std::uint64_t i, std::uint64_t section)
{
    const std::uint64_t start = section > 0 ? i - i % section : 0;
    return start > 0 ? expected[i] - expected[start - 1] : expected[i];
}

__global__ void find_mismatches(const float* actual, const float* expected, std::uint64_t n, std::uint64_t section,
                                Mismatches* found)
{
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::uint64_t(gridDim.x) * blockDim.x)
        if (!(actual[i] == expected_value(expected, i, section))) {  // a poisoned NaN differs too
            atomicAdd(&found->count, 1ull);
            atomicMin(&found->first, static_cast<unsigned long long>(i));
        }
}

constexpr int threads = 256, blocks = 4096;

template <typename T>
T element_at(const void* device, std::uint64_t i)
{
    T value{};
    CUDA_CHECK(cudaMemcpy(&value, static_cast<const T*>(device) + i, sizeof value, cudaMemcpyDeviceToHost));
    return value;
}

std::string number(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

// Checks the reference's output (in `out`, from one call) and says against what; throws when it
// is wrong.
std::string verify(const BenchPlan& plan, const Case& c, const CaseInputs& inputs, const void* in, const void* out)
{
    const auto n = static_cast<std::uint64_t>(c.n);
    if (plan.oracle == BenchPlan::Oracle::cub_sum) {
        CubOperation sum(plan, static_cast<int>(c.n));
        DeviceMemory expected(sizeof(double));
        sum(in, expected.get());
        CUDA_CHECK(cudaDeviceSynchronize());
        const double want = element_at<double>(expected.get(), 0), got = element_at<double>(out, 0);
        if (!(got == want))
            throw std::runtime_error("the reference's sum is " + number(got) + ", CUB's (" + sum.name() + ") is " +
                                     number(want));
        return sum.name();
    }

    DeviceMemory expected(n * sizeof(float));
    std::string against;
    if (plan.oracle == BenchPlan::Oracle::cub_inclusive_scan) {
        CubOperation scan(plan, static_cast<int>(c.n));
        scan(in, expected.get());
        CUDA_CHECK(cudaDeviceSynchronize());  // before its temporary storage is freed
        against = scan.name();
    } else {
        DeviceMemory mask(inputs.mask.size() * sizeof(float));
        CUDA_CHECK(
            cudaMemcpy(mask.get(), inputs.mask.data(), inputs.mask.size() * sizeof(float), cudaMemcpyHostToDevice));
        const auto* x = static_cast<const float*>(in);
        const auto* m = static_cast<const float*>(mask.get());
        auto* y = static_cast<float*>(expected.get());
        const ConvolutionShape& s = shape_of<ConvolutionShape>(c);
        const bool image = s.height > 0;  // else one row of n elements, and a mask of one row
        direct_convolution<<<blocks, threads>>>(x, m, y, image ? s.height : 1, image ? s.width : static_cast<int>(c.n),
                                                image ? s.mask_width : 1, s.mask_width);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());  // before `mask` is freed
        against = "a direct convolution";
    }
    const auto section = static_cast<std::uint64_t>(plan.section);
    DeviceMemory found_memory(sizeof(Mismatches));
    auto* found = static_cast<Mismatches*>(found_memory.get());
    const Mismatches none{0, std::numeric_limits<unsigned long long>::max()};
    CUDA_CHECK(cudaMemcpy(found, &none, sizeof none, cudaMemcpyHostToDevice));
    find_mismatches<<<blocks, threads>>>(static_cast<const float*>(out), static_cast<const float*>(expected.get()), n,
                                         section, found);
    CUDA_CHECK(cudaGetLastError());
    Mismatches result{};
    CUDA_CHECK(cudaMemcpy(&result, found, sizeof result, cudaMemcpyDeviceToHost));
    if (result.count == 0) return against;

    const std::uint64_t i = result.first, start = section > 0 ? i - i % section : 0;
    float want = element_at<float>(expected.get(), i);
    if (start > 0) want -= element_at<float>(expected.get(), start - 1);
    throw std::runtime_error(std::to_string(result.count) + " of " + std::to_string(n) +
                             " output elements differ from " + against + ", the first at index " + std::to_string(i) +
                             " (expected " + number(want) + ", got " + number(element_at<float>(out, i)) + ")");
}

json timing_json(const Timing& t, std::size_t bytes)
{
    return {
        {"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"gb_s", static_cast<double>(bytes) / (t.median_ms * 1e6)}};
}

// One row of the table: the reference, CUB and the copy on one exercise at one size.
json measure_row(const Exercise& e, std::int64_t size, Stopwatch& stopwatch)
{
    const BenchPlan plan = bench_plan(e);
    const Case c = bench_case(e, size);
    const CaseInputs inputs = make_inputs(e, c);
    const Poison poison = poison_of(element_type(e));
    const std::size_t element = element_bytes(element_type(e));
    const std::int64_t out_elements = output_elements(e, c);

    GuardedBuffer in(static_cast<std::size_t>(c.n), element), out(static_cast<std::size_t>(out_elements), element);
    in.upload(inputs.input_data(), poison.input_guard);
    std::unique_ptr<GuardedBuffer> scratch;
    if (uses_scratch(e)) {
        scratch = std::make_unique<GuardedBuffer>(static_cast<std::size_t>(c.n + scratch_extra), element);
        scratch->fill(poison.scratch);
    }
    LauncherArgs args;
    args.in = in.data();
    args.out = out.data();
    args.scratch = scratch ? scratch->data() : nullptr;
    args.mask = inputs.mask.empty() ? nullptr : inputs.mask.data();
    set_shape(args, c);
    const auto poison_output = [&out, &poison] { out.fill(poison.unwritten); };

    poison_output();
    call_launcher(e.name, args);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::string verified_against = verify(plan, c, inputs, in.data(), out.data());

    // The fewest bytes the operation moves: each input element read once, each output element
    // written once (where the family counts them: a reduction's one output element is left out).
    const std::size_t in_bytes = in.data_bytes();
    const std::size_t bytes = in_bytes + (plan.output_moves_bytes ? out.data_bytes() : 0);
    const Timing reference = stopwatch.time(poison_output, [&] { call_launcher(e.name, args); });
    json row = {
        {"exercise", e.name},
        {"family", family_name(e.family)},
        {"size", size},
        {"n", c.n},
        {"shape", family_of(e).shape_json(c)},
        {"bytes", bytes},
        {"verified", true},
        {"verified_against", verified_against},
        {"reference", timing_json(reference, bytes)},
        {"cub", nullptr},
        {"fraction_of_cub", nullptr},
    };
    if (plan.timed_beside_cub()) {
        CubOperation cub(plan, static_cast<int>(c.n));
        const Timing t = stopwatch.time(poison_output, [&] { cub(in.data(), out.data()); });
        row["cub"] = timing_json(t, bytes);
        row["cub"]["operation"] = cub.name();
        row["fraction_of_cub"] = t.median_ms / reference.median_ms;  // the same bytes: the ratio of the times
    }
    // The copy reads and writes the input's bytes; its bandwidth counts both.
    {
        DeviceMemory target(in_bytes);
        const Timing t = stopwatch.time(
            [] {}, [&] { CUDA_CHECK(cudaMemcpyAsync(target.get(), in.data(), in_bytes, cudaMemcpyDeviceToDevice)); });
        row["copy"] = timing_json(t, 2 * in_bytes);
        row["copy"]["bytes"] = 2 * in_bytes;
        row["fraction_of_copy"] = row["reference"]["gb_s"].get<double>() / row["copy"]["gb_s"].get<double>();
    }
    return row;
}

json measure(const Settings& settings)
{
    json device = calibrate_device();  // also the 256 MiB copy's bandwidth
    device["name"] = device["device"];
    device.erase("device");
    Stopwatch stopwatch(device.at("l2_bytes").get<std::size_t>(), settings.reps);
    json rows = json::array();
    for (const Exercise* e : settings.exercises)
        for (const std::int64_t size : settings.sizes) {
            try {
                rows.push_back(measure_row(*e, size, stopwatch));
            } catch (const std::exception& error) {
                throw std::runtime_error(e->name + " at size " + std::to_string(size) + ": " + error.what());
            }
        }
    return {{"device", device}, {"reps", settings.reps}, {"warmups", warmup_calls}, {"rows", rows}};
}

}  // namespace

int bench_main(int argc, char** argv)
{
    Settings settings;
    try {
        settings = parse_settings(argc, argv);
    } catch (const UsageError& error) {
        std::fprintf(stderr,
                     "grader_reference_runner --bench: %s\n"
                     "  usage: grader_reference_runner --bench [--sizes N[,N...]] [--reps R] [--exercise A[,B...]]\n",
                     error.what());
        return 2;
    }
    try {
        const std::string text = measure(settings).dump();
        std::printf("%s\n", text.c_str());
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "grader_reference_runner --bench: %s\n", error.what());
        return 1;
    }
}

}  // namespace harness::runner

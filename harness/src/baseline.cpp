#include "harness/baseline.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

namespace harness {
namespace {

// Keeps the compiler from dropping the work whose result nothing reads.
volatile double sink;

double scan_once(const std::vector<float>& in, std::vector<float>& out, std::int64_t section)
{
    float sum = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (section > 0 && static_cast<std::int64_t>(i) % section == 0) sum = 0;
        sum += in[i];
        out[i] = sum;
    }
    return out.empty() ? 0 : out.back();
}

}  // namespace

double median(std::vector<double> samples)
{
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    const std::size_t mid = samples.size() / 2;
    return samples.size() % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
}

double cpu_baseline_ms(const Exercise& exercise, const Case& c, const CaseInputs& inputs, int runs)
{
    (void)c;
    std::vector<double> times;
    std::vector<float> out(inputs.in_f32.size());
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        switch (exercise.family) {
        case Family::section_scan: sink = scan_once(inputs.in_f32, out, exercise.section); break;
        case Family::full_scan: sink = scan_once(inputs.in_f32, out, 0); break;
        default: throw std::logic_error("no CPU baseline for family " + std::string(family_name(exercise.family)));
        }
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return median(times);
}

std::int64_t minimum_bytes(const Exercise& exercise, const Case& c)
{
    const auto element = static_cast<std::int64_t>(element_bytes(element_type(exercise.family)));
    return (c.n + c.output_elements(exercise.family)) * element;
}

}  // namespace harness

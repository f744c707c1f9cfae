#include "harness/baseline.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "family_checks.hpp"
#include "harness/family.hpp"

namespace harness {
namespace {

// Keeps the compiler from dropping the work whose result nothing reads.
volatile double sink;

// The middle of a few runs' times (the upper middle for an even count).
double middle(std::vector<double> samples)
{
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

double median_cpu_ms(const Exercise& exercise, const Case& c, const CaseInputs& inputs, int runs)
{
    std::vector<double> times;
    const detail::FamilyChecks& checks = detail::checks_of(exercise);
    std::vector<float> out(inputs.in_f32.size());
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        sink = checks.run_cpu_version(exercise, c, inputs, out);
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return middle(times);
}

}  // namespace

double cpu_baseline_ms(const Exercise& exercise, const Case& c, const CaseInputs& inputs, int runs)
{
    if (c.n <= cpu_baseline_elements) return median_cpu_ms(exercise, c, inputs, runs);
    const Case small = family_of(exercise).scaled_down(c, cpu_baseline_elements);
    return median_cpu_ms(exercise, small, make_inputs(exercise, small), runs) * static_cast<double>(c.n) /
           static_cast<double>(small.n);
}

std::int64_t minimum_bytes(const Exercise& exercise, const Case& c)
{
    const auto element = static_cast<std::int64_t>(element_bytes(element_type(exercise)));
    return (c.n + output_elements(exercise, c)) * element;
}

}  // namespace harness

#include "harness/baseline.hpp"

#include <algorithm>
#include <chrono>
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

double sum_once(const std::vector<double>& in)
{
    double sum = 0;
    for (double x : in) sum += x;
    return sum;
}

// A direct convolution with zero ghosts, in float, as a CPU programmer would first write it.
double conv_once(const Case& c, const CaseInputs& inputs, std::vector<float>& out, bool two_d)
{
    const std::int64_t height = two_d ? c.height : 1, width = two_d ? c.width : c.n;
    const int w = c.mask_width, r = w / 2, rows = two_d ? w : 1;
    for (std::int64_t y = 0; y < height; ++y)
        for (std::int64_t x = 0; x < width; ++x) {
            float sum = 0;
            for (int j = 0; j < rows; ++j) {
                const std::int64_t yy = two_d ? y - r + j : 0;
                if (yy < 0 || yy >= height) continue;
                for (int k = 0; k < w; ++k) {
                    const std::int64_t xx = x - r + k;
                    if (xx >= 0 && xx < width) sum += inputs.mask[static_cast<std::size_t>(j * w + k)] * inputs.in_f32[static_cast<std::size_t>(yy * width + xx)];
                }
            }
            out[static_cast<std::size_t>(y * width + x)] = sum;
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
    std::vector<double> times;
    std::vector<float> out(inputs.in_f32.size());
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        switch (exercise.family) {
        case Family::section_scan: sink = scan_once(inputs.in_f32, out, exercise.section); break;
        case Family::full_scan: sink = scan_once(inputs.in_f32, out, 0); break;
        case Family::reduction: sink = sum_once(inputs.in_f64); break;
        case Family::conv1d: sink = conv_once(c, inputs, out, false); break;
        case Family::conv2d: sink = conv_once(c, inputs, out, true); break;
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

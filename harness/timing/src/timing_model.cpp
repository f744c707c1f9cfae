#include "harness/timing/timing_model.hpp"

#include <algorithm>

#include "harness/timing/statistics.hpp"

namespace harness::timing {

double fixed_cost_ms(const std::vector<Window>& windows)
{
    std::vector<double> empty;
    for (const auto& w : windows)
        if (!w.launched && !w.warmup) empty.push_back(w.window_ms);
    return median(empty);
}

std::vector<double> call_times(const std::vector<Window>& windows, double fixed_cost_ms, int reps)
{
    std::vector<double> times;
    for (const auto& w : windows)
        if (w.launched && !w.warmup) times.push_back(std::max(0.0, (w.window_ms - fixed_cost_ms) / std::max(reps, 1)));
    return times;
}

double counted_reference_ms(double beside_ms, double alone_ms)
{
    return alone_ms > 0 && beside_ms > 1.03 * alone_ms + 0.002 ? alone_ms : beside_ms;
}

double median_call_ms(const std::vector<Window>& windows, double fixed_cost_ms, int reps)
{
    return median(call_times(windows, fixed_cost_ms, reps));
}

bool same_server_work(const std::vector<Window>& before, const std::vector<Window>& after)
{
    auto server_ms = [](const std::vector<Window>& windows, double Window::*part) {
        std::vector<double> values;
        for (const auto& w : windows)
            if (!w.warmup) values.push_back(w.*part);
        return median(values);
    };
    for (double Window::*part : {&Window::generate_gpu_ms, &Window::checksum_gpu_ms}) {
        const double a = server_ms(before, part), b = server_ms(after, part);
        if (a <= 0 || b <= 0 || b > 1.02 * a + 0.002) return false;
    }
    return true;
}

}  // namespace harness::timing

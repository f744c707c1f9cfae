// What the driver's management library (NVML) tells the grader about the GPU while it grades: the
// processes that use it, and its clocks and throttling. NVML is loaded at run time, so `grade`
// still starts on a machine without the driver (CI); there the monitor is simply unavailable.
// Only the grader process asks, so nothing here depends on what a runner says.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace grading {

class GpuMonitor {
public:
    // Loads NVML and finds the GPU of this UUID ("GPU-...").
    explicit GpuMonitor(const std::string& uuid);
    ~GpuMonitor();
    GpuMonitor(const GpuMonitor&) = delete;
    GpuMonitor& operator=(const GpuMonitor&) = delete;

    bool available() const { return nvml_ != nullptr; }
    const std::string& why_unavailable() const { return why_unavailable_; }

    // The compute processes on the GPU that are neither this process nor one it started (its
    // runners, sandboxed or not): "pid 4242 (python3)", comma-separated; empty when there are none.
    std::string intruders() const;

    // Clocks (SM and memory, MHz, now and at most), temperature, power, and the reasons the
    // clocks are held down right now (as NVML names them; "none" when nothing holds them).
    nlohmann::json clocks() const;

private:
    struct Nvml;
    std::unique_ptr<Nvml> nvml_;
    std::string why_unavailable_;
};

// True when `pid` is `ancestor` or descends from it (by the parent links in /proc).
bool descends_from(int pid, int ancestor);

}  // namespace grading

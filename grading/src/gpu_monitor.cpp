#include "grading/gpu_monitor.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace grading {
namespace {

// The few NVML declarations the monitor needs, from NVML's documented C API (its header is not
// part of every CUDA install). Every call returns 0 (NVML_SUCCESS) on success.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
// nvmlProcessInfo_v2_t, the element type of nvmlDeviceGetComputeRunningProcesses_v3.
struct NvmlProcessInfo {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};
constexpr int nvml_clock_sm = 1, nvml_clock_mem = 2;  // nvmlClockType_t
constexpr int nvml_temperature_gpu = 0;               // nvmlTemperatureSensors_t
constexpr NvmlReturn nvml_insufficient_size = 7;

// nvmlClocksEventReasons bits (nvmlDeviceGetCurrentClocksEventReasons).
const std::vector<std::pair<unsigned long long, const char*>> clock_event_reasons = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

}  // namespace

struct GpuMonitor::Nvml {
    void* library = nullptr;
    NvmlDevice device = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*running_processes)(NvmlDevice, unsigned int*, NvmlProcessInfo*) = nullptr;
    NvmlReturn (*clock_info)(NvmlDevice, int, unsigned int*) = nullptr;
    NvmlReturn (*max_clock_info)(NvmlDevice, int, unsigned int*) = nullptr;
    NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;
    NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;
    NvmlReturn (*clock_reasons)(NvmlDevice, unsigned long long*) = nullptr;

    ~Nvml()
    {
        if (shutdown) shutdown();
        if (library) dlclose(library);
    }
};

GpuMonitor::GpuMonitor(const std::string& uuid)
{
    auto nvml = std::make_unique<Nvml>();
    nvml->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml->library == nullptr) {
        why_unavailable_ = "NVML (libnvidia-ml.so.1, part of the driver) could not be loaded";
        return;
    }
    auto symbol = [&](auto& function, const char* name) {
        function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(nvml->library, name));
        return function != nullptr;
    };
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*by_uuid)(const char*, NvmlDevice*) = nullptr;
    if (!symbol(init, "nvmlInit_v2") || !symbol(by_uuid, "nvmlDeviceGetHandleByUUID") ||
        !symbol(nvml->running_processes, "nvmlDeviceGetComputeRunningProcesses_v3") ||
        !symbol(nvml->clock_info, "nvmlDeviceGetClockInfo") ||
        !symbol(nvml->max_clock_info, "nvmlDeviceGetMaxClockInfo") ||
        !symbol(nvml->temperature, "nvmlDeviceGetTemperature") ||
        !symbol(nvml->power_usage, "nvmlDeviceGetPowerUsage")) {
        why_unavailable_ = "this NVML lacks the functions the grader uses (a driver older than 510?)";
        return;
    }
    if (!symbol(nvml->clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
        symbol(nvml->clock_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (init() != 0) {
        why_unavailable_ = "NVML could not be initialized";
        return;
    }
    symbol(nvml->shutdown, "nvmlShutdown");
    if (by_uuid(uuid.c_str(), &nvml->device) != 0) {
        why_unavailable_ = "NVML does not know the GPU " + uuid;
        return;
    }
    nvml_ = std::move(nvml);
}

GpuMonitor::~GpuMonitor() = default;

bool descends_from(int pid, int ancestor)
{
    for (int hops = 0; pid > 1 && hops < 64; ++hops) {
        if (pid == ancestor) return true;
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text;
        if (!std::getline(stat, text)) return false;
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
        const auto close = text.rfind(')');
        if (close == std::string::npos) return false;
        std::istringstream rest(text.substr(close + 1));
        std::string state;
        int parent = 0;
        if (!(rest >> state >> parent)) return false;
        pid = parent;
    }
    return pid == ancestor;
}

std::string GpuMonitor::intruders() const
{
    if (!nvml_) return {};
    std::vector<NvmlProcessInfo> processes(64);
    unsigned int count = static_cast<unsigned int>(processes.size());
    NvmlReturn result = nvml_->running_processes(nvml_->device, &count, processes.data());
    if (result == nvml_insufficient_size) {
        processes.resize(count + 16);
        count = static_cast<unsigned int>(processes.size());
        result = nvml_->running_processes(nvml_->device, &count, processes.data());
    }
    if (result != 0) return {};
    const int self = static_cast<int>(getpid());
    std::string found;
    for (unsigned int k = 0; k < count && k < processes.size(); ++k) {
        const int pid = static_cast<int>(processes[k].pid);
        if (descends_from(pid, self)) continue;
        std::string name;
        std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/comm"), name);
        found += (found.empty() ? "" : ", ") + std::string("pid ") + std::to_string(pid) +
                 (name.empty() ? std::string(" (not visible from here)") : " (" + name + ")");
    }
    return found;
}

nlohmann::json GpuMonitor::clocks() const
{
    if (!nvml_) return nlohmann::json::object();
    nlohmann::json clocks = nlohmann::json::object();
    unsigned int value = 0;
    if (nvml_->clock_info(nvml_->device, nvml_clock_sm, &value) == 0) clocks["sm_mhz"] = value;
    if (nvml_->max_clock_info(nvml_->device, nvml_clock_sm, &value) == 0) clocks["sm_max_mhz"] = value;
    if (nvml_->clock_info(nvml_->device, nvml_clock_mem, &value) == 0) clocks["memory_mhz"] = value;
    if (nvml_->max_clock_info(nvml_->device, nvml_clock_mem, &value) == 0) clocks["memory_max_mhz"] = value;
    if (nvml_->temperature(nvml_->device, nvml_temperature_gpu, &value) == 0) clocks["temperature_c"] = value;
    if (nvml_->power_usage(nvml_->device, &value) == 0) clocks["power_w"] = value / 1000.0;
    unsigned long long reasons = 0;
    if (nvml_->clock_reasons && nvml_->clock_reasons(nvml_->device, &reasons) == 0) {
        nlohmann::json names = nlohmann::json::array();
        for (const auto& [bit, name] : clock_event_reasons)
            if (reasons & bit) names.push_back(name);
        clocks["clocks_held_by"] = names;
    }
    return clocks;
}

}  // namespace grading

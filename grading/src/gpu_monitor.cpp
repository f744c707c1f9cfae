#include "grading/gpu_monitor.hpp"

#include "harness/process.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>
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
constexpr NvmlReturn nvml_insufficient_size = 7, nvml_not_found = 6;
// nvmlProcessUtilizationSample_t (nvmlDeviceGetProcessUtilization): one per process that was busy
// in a sample period after the time asked for.
struct NvmlProcessUtilization {
    unsigned int pid;
    unsigned long long time_stamp;  // CPU time, microseconds since the epoch
    unsigned int sm_util, memory_util, encoder_util, decoder_util;
};
// nvmlFieldValue_t (nvmlDeviceGetFieldValues), with its value as the 8 bytes of nvmlValue_t.
struct NvmlFieldValue {
    unsigned int field_id;
    unsigned int scope_id;
    long long timestamp;
    long long latency_usec;
    int value_type;  // nvmlValueType_t: 1 unsigned int, 3 unsigned long long, ...
    NvmlReturn result;
    unsigned long long value;
};
constexpr unsigned int nvml_field_pcie_tx_bytes = 197, nvml_field_pcie_rx_bytes = 198;  // NVML_FI_DEV_PCIE_COUNT_*
constexpr int nvml_value_unsigned_int = 1;
constexpr auto link_reading_period = std::chrono::milliseconds(10);  // PCIe 5 x16 moves < 1 GB in it: no double wrap
// NVML records a process's utilization per sample period (about 1/6 s): a sample taken just after
// a timing began can still hold work from before it, so only later samples count.
constexpr auto utilization_sample_period = std::chrono::milliseconds(200);

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
    NvmlReturn (*process_utilization)(NvmlDevice, NvmlProcessUtilization*, unsigned int*, unsigned long long) = nullptr;
    NvmlReturn (*field_values)(NvmlDevice, int, NvmlFieldValue*) = nullptr;

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
    symbol(nvml->process_utilization, "nvmlDeviceGetProcessUtilization");
    symbol(nvml->field_values, "nvmlDeviceGetFieldValues");
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

GpuMonitor::~GpuMonitor()
{
    {
        const std::lock_guard<std::mutex> hold(link_mutex_);
        link_stopping_ = true;
    }
    link_stop_.notify_all();
    if (link_reader_.joinable()) link_reader_.join();
}

void WrappingCounter::read(std::uint64_t value)
{
    const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    value &= mask;
    if (last) total += (value - *last) & mask;
    last = value;
}

bool GpuMonitor::read_link_counters()
{
    if (!nvml_ || !nvml_->field_values) return false;
    NvmlFieldValue fields[2] = {};
    fields[0].field_id = nvml_field_pcie_tx_bytes;
    fields[1].field_id = nvml_field_pcie_rx_bytes;
    if (nvml_->field_values(nvml_->device, 2, fields) != 0 || fields[0].result != 0 || fields[1].result != 0)
        return false;
    link_tx_.bits = fields[0].value_type == nvml_value_unsigned_int ? 32 : 64;
    link_rx_.bits = fields[1].value_type == nvml_value_unsigned_int ? 32 : 64;
    link_tx_.read(fields[0].value);
    link_rx_.read(fields[1].value);
    return true;
}

std::optional<std::uint64_t> GpuMonitor::host_link_bytes()
{
    std::unique_lock<std::mutex> hold(link_mutex_);
    if (!link_counted_ || !read_link_counters()) {
        link_counted_ = false;
        return std::nullopt;
    }
    if (!link_reader_.joinable()) {
        try {
            link_reader_ = std::thread([this] {
                std::unique_lock<std::mutex> lock(link_mutex_);
                // Until a reading fails: from then on nothing is counted (a wrap may have been
                // missed), so there is nothing left to read for.
                while (link_counted_ && !link_stop_.wait_for(lock, link_reading_period, [this] { return link_stopping_; }))
                    if (!read_link_counters()) link_counted_ = false;
            });
        } catch (const std::system_error&) {
            // No thread (the grader's uid out of processes): a wrap between two batches' readings
            // could be missed, so nothing is counted, rather than the timing failing.
            link_counted_ = false;
            return std::nullopt;
        }
    }
    if (!link_counted_) return std::nullopt;
    return link_tx_.total + link_rx_.total;
}

namespace {

// Whether `pid` or one of its ancestors (at most 64 hops up) satisfies `is`.
template <typename Predicate>
bool up_the_tree(int pid, Predicate is)
{
    for (int hops = 0; pid > 1 && hops < 64; ++hops, pid = harness::parent_of(pid))
        if (is(pid)) return true;
    return false;
}

}  // namespace

bool descends_from(int pid, int ancestor)
{
    return pid == ancestor || up_the_tree(pid, [&](int p) { return p == ancestor; });
}

bool below_executable(int pid, const std::string& executable, int self)
{
    if (executable.empty()) return false;
    return up_the_tree(pid, [&](int p) {
        if (p == self) return false;
        std::error_code error;
        const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(p) + "/exe", error);
        return !error && exe == executable;
    });
}

std::string company(const std::vector<GpuProcess>& processes, bool check_gradings, const std::set<int>* busy)
{
    std::string found;
    for (const auto& p : processes) {
        if (p.ours) continue;
        if (p.grading && !(check_gradings && (busy == nullptr || busy->count(p.pid)))) continue;
        found += (found.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p.pid) +
                 (p.name.empty() ? std::string(" (not visible from here)") : " (" + p.name + ")") +
                 (p.grading ? " of another grading, busy" : "");
    }
    return found;
}

std::string busy_runner(const std::vector<GpuProcess>& processes, const std::set<int>* busy)
{
    std::string found;
    for (const auto& p : processes)
        if (p.runner && (busy == nullptr || busy->count(p.pid)))
            found += (found.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p.pid) +
                     (p.name.empty() ? std::string(" (not visible from here)") : " (" + p.name + ")") +
                     " of the stopped runner, busy";
    return found;
}

std::optional<std::vector<std::pair<int, unsigned long long>>> GpuMonitor::compute_processes() const
{
    if (!nvml_) return std::nullopt;
    std::vector<NvmlProcessInfo> listed(64);
    unsigned int count = static_cast<unsigned int>(listed.size());
    NvmlReturn result = nvml_->running_processes(nvml_->device, &count, listed.data());
    if (result == nvml_insufficient_size) {
        listed.resize(count + 16);
        count = static_cast<unsigned int>(listed.size());
        result = nvml_->running_processes(nvml_->device, &count, listed.data());
    }
    if (result != 0) return std::nullopt;
    std::vector<std::pair<int, unsigned long long>> processes;
    for (unsigned int k = 0; k < count && k < listed.size(); ++k)
        processes.emplace_back(static_cast<int>(listed[k].pid), listed[k].used_gpu_memory);
    return processes;
}

std::optional<std::uint64_t> GpuMonitor::memory_below(int runner) const
{
    const auto processes = compute_processes();
    if (!processes || runner <= 0) return std::nullopt;
    // NVML_VALUE_NOT_AVAILABLE (all ones) where the driver does not say (no privilege, a MIG slice).
    constexpr unsigned long long not_available = ~0ULL;
    std::uint64_t held = 0;
    for (const auto& [pid, memory] : *processes) {
        if (!descends_from(pid, runner)) continue;
        if (memory == not_available) return std::nullopt;
        held += memory;
    }
    return held;
}

std::string GpuMonitor::intruders(std::optional<std::chrono::system_clock::time_point> busy_since,
                                  int stopped_runner) const
{
    const auto listed = compute_processes();
    if (!listed) return {};
    NvmlReturn result = 0;
    const int self = static_cast<int>(getpid());
    std::error_code error;
    const std::string executable = std::filesystem::read_symlink("/proc/self/exe", error).string();
    std::vector<GpuProcess> processes;
    for (const auto& [pid, memory] : *listed) {
        GpuProcess p;
        p.pid = pid;
        p.ours = descends_from(p.pid, self);
        p.runner = stopped_runner > 0 && descends_from(p.pid, stopped_runner);
        p.grading = !p.ours && below_executable(p.pid, executable, self);
        std::getline(std::ifstream("/proc/" + std::to_string(p.pid) + "/comm"), p.name);
        processes.push_back(std::move(p));
    }
    // Which processes NVML saw busy since the timing began (plus a sample period).
    std::set<int> busy;
    bool samples = false;
    if (busy_since && nvml_->process_utilization) {
        const auto since = std::chrono::duration_cast<std::chrono::microseconds>(
                               (*busy_since + utilization_sample_period).time_since_epoch()).count();
        unsigned int n = 0;
        result = nvml_->process_utilization(nvml_->device, nullptr, &n, static_cast<unsigned long long>(since));
        if (result == nvml_not_found) {
            samples = true;  // no process was busy since then
        } else if (result == nvml_insufficient_size || result == 0) {
            std::vector<NvmlProcessUtilization> utilization(n + 16);
            n = static_cast<unsigned int>(utilization.size());
            result = nvml_->process_utilization(nvml_->device, utilization.data(), &n,
                                                static_cast<unsigned long long>(since));
            samples = result == 0 || result == nvml_not_found;
            for (unsigned int k = 0; result == 0 && k < n && k < utilization.size(); ++k)
                if (utilization[k].sm_util > 0 || utilization[k].memory_util > 0) busy.insert(static_cast<int>(utilization[k].pid));
        }
    }
    if (stopped_runner > 0) return busy_runner(processes, busy_since && samples ? &busy : nullptr);
    return company(processes, busy_since.has_value(), samples ? &busy : nullptr);
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

// What the driver's management library (NVML) tells the grader about the GPU while it grades: the
// processes that use it, and its clocks and throttling. NVML is loaded at run time, so `grade`
// still starts on a machine without the driver (CI); there the monitor is simply unavailable.
// Only the grader process asks, so nothing here depends on what a runner says.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace grading {

// A hardware counter that wraps at `bits` bits, read often enough that it wraps at most once
// between two readings: the total it has counted since the first reading.
struct WrappingCounter {
    int bits = 32;
    std::uint64_t total = 0;
    std::optional<std::uint64_t> last;
    void read(std::uint64_t value);
};

class GpuMonitor {
public:
    // Loads NVML and finds the GPU of this UUID ("GPU-...").
    explicit GpuMonitor(const std::string& uuid);
    ~GpuMonitor();
    GpuMonitor(const GpuMonitor&) = delete;
    GpuMonitor& operator=(const GpuMonitor&) = delete;

    bool available() const { return nvml_ != nullptr; }
    const std::string& why_unavailable() const { return why_unavailable_; }

    // The compute processes on the GPU that keep it from being this grading's alone: "pid 4242
    // (python3)", comma-separated; empty when there are none. Not counted: this process and those
    // it started (its runners, sandboxed or not); another grading's processes (below another
    // `grade` of this executable, which takes the GPU lock for its GPU work: in `grade class`, the
    // other students'), unless NVML's per-process utilization shows them busy after `busy_since`
    // (no time given: never; a driver without those samples: always). See `company`.
    // With `stopped_runner` (a process id; 0: none): instead, the processes of this runner (it and
    // below it) that NVML saw busy since `busy_since` (a driver without those samples: all of them).
    std::string intruders(std::optional<std::chrono::system_clock::time_point> busy_since = std::nullopt,
                          int stopped_runner = 0) const;

    // The GPU memory that `runner` and the processes below it hold now (NVML's per-process used
    // memory), bytes; nullopt where NVML does not say.
    std::optional<std::uint64_t> memory_below(int runner) const;

    // Clocks (SM and memory, MHz, now and at most), temperature, power, and the reasons the
    // clocks are held down right now (as NVML names them; "none" when nothing holds them).
    nlohmann::json clocks() const;

    // The bytes that have crossed the GPU's PCIe link, both ways, since the first call (NVML's
    // PCIe TX and RX byte counters, fields 197 and 198, which wrap at 32 bits: a thread reads them
    // every 10 ms from the first call on, so that no wrap is missed). nullopt where the driver
    // does not count them. The whole device's: other processes' copies count too.
    std::optional<std::uint64_t> host_link_bytes();

private:
    struct Nvml;
    std::optional<std::vector<std::pair<int, unsigned long long>>> compute_processes() const;  // pid, memory
    bool read_link_counters();  // one reading into link_tx_/link_rx_, link_mutex_ held; false: none
    std::unique_ptr<Nvml> nvml_;
    std::string why_unavailable_;
    std::mutex link_mutex_;
    std::condition_variable link_stop_;
    bool link_stopping_ = false, link_counted_ = true;
    WrappingCounter link_tx_, link_rx_;
    std::thread link_reader_;
};

// True when `pid` is `ancestor` or descends from it (by the parent links in /proc).
bool descends_from(int pid, int ancestor);

// Whether `pid` or one of its ancestors other than `self` runs the executable `executable`
// (/proc/PID/exe): a process of another grading, when `executable` is grade's own.
bool below_executable(int pid, const std::string& executable, int self);

// One compute process on the GPU as the monitor sees it.
struct GpuProcess {
    int pid = 0;
    std::string name;        // from /proc/PID/comm; empty when not visible from here
    bool ours = false;       // this grading's: this process or below it
    bool grading = false;    // another grading's (below another grade)
    bool runner = false;     // the stopped runner's (GpuMonitor::intruders' stopped_runner)
};
// The processes that count as company (GpuMonitor::intruders), named as intruders() returns them:
// those neither ours nor another grading's, always; another grading's only where
// `check_gradings` (the timing is over and its start is known), and then where NVML saw them busy
// since (`busy`: pids with non-zero utilization), or always where the driver keeps no such
// samples (`busy` null).
std::string company(const std::vector<GpuProcess>& processes, bool check_gradings, const std::set<int>* busy);
// The stopped runner's processes that kept the GPU busy (`busy` as for company; null: all of them).
std::string busy_runner(const std::vector<GpuProcess>& processes, const std::set<int>* busy);

}  // namespace grading

#include "harness/cpu_placement.hpp"

#include <sched.h>

namespace harness {

// Four for the four spinning processes of a batch, fewer on a small machine, none where the rest
// would be too few to compile on.
CpuPlacement split_cores(const std::vector<int>& cores)
{
    const std::size_t kept = cores.size() >= 12 ? 4 : cores.size() >= 8 ? 3 : 0;
    CpuPlacement placement;
    placement.work.assign(cores.begin(), cores.end() - static_cast<std::ptrdiff_t>(kept));
    placement.timing.assign(cores.end() - static_cast<std::ptrdiff_t>(kept), cores.end());
    return placement;
}

std::vector<int> current_cores()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cores;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return cores;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cores.push_back(cpu);
    return cores;
}

bool run_on_cores(const std::vector<int>& cores)
{
    if (cores.empty()) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int cpu : cores)
        if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
    return CPU_COUNT(&set) > 0 && sched_setaffinity(0, sizeof set, &set) == 0;
}

const CpuPlacement& cpu_placement()
{
    static const CpuPlacement placement = split_cores(current_cores());
    return placement;
}

void keep_to_work_cores()
{
    if (!cpu_placement().timing.empty()) run_on_cores(cpu_placement().work);
}

OnTimingCores::OnTimingCores()
{
    if (cpu_placement().timing.empty()) return;
    before_ = current_cores();
    run_on_cores(cpu_placement().timing);
}

OnTimingCores::~OnTimingCores()
{
    run_on_cores(before_);
}

}  // namespace harness

#include "limits.hpp"

#include <algorithm>
#include <thread>

#include <unistd.h>

namespace grading::detail {

// Limits on one build step: an honest compile of the course's files needs far less. The step's
// whole tree (nvcc and every compiler it starts) shares one bound on processes and one on memory
// (a control group, where the machine has them: harness/cgroup.hpp): an even share of the
// machine's memory per core, so that as many builds as cores (--jobs' default) fit side by side,
// between 2 and 8 GiB (a compile that includes CUB takes about 0.6 GiB in all).
harness::ProcessLimits build_limits(const Toolchain& toolchain, bool sandboxed)
{
    harness::ProcessLimits limits;
    limits.max_file_bytes = 256ul << 20;         // an object or a runner: a few MiB honestly
    limits.max_processes = sandboxed ? 512 : 0;  // RLIMIT_NPROC counts the user's processes (the sandbox's
                                                 // control group replaces it where there is one)
    limits.max_open_files = 1024;
    limits.cpu_seconds = static_cast<unsigned long>(std::max<long long>(1, toolchain.compile_limit.count()));
    limits.max_data_bytes = 16ull << 30;  // per process, of address space: cicc on heavy templates takes a few GiB
    limits.tree_processes = 512;
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    const unsigned long long memory =
        pages > 0 && page > 0 ? static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page) : 0;
    const unsigned long long share = memory / std::max(1u, std::thread::hardware_concurrency());
    limits.tree_memory_bytes = memory == 0 ? 8ull << 30 : std::clamp(share, 2ull << 30, 8ull << 30);
    return limits;
}

}  // namespace grading::detail

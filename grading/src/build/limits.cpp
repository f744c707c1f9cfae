#include "limits.hpp"

#include <algorithm>

namespace grading::detail {

harness::ProcessLimits build_limits(const Toolchain& toolchain, bool sandboxed)
{
    harness::ProcessLimits limits;
    limits.max_file_bytes = 256ul << 20;         // an object or a runner: a few MiB honestly
    limits.max_processes = sandboxed ? 512 : 0;  // RLIMIT_NPROC counts the user's processes
    limits.max_open_files = 1024;
    limits.cpu_seconds = static_cast<unsigned long>(std::max<long long>(1, toolchain.compile_limit.count()));
    limits.max_data_bytes = 16ull << 30;  // cicc on heavy templates takes a few GiB
    return limits;
}

}  // namespace grading::detail

// The process limits of one build step (grading/src/build/limits.cpp).
#include <doctest/doctest.h>

#include "build/limits.hpp"

using grading::Toolchain;
using grading::detail::build_limits;

TEST_CASE("a build step's limits: the process limit only in the sandbox, CPU time from the step's time limit")
{
    Toolchain toolchain;
    toolchain.compile_limit = std::chrono::seconds(180);
    const harness::ProcessLimits boxed = build_limits(toolchain, true);
    CHECK(boxed.max_processes > 0);
    CHECK(boxed.cpu_seconds == 180);
    CHECK(boxed.max_file_bytes > 0);
    CHECK(boxed.max_file_bytes <= harness::max_child_file_bytes);
    CHECK(boxed.max_open_files > 0);
    CHECK(boxed.max_data_bytes > 0);
    // Outside the sandbox RLIMIT_NPROC would count the grader's own processes.
    CHECK(build_limits(toolchain, false).max_processes == 0);
    toolchain.compile_limit = std::chrono::seconds(0);
    CHECK(build_limits(toolchain, true).cpu_seconds == 1);  // never unlimited
}

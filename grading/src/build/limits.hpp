// The process limits of one build step (compile, symbol check, link), apart from the steps
// themselves so that they are decided in one place.
#pragma once

#include "grading/build.hpp"
#include "harness/process.hpp"

namespace grading::detail {

// Limits on one build step: an honest compile of the course's files needs far less. `sandboxed`:
// the step runs in the sandbox, whose uid RLIMIT_NPROC counts.
harness::ProcessLimits build_limits(const Toolchain& toolchain, bool sandboxed);

}  // namespace grading::detail

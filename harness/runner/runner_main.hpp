// The runner's program apart from main(), so that two programs can share it: a submission's runner
// gets its main from runner_entry.cu (in lib/grader_runner.o); the reference runner gets its own,
// reference_runner_main.cu, which also answers --bench (bench.hpp).
#pragma once

namespace harness::runner {

// Everything the runner's main does: the command line, the grader's pipes, the commands until quit.
int runner_main(int argc, char** argv);

}  // namespace harness::runner

// `grade class`: every student of a class graded by this build's own `grade` (found through
// /proc/self/exe) as a child process of its own, so that a grading which crashes or hangs costs only
// its student, and each student gets everything one grading has (sandbox, the GPU's lock between
// gradings, every results format, the rubric). Several students at once: `per_gpu` workers per GPU,
// each student's grade with CUDA_VISIBLE_DEVICES naming its GPU, so that its preflight, its timing
// server, its runners and its GPU lock (named after that device's UUID) are all that GPU's.
//
// Resumable: a student is done when OUT/students/<name>/results.json is there and parses. Its grade
// writes every file into .pending/, and the class moves them in when grade ends, results.json last;
// killed at any moment (even SIGKILL), the same command grades again exactly the students without
// results. Each child grade dies with the class (PR_SET_PDEATHSIG), and its sandboxed children with it.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "grading/class_command.hpp"
#include "grading/class_results.hpp"
#include "grading/preflight.hpp"

namespace grading {

// A GPU the class grades on.
struct ClassGpu {
    std::string visible;  // CUDA_VISIBLE_DEVICES for its students' grade: an index or a UUID
    std::string label;    // for the console and the report, e.g. "0 (NVIDIA H100 80GB HBM3)"
};

// The GPUs to grade on, or why there are none (`error`). In order: --gpus (`asked`, each an entry
// of the class's own CUDA_VISIBLE_DEVICES where that is set, like CUDA's device numbers); the
// toolchain's fake device (tests/fake_toolchain, no GPU needed): one virtual GPU; the class's
// CUDA_VISIBLE_DEVICES (`visible_env`, empty optional: unset), as Slurm sets it for a job; the GPUs
// `nvidia-smi -L` lists (`nvidia_smi`: its output, empty optional: it did not run); else `probe`'s
// device 0. `note` says which, for the console.
struct GpuChoice {
    std::vector<ClassGpu> gpus;
    std::string note;
    std::string error;
    bool fake = false;  // the fake toolchain's virtual GPU(s): nothing runs on a GPU
};
GpuChoice choose_gpus(const std::vector<std::string>& asked, const Toolchain& toolchain, const DeviceProbe& probe,
                      const std::optional<std::string>& visible_env, const std::optional<std::string>& nvidia_smi);

// (Each student's grade shows its runners only the GPU it was given: the sandbox binds that GPU's
// /dev/nvidiaN alone, and refuses to grade where it cannot tell which node that is.)

// The GPUs in `nvidia-smi -L`'s lines ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)"), by UUID.
std::vector<ClassGpu> parse_nvidia_smi_list(const std::string& text);

// Grades the class; returns grade's exit code (command_line.hpp's ExitCode, see grade class --help).
// `grade_executable`: the `grade` each student is graded by (this one).
int run_class(const ClassCommand& command, const std::string& grade_executable, const DeviceProbe& probe,
              std::ostream& out, std::ostream& err);

// Copies the students of each shard folder into OUT/students/ (those not already graded there),
// then writes the class's files from every student in OUT/students/.
int run_class_merge(const ClassMergeCommand& command, std::ostream& out, std::ostream& err);

// "1:02:03" or "4:05".
std::string clock_text(double seconds);

}  // namespace grading

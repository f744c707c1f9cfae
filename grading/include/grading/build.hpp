// Finding a submission's files and compiling each into its own runner, in parallel, each with a
// time limit. A file that does not compile fails only its own exercise.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace grading {

struct SubmissionFile {
    std::string exercise;
    std::string path;                  // empty: not submitted
    std::vector<std::string> duplicates;   // more than one file with the name: ambiguous
    bool symlink = false;              // a link, possibly to a file outside the submission
};

// Looks for <exercise>.cu anywhere below `directory` for each exercise named.
std::vector<SubmissionFile> find_submission(const std::string& directory, const std::vector<std::string>& exercises);

// Names of libraries the source calls that the exercise must not (CUB, Thrust, cuBLAS, ...),
// from its #include lines and namespaces, comments and strings ignored.
std::vector<std::string> detect_library_use(const std::string& source);
// The same from the linked runner's bytes: CUB's and Thrust's kernels and functions carry their
// namespace in their mangled names, however the source spelled them (macros, other headers).
std::vector<std::string> detect_library_symbols(const std::string& executable_bytes);

struct Toolchain {
    std::string nvcc;                  // compiler
    std::string arch;                  // e.g. "90" for sm_90
    std::string runner_library;        // libgrader_runner.a
    std::string harness_library;       // libharness.a
    std::chrono::seconds compile_limit{180};
};

// Where `grade` finds the compiler and the runner libraries when nothing overrides them.
Toolchain default_toolchain(const std::string& grade_executable);

struct BuildResult {
    bool ok = false;
    std::string executable;
    std::string output;                // compiler messages
    std::string failure;               // "compile error", "compiler timed out", ...
    double seconds = 0;
};

// The nvcc command line for one runner (CONTRACT.md: -O3 -std=c++17 -lineinfo, static runtime).
std::vector<std::string> runner_compile_command(const Toolchain& toolchain, const std::string& source,
                                                const std::string& executable);

// Compiles every (source, executable) pair, `jobs` at a time; results in the same order.
std::vector<BuildResult> build_runners(const Toolchain& toolchain,
                                       const std::vector<std::pair<std::string, std::string>>& jobs_list, int jobs);

}  // namespace grading

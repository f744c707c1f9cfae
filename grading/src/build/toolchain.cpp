// Toolchain discovery: the compiler and the runner object `grade` uses, and the compiler's root.
#include "toolchain.hpp"

#include <filesystem>

#include "grader_config.hpp"
#include "grading/build.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;

namespace grading {

namespace detail {

std::string real_program_path(const std::string& program)
{
    const std::string path = program.find('/') == std::string::npos ? harness::search_path(program) : program;
    if (path.empty()) return {};
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    return ec ? std::string() : real.string();
}

}  // namespace detail

Toolchain default_toolchain(const std::string& grade_executable)
{
    const fs::path lib = fs::weakly_canonical(fs::path(grade_executable)).parent_path().parent_path() / "lib";
    Toolchain t;
    t.nvcc = GRADER_NVCC;
    t.arch = GRADER_CUDA_ARCH;
    t.runner_object = (lib / "grader_runner.o").string();
    t.reference_ptx_dir = (lib / "reference-ptx").string();
    return t;
}

std::string toolchain_root(const std::string& nvcc)
{
    const std::string real = detail::real_program_path(nvcc);
    return real.empty() ? real : fs::path(real).parent_path().parent_path().string();
}

}  // namespace grading

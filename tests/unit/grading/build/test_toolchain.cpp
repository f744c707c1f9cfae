// Toolchain discovery (grading/src/build/toolchain.cpp): the compiler's root from its real path,
// found as exec finds it, and where grade finds its runner object.
#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "grading/build.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

// PATH set for one scope.
struct PathFor {
    std::string saved;
    bool had = false;
    explicit PathFor(const std::string& path)
    {
        if (const char* old = std::getenv("PATH")) {
            saved = old;
            had = true;
        }
        ::setenv("PATH", path.c_str(), 1);
    }
    ~PathFor()
    {
        if (had)
            ::setenv("PATH", saved.c_str(), 1);
        else
            ::unsetenv("PATH");
    }
};

}  // namespace

TEST_CASE("the toolchain's root: nvcc's real path, two levels up, by path or found on PATH")
{
    const fs::path dir = fs::temp_directory_path() / ("grader_test_toolchain_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "cuda-12" / "bin");
    fs::create_directories(dir / "elsewhere");
    std::ofstream(dir / "cuda-12" / "bin" / "nvcc") << "#!/bin/sh\n";
    fs::permissions(dir / "cuda-12" / "bin" / "nvcc", fs::perms::owner_all);
    fs::create_symlink(dir / "cuda-12", dir / "cuda");
    fs::create_symlink(dir / "cuda-12" / "bin" / "nvcc", dir / "elsewhere" / "nvcc");
    const std::string root = fs::canonical(dir / "cuda-12").string();

    CHECK(toolchain_root((dir / "cuda-12" / "bin" / "nvcc").string()) == root);
    CHECK(toolchain_root((dir / "cuda" / "bin" / "nvcc").string()) == root);  // links resolved
    CHECK(toolchain_root((dir / "elsewhere" / "nvcc").string()) == root);
    CHECK(toolchain_root("/nonexistent/bin/nvcc").empty());
    {
        const PathFor path("/nonexistent:" + (dir / "elsewhere").string());
        CHECK(toolchain_root("nvcc") == root);
        CHECK(toolchain_root("no-such-compiler").empty());
    }
    fs::remove_all(dir);
}

TEST_CASE("grade's runner object is in the lib/ beside its bin/; the compiler is the one CMake found")
{
    const Toolchain t = default_toolchain("/opt/grader/bin/grade");
    CHECK(t.runner_object == "/opt/grader/lib/grader_runner.o");
    CHECK_FALSE(t.nvcc.empty());
    CHECK_FALSE(t.arch.empty());
    CHECK(t.compile_limit.count() > 0);
}

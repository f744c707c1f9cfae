// Red team of issue 20 (redteam20), the build side: what a submission's files bring to the build
// steps (grading/src/build/steps.cpp) through the fake toolchain in the sandbox. The fake nvcc
// fails with "cannot read" when the source is not readable where it runs, as the real one does
// ("cc1plus: fatal error: /submission/scan_kogge_stone.cu: Permission denied", measured).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "grading/build.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

Toolchain fake_toolchain()
{
    Toolchain fake = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    fake.nvcc = GRADER_FAKE_NVCC;
    return fake;
}

}  // namespace

// A file the grader can read but the sandbox's uid cannot: unzip and tar keep a mode of 0600 from
// the student's machine (and a umask of 077 gives it to every checkout). The compile, as uid 65534,
// could not read /submission/<name>: the student got compile_error, 0 points, for a mode bit. The
// grader reads the file (it checked it could) and binds its own copy, which the sandbox can read.
TEST_CASE("a source of mode 0600 (the grader reads it, the sandbox's uid cannot) builds in the sandbox")
{
    std::string why;
    const auto sandbox = harness::Sandbox::find(why);
    if (!sandbox) {
        MESSAGE("skipped: no working sandbox here: " << why);
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("grader_test_redteam_mode_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "work");
    const fs::path source = dir / "scan_kogge_stone.cu";
    std::ofstream(source) << "// FAKE_RUNNER: correct\n";
    fs::permissions(source, fs::perms::owner_read | fs::perms::owner_write);
    // The folder above it closed to others too (a 0700 home): the copy must not sit in it.
    fs::permissions(dir, fs::perms::owner_all);
    fs::permissions(dir / "work", fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::group_read);

    const auto results = build_runners(fake_toolchain(), {{source.string(), (dir / "work" / "runner").string()}}, 1,
                                       &*sandbox);
    REQUIRE(results.size() == 1);
    INFO(results[0].failure << results[0].invalid << "\n" << results[0].output);
    CHECK(results[0].ok);
    CHECK(results[0].output.find("cannot read") == std::string::npos);
    // The student's file is left as it was.
    struct stat st {};
    REQUIRE(::stat(source.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    fs::permissions(dir, fs::perms::owner_all);
    fs::remove_all(dir);
}

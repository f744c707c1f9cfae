// Red team: the run sandbox's view. A run hides the CUDA toolkit and the compilers by a list of
// places and names (harness/isolation/src/sandbox.cpp, toolchains()): /usr/local/cuda*, /usr/lib/gcc,
// LLVM..., and libnvrtc* & co. only directly in /usr/lib, /usr/local/lib and /usr/lib/<triple>. The
// whole of /usr is bound read-only, so a toolkit installed anywhere else below it stays visible:
// pip's wheels (nvidia-cuda-nvrtc-cu12/13, nvidia-cuda-nvcc: .../dist-packages/nvidia/cuda_nvrtc/lib/
// libnvrtc.so.*, .../cuda_nvcc/bin/ptxas), which every PyTorch install brings, and Triton's own
// ptxas (.../triton/backends/nvidia/bin/ptxas). A runner can then compile CUDA C++ at run time,
// which no check of the submitted file sees. Secure answer: a run reads none of them.
//
// Plants such files below /usr/local/lib (root only; else exits 77, skipped) before the sandbox is
// found (the list is made once per process), and removes them at the end.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include "harness/process.hpp"
#include "harness/sandbox.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const harness::Sandbox* sandbox = nullptr;
fs::path planted_root;
std::vector<std::string> planted;

std::string read_in_run(const std::string& path)
{
    char pattern[] = "/tmp/redteam-toolkit-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    const std::string log = std::string(pattern) + "/out.log";
    harness::SandboxPolicy policy;
    policy.env = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LC_ALL=C"};
    policy.tmp_bytes = 16 << 20;
    policy.gpu = true;  // a run
    policy.mounts.push_back({std::string(GRADER_FIXTURE_DIR) + "/fixture_sandbox_probe", "/grader/probe", false});
    harness::SpawnOptions inner;
    inner.argv = {"/grader/probe", "read", path};
    inner.output_file = log;
    harness::Child child = harness::Child::spawn(sandbox->wrap(inner, policy));
    child.wait_until(std::chrono::steady_clock::now() + 60s);
    const std::string output = harness::read_file_tail(log, 1 << 16);
    fs::remove_all(pattern);
    return output;
}

}  // namespace

TEST_CASE("red team: a run reads no NVRTC nor ptxas installed by pip or Triton below /usr")
{
    for (const auto& path : planted) {
        CAPTURE(path);
        const std::string output = read_in_run(path);
        CAPTURE(output);
        CHECK(output.find("read failed") != std::string::npos);
    }
}

int main(int argc, char** argv)
{
    if (::geteuid() != 0) {
        std::printf("test_sandbox_toolkit_redteam: SKIPPED: needs root to plant files below /usr/local/lib\n");
        return 77;
    }
    planted_root = "/usr/local/lib/python3.99-grader-redteam-" + std::to_string(::getpid());
    const fs::path site = planted_root / "dist-packages";
    for (const fs::path relative : {fs::path("nvidia/cuda_nvrtc/lib/libnvrtc.so.13"),
                                    fs::path("nvidia/cuda_nvcc/bin/ptxas"),
                                    fs::path("triton/backends/nvidia/bin/ptxas")}) {
        fs::create_directories((site / relative).parent_path());
        std::ofstream(site / relative) << "\x7f" "ELF stand-in for " << relative.string() << "\n";
        fs::permissions(site / relative, fs::perms(0755));
        planted.push_back((site / relative).string());
    }
    std::string why;
    std::optional<harness::Sandbox> found = harness::Sandbox::find(why);
    int code = 77;
    if (!found) {
        std::printf("test_sandbox_toolkit_redteam: SKIPPED: %s\n", why.c_str());
    } else {
        sandbox = &*found;
        doctest::Context context(argc, argv);
        code = context.run();
    }
    std::error_code ignored;
    fs::remove_all(planted_root, ignored);
    return code;
}

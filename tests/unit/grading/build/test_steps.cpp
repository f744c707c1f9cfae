// The build steps (grading/src/build/steps.cpp): the commands, one file's compile, dependency
// check, symbol check and link, and the messages they print, made valid UTF-8 where they are read.
// The fake toolchain (tests/fake_toolchain) goes through the same steps; the whole build with the
// real nvcc where it is installed (CI has it; no GPU needed: the runners are linked, never run).
#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "../../../fake_toolchain/fake_behaviour.hpp"
#include "grader_config.hpp"
#include "grading/build.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "harness/text.hpp"
#include "toolchain_copy.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

using test_support::repository;

using test_support::contains;

// One source per entry (a name -> its text), each in its own folder below `dir`, built with `toolchain`.
std::vector<BuildResult> build_sources(const Toolchain& toolchain, const fs::path& dir,
                                       const std::vector<std::pair<std::string, std::string>>& sources,
                                       const harness::Sandbox* sandbox = nullptr)
{
    std::vector<std::pair<std::string, std::string>> work;
    for (const auto& [name, text] : sources) {
        fs::create_directories(dir / name / "work");
        std::ofstream(dir / name / "scan_kogge_stone.cu") << text;
        work.emplace_back((dir / name / "scan_kogge_stone.cu").string(), (dir / name / "work" / "runner").string());
    }
    return build_runners(toolchain, work, 2, sandbox);
}

Toolchain fake_toolchain(const std::string& nvcc)
{
    Toolchain fake = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    fake.nvcc = nvcc;
    return fake;
}

}  // namespace

TEST_CASE("the build commands follow CONTRACT.md: compile alone, then link after the runner object")
{
    const auto joined = [](const std::vector<std::string>& command) {
        std::string s;
        for (const auto& part : command) s += part + " ";
        return s;
    };
    const std::string compile =
        joined(compile_command("nvcc", "90", "a.cu", "out/submission.o", "out/deps.d", "out/keep"));
    CHECK(compile.find("nvcc -c -O3 -std=c++17 -lineinfo -arch=sm_90 ") == 0);
    CHECK(compile.find("-MD -MF out/deps.d") != std::string::npos);
    CHECK(compile.find("--keep --keep-dir out/keep") != std::string::npos);  // the PTX and fatbin, kept
    CHECK(compile.find("-o out/submission.o a.cu") != std::string::npos);
    const std::string link =
        joined(link_command("nvcc", "90", "/lib/grader_runner.o", "out/submission.o", "out/runner"));
    CHECK(link.find("-arch=sm_90 -cudart static -o out/runner /lib/grader_runner.o out/submission.o") !=
          std::string::npos);
    CHECK(joined(symbols_command("out/submission.o")) == "nm -P -t d out/submission.o ");
}

TEST_CASE("the fake toolchain builds through the same steps: objects nm reads, dependency lists, a trailer")
{
    const Toolchain fake = fake_toolchain(GRADER_FAKE_NVCC);
    REQUIRE(fs::is_regular_file(fake.runner_object));
    const fs::path dir = fs::temp_directory_path() / ("grader_test_fake_build_" + std::to_string(getpid()));
    fs::remove_all(dir);
    const std::map<std::string, std::string> sources = {
        {"a", "// FAKE_RUNNER: hang_at:3\n"},
        {"b", "// FAKE_DEFINES: weak:main\n"},
        {"c", "// FAKE_INCLUDES: @ROOT@/include/cccl/thrust/scan.h /usr/include/stdio.h\n"},
        {"d", "// FAKE_INCLUDES: /etc/hostname\n"},
        {"e", "FAKE_COMPILE_ERROR\n"},
        {"f", "// FAKE_LINK_ERROR\n"}};
    std::vector<std::pair<std::string, std::string>> work;
    for (const auto& [name, text] : sources) {
        fs::create_directories(dir / name / "work");
        std::ofstream(dir / name / "scan_kogge_stone.cu") << text;
        work.emplace_back((dir / name / "scan_kogge_stone.cu").string(), (dir / name / "work" / "runner").string());
    }
    const auto r = build_runners(fake, work, 2, nullptr);
    REQUIRE(r.size() == 6);
    CHECK_MESSAGE(r[0].ok, r[0].failure << r[0].invalid << r[0].output);
    std::ifstream runner(r[0].executable, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(runner)), std::istreambuf_iterator<char>());
    CHECK(fake_behaviour_of(bytes.substr(bytes.size() > 4096 ? bytes.size() - 4096 : 0)) == "hang_at:3");
    CHECK(contains(r[1].invalid, "defines `main`"));
    CHECK(r[2].ok);
    CHECK(r[2].library_use == std::vector<std::string>{"Thrust"});
    CHECK(r[2].dependencies.size() == 4);
    CHECK(contains(r[3].invalid, "includes /etc/hostname"));
    CHECK(r[4].failure == "compile error");
    CHECK(contains(r[4].output, "error: expected a"));
    CHECK(r[5].failure == "link error");
    CHECK(contains(r[5].output, "multiple definition of `main'"));
    CHECK(fake_behaviour_of("...") == "correct");
    fs::remove_all(dir);
}

TEST_CASE("the compiler's and the linker's messages are valid UTF-8 without terminal sequences, however printed")
{
    const fs::path dir = fs::temp_directory_path() / ("grader_test_odd_output_" + std::to_string(getpid()));
    fs::remove_all(dir);
    // 0xff 0xfe, a colour, a screen clear, a window title (OSC, ended by BEL), on every call.
    const Toolchain odd = fake_toolchain(fake_toolchain_copy(
        GRADER_FAKE_NVCC, dir / "toolchain",
        "printf 'warning: \\377\\376 \\033[31mred\\033[0m \\033[2J \\033]0;title\\007 end\\n' >&2"));
    // Without the sandbox the source's own path is in the compile error: a folder name that is no text.
    const fs::path odd_folder = dir / "\xff\x1b[2J";
    fs::create_directories(odd_folder / "work");
    std::ofstream(odd_folder / "scan_kogge_stone.cu") << "FAKE_COMPILE_ERROR\n";
    std::vector<std::pair<std::string, std::string>> work = {
        {(odd_folder / "scan_kogge_stone.cu").string(), (odd_folder / "work" / "runner").string()}};
    const auto error = build_runners(odd, work, 1, nullptr);
    const auto built = build_sources(odd, dir / "sources", {{"ok", "// FAKE_RUNNER: correct\n"}});
    std::vector<BuildResult> results = {error.at(0), built.at(0)};

    std::string why;
    const auto sandbox = harness::Sandbox::find(why);
    if (sandbox)
        results.push_back(build_sources(odd, dir / "boxed", {{"ok", "// FAKE_RUNNER: correct\n"}}, &*sandbox).at(0));
    else
        MESSAGE("no working sandbox here, the sandboxed build is not tested: " << why);

    CHECK(results[0].failure == "compile error");
    CHECK(contains(results[0].output, "scan_kogge_stone.cu(3): error"));
    for (std::size_t k = 1; k < results.size(); ++k) CHECK_MESSAGE(results[k].ok, results[k].failure << results[k].output);
    for (const auto& r : results) {
        CAPTURE(r.output);
        CHECK(harness::valid_text(r.output) == r.output);
        CHECK_FALSE(contains(r.output, "\x1b"));
        CHECK_FALSE(contains(r.output, "\x07"));
        CHECK(contains(r.output, "warning: \xEF\xBF\xBD\xEF\xBF\xBD red"));  // 0xff 0xfe: U+FFFD each
        CHECK_FALSE(contains(r.output, "title"));  // a window title is a control string: dropped whole
        CHECK(contains(r.output, "end"));
    }
    // A successful build's messages are the compiler's and the linker's, both cleaned.
    const std::string& both = built.at(0).output;
    CHECK(both.find("warning: ") != both.rfind("warning: "));
    fs::remove_all(dir);
}

TEST_CASE("a dependency list that is empty, a link or missing is the compiler's failure, never a pass")
{
    const fs::path dir = fs::temp_directory_path() / ("grader_test_deps_list_" + std::to_string(getpid()));
    fs::remove_all(dir);
    // After the fake compile, its -MF file is emptied, replaced by a link, or removed.
    auto with_deps = [&](const std::string& name, const std::string& command) {
        const std::string after = "prev=\nfor a; do [ \"$prev\" = -MF ] && " + command + "; prev=$a; done";
        return fake_toolchain(fake_toolchain_copy(GRADER_FAKE_NVCC, dir / name, "", after));
    };
    for (const auto& [name, command] : std::vector<std::pair<std::string, std::string>>{
             {"empty", ": > \"$a\""}, {"link", "ln -sf /etc/hostname \"$a\""}, {"missing", "rm -f \"$a\""}}) {
        CAPTURE(name);
        const auto r = build_sources(with_deps(name, command), dir / ("sources_" + name), {{"ok", "// FAKE_RUNNER: correct\n"}});
        CHECK_FALSE(r.at(0).ok);
        CHECK(contains(r.at(0).failure, "the compiler wrote no dependency list"));
        CHECK(r.at(0).invalid.empty());
    }
    fs::remove_all(dir);
}

// ---- The whole build with the real nvcc ----

namespace {

struct RealBuild {
    std::string skip;  // why the real build is not tested here
    Toolchain toolchain;
    fs::path dir;  // removed at exit
    std::map<std::string, BuildResult> results;
    ~RealBuild()
    {
        std::error_code ignored;
        if (!dir.empty()) fs::remove_all(dir, ignored);
    }
};

const fs::path real_dir = fs::temp_directory_path() / ("grader_test_build_" + std::to_string(getpid()));

// One source per case; the launcher's name is scan_kogge_stone in all of them.
std::map<std::string, std::string> real_sources(const std::string& harness_symbol, const fs::path& outside_header)
{
    std::ifstream stub(repository() / "exercises" / "scan_kogge_stone" / "scan_kogge_stone.cu");
    const std::string stub_text((std::istreambuf_iterator<char>(stub)), std::istreambuf_iterator<char>());
    const std::string launcher = "void scan_kogge_stone(const float* in, float* out, int n) {}\n";
    return {
        {"stub", stub_text},
        {"main", launcher + "int main() { return 0; }\n"},
        {"harness", launcher + "extern \"C\" void forged_send() __asm__(\"" + harness_symbol +
                        "\");\nextern \"C\" void forged_send() {}\n"},
        {"cuda_entry", "#include <cuda_runtime.h>\n" + launcher +
                           "cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {\n"
                           "    *ms = 1e-3f;\n    return cudaSuccess;\n}\n"},
        {"libc_write", launcher + "extern \"C\" long write(int, const void*, unsigned long) { return 0; }\n"},
        {"vector",
         "#include <cuda_runtime.h>\n#include <algorithm>\n#include <cstdio>\n#include <string>\n#include <vector>\n"
         "namespace {\n__global__ void copy(const float* in, float* out, int n) {\n"
         "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = in[i];\n}\n}\n"
         "void scan_kogge_stone(const float* in, float* out, int n) {\n"
         "    std::vector<float> host(static_cast<size_t>(n));\n    host.push_back(1.0f);\n"
         "    std::sort(host.begin(), host.end());\n    const std::string note = \"n=\" + std::to_string(n);\n"
         "    if (n < 0) std::printf(\"%s\\n\", note.c_str());\n"
         "    copy<<<(n + 255) / 256, 256>>>(in, out, n);\n}\n"},
        {"cub_renamed",
         "#define cub renamed\n#include <cub/cub.cuh>\n"
         "void scan_kogge_stone(const float* in, float* out, int n) {\n"
         "    size_t bytes = 0;\n    renamed::DeviceScan::InclusiveSum(nullptr, bytes, in, out, n);\n"
         "    void* temp = nullptr;\n    cudaMalloc(&temp, bytes);\n"
         "    renamed::DeviceScan::InclusiveSum(temp, bytes, in, out, n);\n    cudaFree(temp);\n}\n"},
        {"thrust",
         "#include <thrust/execution_policy.h>\n#include <thrust/scan.h>\n"
         "void scan_kogge_stone(const float* in, float* out, int n) {\n"
         "    thrust::inclusive_scan(thrust::device, in, in + n, out);\n}\n"},
        {"outside", "#include \"" + outside_header.string() + "\"\n" + launcher},
        // Someone else's compiled kernel (the handout's references, say), loaded and launched.
        {"loads_fatbin",
         "#include <cuda_runtime.h>\nstatic const unsigned char blob[16] = {0};\n"
         "void scan_kogge_stone(const float* in, float* out, int n) {\n"
         "    cudaLibrary_t library;\n    cudaKernel_t kernel;\n"
         "    cudaLibraryLoadData(&library, blob, nullptr, nullptr, 0, nullptr, nullptr, 0);\n"
         "    cudaLibraryGetKernel(&kernel, library, \"scan\");\n"
         "    void* args[] = {&in, &out, &n};\n"
         "    cudaLaunchKernel((const void*)kernel, dim3(1), dim3(1), args, 0, nullptr);\n}\n"},
    };
}

std::string runner_symbol_containing(const std::string& runner_object, const std::string& part)
{
    const auto r = harness::run_command({"nm", "-P", "-t", "d", runner_object}, std::chrono::seconds(60), 64u << 20);
    for (const auto& s : parse_nm(r.output))
        if (s.type == 'T' && contains(s.name, part)) return s.name;
    return {};
}

RealBuild& real_build()
{
    static RealBuild build;
    static std::once_flag once;
    std::call_once(once, [] {
        build.toolchain = default_toolchain(fs::read_symlink("/proc/self/exe").string());
        if (::access(build.toolchain.nvcc.c_str(), X_OK) != 0) {
            build.skip =
                "no nvcc at " + build.toolchain.nvcc + " (the CUDA compiler CMake found): the real build is not tested";
            return;
        }
        REQUIRE_MESSAGE(
            fs::is_regular_file(build.toolchain.runner_object),
            "the runner object " << build.toolchain.runner_object << " was not built (target grader_runner_object)");
        const std::string send = runner_symbol_containing(build.toolchain.runner_object, "13ChannelWriter4send");
        REQUIRE_MESSAGE(!send.empty(), "the runner object defines no harness::ChannelWriter::send");

        build.dir = real_dir;
        fs::remove_all(build.dir);
        fs::create_directories(build.dir / "outside");
        const fs::path secret = build.dir / "outside" / "secret.h";
        std::ofstream(secret) << "static int secret_helper() { return 42; }\n";
        std::vector<std::string> names;
        std::vector<std::pair<std::string, std::string>> work;
        for (const auto& [name, text] : real_sources(send, secret)) {
            const fs::path sub = build.dir / name;
            fs::create_directories(sub / "work");
            std::ofstream(sub / "scan_kogge_stone.cu") << text;
            names.push_back(name);
            work.emplace_back((sub / "scan_kogge_stone.cu").string(), (sub / "work" / "runner").string());
        }
        const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        const auto results = build_runners(build.toolchain, work, jobs, nullptr);
        for (std::size_t k = 0; k < names.size(); ++k) build.results[names[k]] = results[k];
    });
    return build;
}

const BuildResult* real(const std::string& name)
{
    RealBuild& build = real_build();
    if (!build.skip.empty()) {
        MESSAGE("skipped: " << build.skip);
        return nullptr;
    }
    return &build.results.at(name);
}

}  // namespace

TEST_CASE("real nvcc: the stub compiles, passes both checks and links; CUDA's own headers are no library")
{
    const BuildResult* b = real("stub");
    if (!b) return;
    CHECK_MESSAGE(b->ok, b->failure << b->invalid << "\n" << b->output);
    CHECK(b->invalid.empty());
    CHECK(b->library_use.empty());
    CHECK(fs::is_regular_file(b->executable));
    REQUIRE(!b->dependencies.empty());
    CHECK(b->dependencies.front() == (real_dir / "stub" / "scan_kogge_stone.cu").string());
    CHECK(std::any_of(b->dependencies.begin(), b->dependencies.end(),
                      [](const std::string& d) { return contains(d, "/cuda_runtime.h"); }));
    MESSAGE("the stub read " << b->dependencies.size() << " files");
}

TEST_CASE("real nvcc: main, a harness function, a CUDA entry point, libc's write: invalid, named")
{
    for (const auto& [name, expected] :
         std::vector<std::pair<std::string, std::string>>{{"main", "defines `main`"},
                                                          {"harness", "`harness::ChannelWriter::send("},
                                                          {"cuda_entry", "`cudaEventElapsedTime`"},
                                                          {"libc_write", "`write`"}}) {
        const BuildResult* b = real(name);
        if (!b) return;
        CAPTURE(name);
        CAPTURE(b->invalid);
        CHECK_FALSE(b->ok);
        CHECK(contains(b->invalid, expected));
        CHECK(contains(b->invalid, "a submission defines only its launcher and its own kernels and helpers"));
        CHECK_FALSE(fs::exists(b->executable));
    }
}

TEST_CASE("real nvcc: a launcher that loads a compiled kernel at run time is invalid, named")
{
    const BuildResult* b = real("loads_fatbin");
    if (!b) return;
    CAPTURE(b->invalid);
    CHECK_FALSE(b->ok);
    CHECK(contains(b->invalid, "calls `cudaLibrary"));  // the first in nm's order
    CHECK(contains(b->invalid, "which loads or compiles code at run time: every kernel and function must be "
                               "compiled from the submitted file"));
    CHECK_FALSE(fs::exists(b->executable));
}

TEST_CASE("real nvcc: std::vector<float>, std::string and std::sort are the submission's own business")
{
    const BuildResult* b = real("vector");
    if (!b) return;
    CHECK(b->ok);
    CHECK(b->invalid.empty());
    CHECK(b->library_use.empty());
}

TEST_CASE("real nvcc: CUB behind a renamed namespace, Thrust: library use, from the headers read")
{
    const BuildResult* cub = real("cub_renamed");
    if (!cub) return;
    CHECK(cub->ok);
    REQUIRE_FALSE(cub->library_use.empty());
    CHECK(cub->library_use.front() == "CUB");
    const BuildResult* thrust = real("thrust");
    CHECK(thrust->ok);
    REQUIRE_FALSE(thrust->library_use.empty());
    CHECK(thrust->library_use.front() == "Thrust");
}

TEST_CASE("real nvcc: an absolute #include of a file outside the submission: invalid, naming the file")
{
    const BuildResult* b = real("outside");
    if (!b) return;
    CHECK_FALSE(b->ok);
    CHECK(contains(b->invalid, fs::canonical(real_dir / "outside" / "secret.h").string()));
    CHECK(contains(b->invalid, "outside the submission"));
}

TEST_CASE("real nvcc in the sandbox: the stub builds; a file outside the submission cannot even be read")
{
    const BuildResult* stub = real("stub");
    if (!stub) return;
    std::string why;
    const auto sandbox = harness::Sandbox::find(why);
    if (!sandbox) {
        MESSAGE("skipped: no working sandbox here: " << why);
        return;
    }
    const fs::path dir = real_dir / "sandboxed";
    fs::create_directories(dir / "stub" / "work");
    fs::create_directories(dir / "outside" / "work");
    fs::copy_file(real_dir / "stub" / "scan_kogge_stone.cu", dir / "stub" / "scan_kogge_stone.cu");
    fs::copy_file(real_dir / "outside" / "scan_kogge_stone.cu", dir / "outside" / "scan_kogge_stone.cu");
    const auto results = build_runners(
        real_build().toolchain,
        {{(dir / "stub" / "scan_kogge_stone.cu").string(), (dir / "stub" / "work" / "runner").string()},
         {(dir / "outside" / "scan_kogge_stone.cu").string(), (dir / "outside" / "work" / "runner").string()}},
        2, &*sandbox);
    INFO("stub: " << results[0].failure << results[0].invalid << "\n" << results[0].output);
    CHECK(results[0].ok);
    // Every check of code the student did not write ran in the sandbox too: the kept fatbin and
    // PTX were read, objdump disassembled the object, and nothing was found.
    std::string skipped;
    for (const auto& s : results[0].not_checked) skipped += s + "; ";
    CHECK_MESSAGE(results[0].not_checked.empty(), skipped);
    CHECK(results[0].code_findings.empty());
    CHECK(results[0].reference.compared);
    REQUIRE_FALSE(results[0].dependencies.empty());
    CHECK(results[0].dependencies.front() == "/submission/scan_kogge_stone.cu");
    INFO("outside: " << results[1].failure << results[1].invalid << "\n" << results[1].output);
    CHECK_FALSE(results[1].ok);
    CHECK(results[1].failure == "compile error");
    CHECK(contains(results[1].output, "secret.h"));
}

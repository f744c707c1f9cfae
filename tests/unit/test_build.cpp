// How a submission file is built (grading/src/build.cpp): the compiler's dependency list decides
// which headers it read, the object's symbols what it defines, and the runner object comes first
// on the link line. The parsers and rules are tested on hand-made input; the whole build with the
// real nvcc where it is installed (CI has it; no GPU needed: the runners are linked, never run).
#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "../fake_toolchain/fake_behaviour.hpp"
#include "grader_config.hpp"
#include "grading/build.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

const fs::path repository = fs::path(__FILE__).parent_path().parent_path().parent_path();

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

bool has(const std::vector<std::string>& list, const std::string& item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

TEST_CASE("dependency lists: escaped spaces, continuations, several rules")
{
    const std::string nvcc_style =
        "submission.o : /submission/scan_kogge_stone.cu \\\n"
        "    /usr/include/stdc-predef.h \\\n"
        "    /tmp/dir\\ with\\ space/a\\ b.h \\\n"
        "    /tmp/we#ird$dir/x.h\n";
    const auto deps = parse_make_dependencies(nvcc_style);
    REQUIRE(deps.size() == 4);
    CHECK(deps[0] == "/submission/scan_kogge_stone.cu");
    CHECK(deps[1] == "/usr/include/stdc-predef.h");
    CHECK(deps[2] == "/tmp/dir with space/a b.h");
    CHECK(deps[3] == "/tmp/we#ird$dir/x.h");

    // gcc's style: the target with its colon attached, several names on a line, CRLF, a phony rule
    // per header (-MP), a target with a space (nvcc does not escape it), "$$" and "\#".
    const std::string gcc_style = "/work dir/submission.o: a.cu b.h \\\r\n c\\#1.h d$$.h\r\nb.h:\r\n\r\nc\\#1.h:\n";
    const auto more = parse_make_dependencies(gcc_style);
    REQUIRE(more.size() == 4);
    CHECK(more[0] == "a.cu");
    CHECK(more[1] == "b.h");
    CHECK(more[2] == "c#1.h");
    CHECK(more[3] == "d$.h");

    CHECK(parse_make_dependencies("").empty());
    CHECK(parse_make_dependencies("x.o:").empty());
    CHECK(parse_make_dependencies("x.o: \\\n").empty());
}

TEST_CASE("nm -P output: definitions, references, archive members, names with spaces")
{
    const auto symbols = parse_nm(
        "libcudart_static.a[cudart.o]:\n"
        "_Unwind_Resume U         \n"
        "_Z16scan_kogge_stonePKfPfi T 240 85\n"
        "DW.ref.__gxx_personality_v0 V 0 8\n"
        "fatbinData r 0 \n"
        "_Z16scan_brent_kungPKfPfi w         \n"
        "odd name 12 T 16 4\n"
        "nm: /out/submission.o: no symbols\n");
    REQUIRE(symbols.size() == 6);
    CHECK(symbols[0].name == "_Unwind_Resume");
    CHECK(symbols[0].type == 'U');
    CHECK(symbols[1].name == "_Z16scan_kogge_stonePKfPfi");
    CHECK(symbols[1].type == 'T');
    CHECK(symbols[2].type == 'V');
    CHECK(symbols[3].name == "fatbinData");
    CHECK(symbols[3].type == 'r');
    CHECK(symbols[4].type == 'w');
    CHECK(symbols[5].name == "odd name 12");
}

TEST_CASE("headers name their library, whatever the source called it")
{
    CHECK(library_of_header("cub/cub.cuh") == "CUB");
    CHECK(library_of_header("cccl/cub/device/device_scan.cuh") == "CUB");
    CHECK(library_of_header("cccl/thrust/scan.h") == "Thrust");
    CHECK(library_of_header("thrust/device_vector.h") == "Thrust");
    CHECK(library_of_header("cublas_v2.h") == "cuBLAS");
    CHECK(library_of_header("cublasLt.h") == "cuBLAS");
    CHECK(library_of_header("cudnn.h") == "cuDNN");
    CHECK(library_of_header("cufft.h") == "cuFFT");
    CHECK(library_of_header("curand_kernel.h") == "cuRAND");
    CHECK(library_of_header("cusparse.h") == "cuSPARSE");
    CHECK(library_of_header("cusolverDn.h") == "cuSOLVER");
    CHECK(library_of_header("nvrtc.h") == "NVRTC");
    CHECK(library_of_header("cccl/cuda/std/numeric") == "cuda::std algorithms");
    CHECK(library_of_header("cccl/cuda/std/__numeric/reduce.h") == "cuda::std algorithms");
    // What CUDA's own headers pull in by themselves is no library.
    CHECK(library_of_header("cccl/cuda/std/__algorithm/iter_swap.h").empty());
    CHECK(library_of_header("cccl/cuda/std/__limits/numeric_limits.h").empty());
    CHECK(library_of_header("cuda_runtime.h").empty());
    CHECK(library_of_header("crt/host_config.h").empty());
    CHECK(library_of_header("cooperative_groups.h").empty());
    CHECK(library_of_header("c++/12/numeric").empty());
}

TEST_CASE("dependencies: the source, the toolchain's and the system's headers; anything else is named")
{
    const fs::path dir = fs::temp_directory_path() / ("grader_test_deps_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "cuda" / "include" / "cccl" / "cub");
    fs::create_directories(dir / "elsewhere");
    std::ofstream(dir / "elsewhere" / "secret.cu") << "//";
    fs::create_symlink(dir / "elsewhere" / "secret.cu", dir / "cuda" / "include" / "innocent.h");
    const std::string include = fs::canonical(dir / "cuda" / "include").string();
    const std::vector<std::string> roots = {include, "/usr/include"};

    const DependencyCheck clean = check_dependencies(
        {"/submission/x.cu", include + "/cuda_runtime.h", "/usr/include/stdio.h", include + "/crt/host_config.h"},
        "/submission/x.cu", roots);
    CHECK(clean.outside.empty());
    CHECK(clean.library_use.empty());

    const DependencyCheck libraries = check_dependencies({"/submission/x.cu", include + "/cccl/thrust/scan.h",
                                                          include + "/cccl/cub/cub.cuh", include + "/cccl/thrust/x.h"},
                                                         "/submission/x.cu", roots);
    CHECK(libraries.outside.empty());
    CHECK(libraries.library_use == std::vector<std::string>{"Thrust", "CUB"});  // in the order first read

    // A path made of "..": judged by where it leads. A link inside a root: by its target.
    const DependencyCheck escaped =
        check_dependencies({"/submission/x.cu", include + "/../../elsewhere/secret.cu", include + "/innocent.h",
                            "/usr/include/../../etc/passwd", "relative.h"},
                           "/submission/x.cu", roots);
    const std::string secret = fs::canonical(dir / "elsewhere" / "secret.cu").string();
    CHECK(escaped.outside == std::vector<std::string>{secret, "/etc/passwd", "relative.h"});
    fs::remove_all(dir);

    // The real toolchain's roots come from nvcc's real path.
    CHECK(header_roots("").size() >= 1);
    CHECK(toolchain_root("/nonexistent/bin/nvcc").empty());
}

TEST_CASE("forbidden definitions: main, CUDA entry points, the runner's and the runtime's symbols")
{
    ForbiddenSymbols f;
    f.referenced = {{"write", "the grader's runner"},
                    {"_Z16scan_kogge_stonePKfPfi", "the grader's runner"},
                    {"dlsym", "the CUDA runtime"}};
    f.defined = {{"_ZN7harness13ChannelWriter4sendEv", {false, "the grader's runner"}},
                 {"_ZNSt6vectorIfSaIfEE7reserveEm", {true, "the grader's runner"}},
                 {"DW.ref.__gxx_personality_v0", {true, "the grader's runner"}},
                 {"malloc", {false, "the C/C++ runtime (libc.so.6)"}},
                 {"open", {true, "the C/C++ runtime (libc.so.6)"}}};
    f.launcher_prefixes = {"_Z16scan_kogge_stone"};
    auto verdict = [&](std::vector<Symbol> symbols) { return forbidden_definition(symbols, f); };

    // What nvcc emits for an honest file, its launcher (the runner references it), its own helpers,
    // weak copies of inline functions the runner also has, and every undefined reference.
    CHECK(verdict(
              {{"_Z16scan_kogge_stonePKfPfi", 'T'},
               {"_Z90__device_stub__ZN39_GLOBAL__N__b79260f0_7_stub_cu_adaca45423kogge_stone_scan_kernelEPKfPfi", 'T'},
               {"_ZNSt6vectorIfSaIfEE7reserveEm", 'W'},
               {"DW.ref.__gxx_personality_v0", 'V'},
               {"_ZL20__cudaFatCubinHandle", 'b'},
               {"__cudaRegisterFatBinary", 'U'},
               {"write", 'U'},
               {"_Z6helperv", 'T'}})
              .empty());
    // A launcher of the wrong signature is the student's own mistake, reported at run time.
    CHECK(verdict({{"_Z16scan_kogge_stonePfS_i", 'T'}}).empty());

    CHECK(contains(verdict({{"main", 'T'}}), "defines `main`"));
    CHECK(contains(verdict({{"main", 'W'}}), "defines `main`"));
    CHECK(contains(verdict({{"cudaEventElapsedTime", 'T'}}),
                   "`cudaEventElapsedTime`, a CUDA runtime or driver entry point"));
    CHECK(contains(verdict({{"cuEventElapsedTime", 'W'}}), "`cuEventElapsedTime`"));
    CHECK(contains(verdict({{"write", 'T'}}), "`write`, which the grader's runner calls"));
    CHECK(contains(verdict({{"write@@GLIBC_2.2.5", 'T'}}), "`write`"));
    CHECK(contains(verdict({{"dlsym", 'W'}}), "`dlsym`, which the CUDA runtime calls"));
    CHECK(contains(verdict({{"_ZN7harness13ChannelWriter4sendEv", 'W'}}),
                   "`harness::ChannelWriter::send()`, which the grader's runner defines"));
    // A strong definition of what the runner has only weakly would win the link: not allowed.
    CHECK(contains(verdict({{"_ZNSt6vectorIfSaIfEE7reserveEm", 'T'}}),
                   "std::vector<float, std::allocator<float> >::reserve"));
    CHECK(contains(verdict({{"malloc", 'T'}}), "`malloc`, which the C/C++ runtime (libc.so.6) defines"));
    CHECK(contains(verdict({{"open", 'W'}}), "`open`"));  // a weak C name: no template instantiation
    const std::string several = verdict({{"main", 'T'}, {"write", 'T'}, {"_Z6helperv", 'T'}});
    CHECK(contains(several, "(and 1 more such symbols)"));
    CHECK(contains(several, "a submission defines only its launcher and its own kernels and helpers"));
}

TEST_CASE("loading GPU code at run time: the runtime's and the driver's loaders, the dynamic loader")
{
    // What nvcc's own registration of the file's kernels references is fine.
    CHECK(loads_code_at_run_time({{"__cudaRegisterFatBinary", 'U'},
                                  {"__cudaLaunchKernel", 'U'},
                                  {"cudaMemcpyToSymbol", 'U'},
                                  {"cudaLaunchKernel", 'U'}},
                                 false)
              .empty());
    for (const char* loader : {"cudaLibraryLoadData", "cudaGetDriverEntryPoint", "cuModuleLoadData", "dlsym"})
        CHECK(contains(loads_code_at_run_time({{loader, 'U'}}, false), std::string("calls `") + loader + "`"));
    CHECK(contains(loads_code_at_run_time({{"dlopen@GLIBC_2.34", 'U'}}, false), "calls `dlopen`"));
    // Defining one is forbidden_definition's business; a local symbol of that name calls nothing.
    CHECK(loads_code_at_run_time({{"dlsym", 't'}}, false).empty());
    // CUB's headers call the dynamic loader themselves: that file is library use, judged as such.
    CHECK(loads_code_at_run_time({{"dlopen", 'U'}, {"dlsym", 'U'}}, true).empty());
    CHECK(contains(loads_code_at_run_time({{"dlopen", 'U'}, {"cuModuleLoadData", 'U'}}, true), "`cuModuleLoadData`"));
}

TEST_CASE("the fake toolchain builds through the same steps: objects nm reads, dependency lists, a trailer")
{
    Toolchain fake = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    fake.nvcc = GRADER_FAKE_NVCC;
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
    std::ifstream stub(repository / "exercises" / "scan_kogge_stone" / "scan_kogge_stone.cu");
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
    CHECK(contains(b->invalid, "which loads GPU code at run time: every kernel must be compiled from the submitted file"));
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
    REQUIRE_FALSE(results[0].dependencies.empty());
    CHECK(results[0].dependencies.front() == "/submission/scan_kogge_stone.cu");
    INFO("outside: " << results[1].failure << results[1].invalid << "\n" << results[1].output);
    CHECK_FALSE(results[1].ok);
    CHECK(results[1].failure == "compile error");
    CHECK(contains(results[1].output, "secret.h"));
}

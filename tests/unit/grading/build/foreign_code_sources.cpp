// The sources of foreign_code_sources.hpp, by concern, and their build: once per test program, all
// at the same time, each file in its own folder under the name grade would give it.
#include "foreign_code_sources.hpp"

#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "harness/process.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using grading::BuildResult;

namespace foreign_code {
namespace {

const fs::path repository = test_support::repository();

struct Source {
    std::string name;
    std::string file = "scan_kogge_stone.cu";  // the exercise's file name (the reference PTX's)
    std::string text;
    bool refuse = true;  // the toolchain's refuse_foreign_code
};

const std::string launcher_head = "#include <cuda_runtime.h>\n#include <cstdio>\n";
const std::string kernel =
    "namespace {\n__global__ void copy(const float* in, float* out, int n) {\n"
    "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = in[i];\n}\n}\n";
std::string launcher(const std::string& body)
{
    return "void scan_kogge_stone(const float* in, float* out, int n) {\n" + body +
           "    copy<<<(n + 255) / 256, 256>>>(in, out, n);\n}\n";
}

using test_support::file_text;

// 8 KiB of pseudo-random bytes as a C array: encrypted-looking data.
std::string random_table()
{
    std::mt19937 random(20261124);
    std::ostringstream text;
    text << "static const unsigned char table[8192] = {";
    for (int k = 0; k < 8192; ++k) text << (k ? "," : "") << (random() & 0xff);
    text << "};\n";
    return text.str();
}

std::vector<Source> sources(const fs::path& cubin)
{
    std::vector<Source> s;
    // ---- Host calls (test_host_calls.cpp) ----
    s.push_back({"honest_temporaries", "scan_kogge_stone.cu",
                 launcher_head + "#include <algorithm>\n#include <cmath>\n#include <vector>\n" + kernel +
                     launcher("    float* temp = nullptr;\n"
                              "    if (cudaMalloc(&temp, sizeof(float) * (n + 1)) != cudaSuccess) {\n"
                              "        std::fprintf(stderr, \"%s\\n\", cudaGetErrorString(cudaGetLastError()));\n"
                              "        return;\n    }\n"
                              "    std::vector<float> host(4, std::sqrt(static_cast<float>(n)));\n"
                              "    std::sort(host.begin(), host.end());\n"
                              "    cudaMemcpy(temp, host.data(), sizeof(float) * 4, cudaMemcpyHostToDevice);\n"
                              "    if (n < 0) std::printf(\"%f\\n\", host[0]);\n"
                              "    cudaDeviceSynchronize();\n    cudaFree(temp);\n")});
    s.push_back({"calls_thread", "scan_kogge_stone.cu",
                 launcher_head + "#include <thread>\n" + kernel +
                     launcher("    std::thread helper([] {});\n    helper.join();\n")});
    s.push_back({"calls_thread_named", "scan_kogge_stone.cu", s.back().text, false});
    s.push_back({"calls_dlsym", "scan_kogge_stone.cu",
                 launcher_head + "#include <dlfcn.h>\n" + kernel +
                     launcher("    void* f = dlsym(RTLD_DEFAULT, \"cuda\" \"Malloc\");\n"
                              "    if (f == nullptr) return;\n")});
    s.push_back({"calls_mprotect", "scan_kogge_stone.cu",
                 launcher_head + "#include <sys/mman.h>\n" + kernel +
                     launcher("    static char page[8192];\n"
                              "    mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC);\n")});
    s.push_back({"calls_fopen", "scan_kogge_stone.cu",
                 launcher_head + kernel +
                     launcher("    if (std::FILE* f = std::fopen(\"notes.txt\", \"w\")) std::fclose(f);\n")});
    s.push_back({"calls_syscall", "scan_kogge_stone.cu",
                 launcher_head + "#include <sys/syscall.h>\n#include <unistd.h>\n" + kernel +
                     launcher("    syscall(SYS_getpid);\n")});
    s.push_back({"calls_getenv", "scan_kogge_stone.cu",
                 launcher_head + "#include <cstdlib>\n" + kernel +
                     launcher("    if (std::getenv(\"GRADER_DEBUG\")) std::puts(\"debug\");\n")});

    // ---- Initializers (test_initializers.cpp) ----
    s.push_back({"constructor_attribute", "scan_kogge_stone.cu",
                 launcher_head + kernel + "__attribute__((constructor)) static void early() { std::puts(\"hi\"); }\n" +
                     launcher("")});
    s.push_back({"global_object", "scan_kogge_stone.cu",
                 launcher_head + kernel +
                     "namespace {\nstruct Hello {\n    __attribute__((noinline)) Hello() { std::puts(\"before main\"); }\n} hello;\n}\n" +
                     launcher("")});
    s.push_back({"global_library_objects", "scan_kogge_stone.cu",
                 launcher_head + "#include <iostream>\n#include <map>\n#include <string>\n#include <vector>\n" +
                     kernel +
                     "namespace {\nstd::map<int, float*> scratch_of;\nstd::vector<float> table(1024, 1.0f);\n"
                     "std::string label = \"a label longer than the small-string buffer\";\n}\n" +
                     launcher("    scratch_of[n] = nullptr;\n    if (n < 0) std::cout << table[0] << label;\n")});
    s.push_back({"global_vector_of_own_type", "scan_kogge_stone.cu",
                 launcher_head + "#include <vector>\n" + kernel +
                     "namespace {\nstruct Counter {\n    __attribute__((noinline)) Counter() { std::puts(\"counted\"); }\n    int value = 0;\n};\n"
                     "std::vector<Counter> counters(3);\n}\n" +
                     launcher("    if (n < 0) std::printf(\"%d\", counters[0].value);\n")});

    // ---- Embedded code (test_embedded.cpp) ----
    s.push_back({"incbin_cubin", "scan_kogge_stone.cu",
                 launcher_head + kernel + "asm(\".pushsection .rodata\\n.incbin \\\"" + cubin.string() +
                     "\\\"\\n.popsection\");\n" + launcher("")});
    s.push_back({"ptx_string", "scan_kogge_stone.cu",
                 launcher_head + kernel +
                     "const char* volatile ptx = \".version 8.0\\n.target sm_90\\n.address_size 64\\n"
                     ".visible .entry k() { ret; }\\n\";\n" +
                     launcher("    if (n < 0) std::puts(ptx);\n")});
    s.push_back({"fatbin_magic", "scan_kogge_stone.cu",
                 launcher_head + kernel +
                     "alignas(8) const unsigned char blob[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0};\n"
                     "const unsigned char* volatile keep = blob;\n" +
                     launcher("")});
    s.push_back({"random_table", "scan_kogge_stone.cu",
                 launcher_head + kernel + random_table() + launcher("    if (n < 0) std::printf(\"%d\", table[n & 8191]);\n")});
    s.push_back({"register_by_hand", "scan_kogge_stone.cu",
                 launcher_head + kernel + "extern \"C\" void** __cudaRegisterFatBinary(void* fatCubin);\n" +
                     "namespace {\nstruct { int magic, version; const void* data; void* unused; } wrapper;\n}\n" +
                     launcher("    static void** handle = __cudaRegisterFatBinary(&wrapper);\n"
                              "    if (handle == nullptr) return;\n")});
    s.push_back({"syscall_instruction", "scan_kogge_stone.cu",
                 launcher_head + kernel +
                     launcher("#if defined(__x86_64__)\n    long r;\n"
                              "    asm volatile(\"syscall\" : \"=a\"(r) : \"a\"(39L) : \"rcx\", \"r11\", \"memory\");\n"
                              "#elif defined(__aarch64__)\n    asm volatile(\"mov x8, #172\\n svc #0\" ::: \"x0\", \"x8\", \"memory\");\n"
                              "#endif\n")});

    // ---- The PTX against the reference's (test_similarity.cpp) ----
    s.push_back({"pasted_reference_ptx", "scan_hierarchical.cu",
                 file_text(repository / "tests/adversarial/scan_hierarchical/pasted_reference_ptx/scan_hierarchical.cu")});
    s.push_back({"independent_hierarchical", "scan_hierarchical.cu",
                 file_text(repository / "tests/buggy/scan_hierarchical/two_levels_only/scan_hierarchical.cu")});
    s.push_back({"reference_hierarchical", "scan_hierarchical.cu", file_text(repository / "reference/scan_hierarchical.cu")});
    return s;
}

struct Build {
    std::string skip;
    fs::path dir;
    std::map<std::string, BuildResult> results;
    ~Build()
    {
        std::error_code ignored;
        if (!dir.empty()) fs::remove_all(dir, ignored);
    }
};

Build& build()
{
    static Build b;
    static std::once_flag once;
    std::call_once(once, [] {
        grading::Toolchain toolchain = grading::default_toolchain(fs::read_symlink("/proc/self/exe").string());
        if (::access(toolchain.nvcc.c_str(), X_OK) != 0) {
            b.skip = "no nvcc at " + toolchain.nvcc + " (the CUDA compiler CMake found): the real objects are not tested";
            return;
        }
        b.dir = fs::temp_directory_path() / ("grader_test_foreign_code_" + std::to_string(getpid()));
        fs::remove_all(b.dir);
        fs::create_directories(b.dir);
        // A GPU binary of someone else's, for the file that embeds one.
        const fs::path cubin = b.dir / "other.cubin";
        std::ofstream(b.dir / "other.cu") << "extern \"C\" __global__ void other(float* x) { x[threadIdx.x] = 1; }\n";
        harness::run_command({toolchain.nvcc, "-cubin", "-arch=sm_" + toolchain.arch, "-o", cubin.string(),
                              (b.dir / "other.cu").string()},
                             std::chrono::seconds(120), 1u << 20);
        std::vector<std::pair<std::string, std::string>> work[2];
        std::vector<std::string> names[2];
        for (const auto& source : sources(cubin)) {
            const fs::path sub = b.dir / source.name;
            fs::create_directories(sub / "work");
            std::ofstream(sub / source.file) << source.text;
            const int k = source.refuse ? 0 : 1;
            work[k].emplace_back((sub / source.file).string(), (sub / "work" / "runner").string());
            names[k].push_back(source.name);
        }
        const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        for (int k = 0; k < 2; ++k) {
            toolchain.refuse_foreign_code = k == 0;
            const auto results = grading::check_sources(toolchain, work[k], jobs, nullptr);
            for (std::size_t j = 0; j < results.size(); ++j) b.results[names[k][j]] = results[j];
        }
    });
    return b;
}

}  // namespace

const BuildResult* result(const std::string& name)
{
    Build& b = build();
    if (!b.skip.empty()) {
        MESSAGE("skipped: " << b.skip);
        return nullptr;
    }
    return &b.results.at(name);
}

std::string findings(const BuildResult& b)
{
    std::string text = b.failure + b.invalid + (b.failure.empty() ? "" : "\n" + b.output);
    for (const auto& f : b.code_findings) text += "\n    " + f;
    for (const auto& f : b.not_checked) text += "\n    not checked: " + f;
    return text;
}

bool any_finding(const BuildResult& b, const std::string& part)
{
    for (const auto& f : b.code_findings)
        if (f.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace foreign_code

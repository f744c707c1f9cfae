#include "grading/build.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "grader_config.hpp"
#include "harness/process.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

// Source with comments and string literals blanked, so a mention in a comment is not a use.
std::string strip_comments_and_strings(const std::string& s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 2, "//") == 0) {
            while (i < s.size() && s[i] != '\n') ++i;
            out += '\n';
        } else if (s.compare(i, 2, "/*") == 0) {
            const std::size_t end = s.find("*/", i + 2);
            i = end == std::string::npos ? s.size() : end + 1;
            out += ' ';
        } else if (s[i] == '"') {
            // Keep #include "..." paths: they name headers.
            const bool include_line = out.rfind("#include") != std::string::npos &&
                                      out.find('\n', out.rfind("#include")) == std::string::npos;
            std::size_t j = i + 1;
            while (j < s.size() && s[j] != '"' && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
            out += include_line ? s.substr(i, j - i + 1) : "\"\"";
            i = j;
        } else {
            out += s[i];
        }
    }
    return out;
}

}  // namespace

std::vector<SubmissionFile> find_submission(const std::string& directory, const std::vector<std::string>& exercises)
{
    std::map<std::string, std::vector<std::string>> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(directory, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file()) continue;   // follows links: a linked file is found, then refused
        const fs::path& p = it->path();
        if (p.extension() == ".cu") found[p.stem().string()].push_back(p.string());
    }
    std::vector<SubmissionFile> files;
    for (const auto& name : exercises) {
        SubmissionFile file{name, {}, {}};
        auto hit = found.find(name);
        if (hit != found.end()) {
            std::sort(hit->second.begin(), hit->second.end());
            file.path = hit->second.front();
            if (hit->second.size() > 1) file.duplicates = hit->second;
            file.symlink = fs::is_symlink(file.path);
        }
        files.push_back(file);
    }
    return files;
}

std::vector<std::string> detect_library_use(const std::string& source)
{
    const std::string code = strip_comments_and_strings(source);
    const std::pair<const char*, const char*> patterns[] = {
        {"CUB", R"((#\s*include\s*[<"]cub/)|(\bcub::))"},
        {"Thrust", R"((#\s*include\s*[<"]thrust/)|(\bthrust::))"},
        {"cuBLAS", R"((#\s*include\s*[<"]cublas)|(\bcublas[A-Z]\w*\s*\())"},
        {"cuDNN", R"((#\s*include\s*[<"]cudnn)|(\bcudnn[A-Z]\w*\s*\())"},
        {"cuda::std algorithms", R"(#\s*include\s*[<"]cuda/std/(numeric|algorithm))"},
        // Each file is compiled on its own: an include by path reaches outside the submission.
        {"a file outside the submission (#include by path)", R"(#\s*include\s*"(/|[^"]*\.\./))"},
    };
    std::vector<std::string> used;
    for (const auto& [name, pattern] : patterns)
        if (std::regex_search(code, std::regex(pattern))) used.push_back(name);
    return used;
}

std::vector<std::string> detect_library_symbols(const std::string& bytes)
{
    // Itanium mangling: a namespace appears as <length><name> after N, e.g. _ZN3cub..., N6thrust...
    const std::pair<const char*, std::vector<std::string>> libraries[] = {
        {"CUB", {"N3cub", "_ZN3cub"}},
        {"Thrust", {"N6thrust", "_ZN6thrust"}},
        {"cuBLAS", {"cublasCreate", "cublasDdot", "cublasSasum"}},
    };
    std::vector<std::string> found;
    for (const auto& [name, needles] : libraries)
        for (const auto& needle : needles)
            if (bytes.find(needle) != std::string::npos) {
                found.push_back(name);
                break;
            }
    return found;
}

Toolchain default_toolchain(const std::string& grade_executable)
{
    const fs::path lib = fs::weakly_canonical(fs::path(grade_executable)).parent_path().parent_path() / "lib";
    Toolchain t;
    t.nvcc = GRADER_NVCC;
    t.arch = GRADER_CUDA_ARCH;
    t.runner_library = (lib / "libgrader_runner.a").string();
    t.harness_library = (lib / "libharness.a").string();
    return t;
}

std::vector<std::string> runner_compile_command(const Toolchain& t, const std::string& source,
                                                const std::string& executable)
{
    return {t.nvcc, "-O3", "-std=c++17", "-lineinfo", "-arch=sm_" + t.arch, "-cudart", "static",
            "-o", executable, source, t.runner_library, t.harness_library};
}

std::vector<BuildResult> build_runners(const Toolchain& toolchain,
                                       const std::vector<std::pair<std::string, std::string>>& work, int jobs)
{
    std::vector<BuildResult> results(work.size());
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t k; (k = next++) < work.size();) {
            const auto& [source, executable] = work[k];
            const auto command = runner_compile_command(toolchain, source, executable);
            const harness::CommandResult r = harness::run_command(command, toolchain.compile_limit, 64 * 1024);
            BuildResult& b = results[k];
            b.executable = executable;
            b.output = r.output;
            b.seconds = r.seconds;
            b.ok = r.status.ok() && fs::exists(executable);
            if (!b.ok)
                b.failure = r.status.kind == harness::ExitStatus::Kind::timed_out ? "the compiler timed out"
                            : r.status.kind == harness::ExitStatus::Kind::failed_to_start
                                ? "the compiler could not be started: " + r.status.error
                                : "compile error";
        }
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < std::max(1, jobs); ++i) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    return results;
}

}  // namespace grading

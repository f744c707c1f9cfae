#include "grading/build.hpp"

#include <cxxabi.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grader_config.hpp"
#include "harness/exercise.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

using Clock = std::chrono::steady_clock;

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

// Reads a whole file that must not be a symbolic link (a build step could have left one where
// the grader expects its output). False when it is missing, a link, not a regular file, or larger
// than `max_bytes`.
bool read_file_nofollow(const std::string& path, std::size_t max_bytes, std::string& out)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > max_bytes) {
        ::close(fd);
        return false;
    }
    out.clear();
    char buffer[1 << 16];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        out.append(buffer, static_cast<std::size_t>(got));
        if (out.size() > max_bytes) {
            ::close(fd);
            return false;
        }
    }
    ::close(fd);
    return true;
}

std::string tail(const std::string& text, std::size_t max_bytes)
{
    return text.size() <= max_bytes ? text : text.substr(text.size() - max_bytes);
}

// One child process to completion: its status, its whole output (up to `max_output`, else
// `complete` is false and the tail is kept) and its wall time.
struct StepResult {
    harness::ExitStatus status;
    std::string output;
    bool complete = true;
    double seconds = 0;
};

StepResult run_process(const harness::SpawnOptions& options, std::chrono::milliseconds limit, std::size_t max_output)
{
    StepResult r;
    const auto start = Clock::now();
    try {
        harness::Child child = harness::Child::spawn(options);
        r.status = child.wait_until(start + limit);
    } catch (const std::exception& e) {
        r.status.kind = harness::ExitStatus::Kind::failed_to_start;
        r.status.error = e.what();
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!options.output_file.empty() && !read_file_nofollow(options.output_file, max_output, r.output)) {
        r.output = harness::read_file_tail(options.output_file, max_output);
        r.complete = false;
    }
    return r;
}

// A grader-side command on the grader's own files (nm on the runner object, g++ -print-file-name):
// no sandbox, output through a private temporary file.
StepResult run_trusted(const std::vector<std::string>& argv, std::size_t max_output = 256u << 20)
{
    const char* tmpdir = std::getenv("TMPDIR");
    std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/grader-build-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + path);
    ::close(fd);
    harness::SpawnOptions options;
    options.argv = argv;
    options.output_file = path;
    options.limits.max_file_bytes = max_output + 1;
    StepResult r = run_process(options, std::chrono::seconds(60), max_output);
    ::unlink(path.c_str());
    return r;
}

std::string trim(std::string s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t start = 0;
    while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
    return s.substr(start);
}

bool is_digits(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// How nm's type letter counts: a definition (strong or weak), a reference, or nothing (local,
// debugging).
enum class SymbolKind { strong, weak, undefined, ignored };

SymbolKind kind_of(char type)
{
    switch (type) {
        case 'U':
        case 'w':
        case 'v':
            return SymbolKind::undefined;
        case 'W':
        case 'V':
        case 'u':
            return SymbolKind::weak;
        case 'N':
        case '-':
            return SymbolKind::ignored;
        case 'i':
        case '?':
            return SymbolKind::strong;  // an indirect function; an unknown kind: count it
        default:
            return std::isupper(static_cast<unsigned char>(type)) ? SymbolKind::strong : SymbolKind::ignored;
    }
}

// "write@@GLIBC_2.2.5" -> "write".
std::string unversioned(const std::string& name)
{
    const std::size_t at = name.find('@');
    return at == std::string::npos || at == 0 ? name : name.substr(0, at);
}

bool is_cpp_name(const std::string& name)
{
    return name.rfind("_Z", 0) == 0;
}

// Only names that came from the grader's own files (or plain C names) reach the demangler.
std::string demangle(const std::string& name)
{
    if (!is_cpp_name(name)) return name;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                std::free);
    return status == 0 && text ? std::string(text.get()) : name;
}

bool is_cuda_entry_point(const std::string& name)
{
    if (is_cpp_name(name)) return false;
    if (name.rfind("cuda", 0) == 0 || name.rfind("__cuda", 0) == 0) return true;
    return name.size() > 2 && name[0] == 'c' && name[1] == 'u' && std::isupper(static_cast<unsigned char>(name[2]));
}

std::vector<Symbol> nm_symbols(const std::vector<std::string>& argv, const std::string& what)
{
    const StepResult r = run_trusted(argv);
    if (!r.status.ok() || !r.complete)
        throw std::runtime_error("cannot read the symbols of " + what + " (" + r.status.describe() +
                                 "): " + tail(r.output, 2000));
    return parse_nm(r.output);
}

// The first existing file among `candidates` (empty if none).
std::string first_existing(const std::vector<fs::path>& candidates)
{
    std::error_code ec;
    for (const auto& p : candidates)
        if (fs::is_regular_file(p, ec)) return p.string();
    return {};
}

bool under(const std::string& path, const std::string& root)
{
    if (root.empty()) return false;
    if (root == "/") return true;
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

std::string resolved(const std::string& path)
{
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::path(path), ec);
    return ec ? fs::path(path).lexically_normal().string() : p.string();
}

// ---- One file's build ----

struct Context {
    Toolchain toolchain;
    std::string root;                // the toolchain's root, real path
    std::string sandbox_nvcc;        // nvcc under the real root (what the sandbox sees)
    std::vector<std::string> roots;  // header roots
    ForbiddenSymbols forbidden;
    const harness::Sandbox* sandbox = nullptr;
};

// Limits on one build step: an honest compile of the course's files needs far less. The step's
// whole tree (nvcc and every compiler it starts) shares one bound on processes and one on memory
// (a control group, where the machine has them: harness/cgroup.hpp): an even share of the
// machine's memory per core, so that as many builds as cores (--jobs' default) fit side by side,
// between 2 and 8 GiB (a compile that includes CUB takes about 0.6 GiB in all).
harness::ProcessLimits build_limits(const Toolchain& toolchain, bool sandboxed)
{
    harness::ProcessLimits limits;
    limits.max_file_bytes = 256ul << 20;         // an object or a runner: a few MiB honestly
    limits.max_processes = sandboxed ? 512 : 0;  // RLIMIT_NPROC counts the user's processes (the sandbox's
                                                 // control group replaces it where there is one)
    limits.max_open_files = 1024;
    limits.cpu_seconds = static_cast<unsigned long>(std::max<long long>(1, toolchain.compile_limit.count()));
    limits.max_data_bytes = 16ull << 30;  // per process, of address space: cicc on heavy templates takes a few GiB
    limits.tree_processes = 512;
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    const unsigned long long memory =
        pages > 0 && page > 0 ? static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page) : 0;
    const unsigned long long share = memory / std::max(1u, std::thread::hardware_concurrency());
    limits.tree_memory_bytes = memory == 0 ? 8ull << 30 : std::clamp(share, 2ull << 30, 8ull << 30);
    return limits;
}

struct StepPlan {
    std::vector<std::string> argv;
    std::vector<harness::SandboxMount> mounts;
    std::string host_working_dir;
    std::string log;  // host path of the step's combined output
    std::chrono::milliseconds limit;
    std::size_t max_output;
};

StepResult run_step(const Context& ctx, const StepPlan& plan)
{
    harness::SpawnOptions inner;
    inner.argv = plan.argv;
    inner.output_file = plan.log;
    inner.limits = build_limits(ctx.toolchain, ctx.sandbox != nullptr);
    if (ctx.sandbox == nullptr) {
        inner.working_dir = plan.host_working_dir;
        return run_process(inner, plan.limit, plan.max_output);
    }
    harness::SandboxPolicy policy;
    policy.mounts = plan.mounts;
    policy.system_paths_extra = {ctx.root};
    policy.gpu = false;
    policy.working_dir = "/out";
    policy.env = {"PATH=" + ctx.root + "/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LC_ALL=C"};
    policy.tmp_bytes = 2ull << 30;  // nvcc's intermediate files
    policy.limits = inner.limits;
    return run_process(ctx.sandbox->wrap(inner, policy), plan.limit, plan.max_output);
}

std::string step_failure(const StepResult& r, const std::string& tool, const std::string& error)
{
    using Kind = harness::ExitStatus::Kind;
    switch (r.status.kind) {
        case Kind::timed_out:
            return "the " + tool + " timed out";
        case Kind::failed_to_start:
            return "the " + tool + " could not be started: " + r.status.error;
        case Kind::signaled:
            return "the " + tool + " was stopped by " + r.status.describe();
        case Kind::exited:
            break;
    }
    return error;
}

void add_unique(std::vector<std::string>& list, const std::string& item)
{
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

constexpr std::size_t max_messages = 64 * 1024;

BuildResult build_one(const Context& ctx, const std::string& source, const std::string& executable)
{
    BuildResult b;
    b.executable = executable;
    const auto started = Clock::now();
    auto finish = [&]() -> BuildResult {
        b.seconds = std::chrono::duration<double>(Clock::now() - started).count();
        return b;
    };

    const fs::path dir = fs::path(executable).parent_path();
    const fs::path out = dir / "build";
    fs::remove_all(out);
    fs::create_directories(out);
    if (ctx.sandbox != nullptr) ctx.sandbox->make_writable(out.string());  // /out, for the sandbox's uid
    fs::remove(executable);  // an earlier grading's runner is never taken for this one's

    // Every path as the step sees it: in the sandbox the source is /submission/<name>, the step's
    // folder /out and the runner object /grader/grader_runner.o; without it, the grader's own paths.
    const bool boxed = ctx.sandbox != nullptr;
    const std::string name = fs::path(source).filename().string();
    const std::string src = boxed ? "/submission/" + name : source;
    const std::string o = boxed ? std::string("/out") : out.string();
    const std::string object = o + "/submission.o", deps = o + "/deps.d", runner = o + "/runner";
    const std::string runner_object = boxed ? std::string("/grader/grader_runner.o") : ctx.toolchain.runner_object;
    const std::string nvcc = boxed ? ctx.sandbox_nvcc : ctx.toolchain.nvcc;
    const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.toolchain.compile_limit);

    // 1. Compile, writing the list of every file the compile read (host and device passes).
    const StepResult compile = run_step(ctx, {compile_command(nvcc, ctx.toolchain.arch, src, object, deps),
                                              {{source, src, false}, {out.string(), "/out", true}},
                                              out.string(),
                                              (dir / "compile.log").string(),
                                              limit,
                                              max_messages});
    b.output = compile.output;
    if (!compile.status.ok()) {
        b.failure = step_failure(compile, "compiler", "compile error");
        return finish();
    }

    // 2. What it read: only the source, the toolchain's headers and the system's.
    std::string deps_text;
    if (!read_file_nofollow((out / "deps.d").string(), 64u << 20, deps_text)) {
        b.failure = "the compiler wrote no dependency list (" + deps + ")";
        return finish();
    }
    b.dependencies = parse_make_dependencies(deps_text);
    const DependencyCheck included = check_dependencies(b.dependencies, src, ctx.roots);
    if (!included.outside.empty()) {
        b.invalid =
            name + " includes " + included.outside.front() +
            (included.outside.size() > 1 ? " (and " + std::to_string(included.outside.size() - 1) + " more)" : "") +
            ", a file outside the submission and outside the compiler's and the system's headers;"
            " a submission is one file";
        return finish();
    }
    b.library_use = included.library_use;

    // 3. What it defines: nothing of the runner's, of the CUDA runtime's or the C/C++ runtime's.
    const StepResult symbols = run_step(ctx, {symbols_command(object),
                                              {{out.string(), "/out", false}},
                                              out.string(),
                                              (dir / "symbols.log").string(),
                                              std::chrono::seconds(60),
                                              256u << 20});
    if (!symbols.status.ok() || !symbols.complete) {
        b.failure =
            step_failure(symbols, "symbol check (nm)", "the symbol check (nm) failed: " + tail(symbols.output, 2000));
        return finish();
    }
    const std::vector<Symbol> symbol_table = parse_nm(symbols.output);
    b.invalid = forbidden_definition(symbol_table, ctx.forbidden);
    if (b.invalid.empty()) b.invalid = loads_code_at_run_time(symbol_table, !b.library_use.empty());
    if (!b.invalid.empty()) {
        b.invalid = name + " " + b.invalid;
        return finish();
    }

    // 4. Link: the runner object first, so its copy of a shared inline function wins, and a
    // duplicate strong definition fails instead of replacing an archive member.
    const StepResult link =
        run_step(ctx, {link_command(nvcc, ctx.toolchain.arch, runner_object, object, runner),
                       {{ctx.toolchain.runner_object, "/grader/grader_runner.o", false}, {out.string(), "/out", true}},
                       out.string(),
                       (dir / "link.log").string(),
                       limit,
                       max_messages});
    if (!trim(link.output).empty())
        b.output = tail(b.output + (b.output.empty() ? "" : "\n") + link.output, max_messages);
    struct stat st {};
    if (!link.status.ok() || ::lstat((out / "runner").c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        b.failure = step_failure(link, "linker", "link error");
        return finish();
    }
    fs::rename(out / "runner", executable);
    // The link step's uid made it; from here on it is the grader's, and nobody's to rewrite.
    if (::chown(executable.c_str(), ::geteuid(), ::getegid()) != 0) { /* not root: it is already ours */
    }
    ::chmod(executable.c_str(), 0555);
    b.ok = true;

    // A second look, at what was linked: CUB's and Thrust's mangled names, however spelled.
    std::string bytes;
    if (read_file_nofollow(executable, 1u << 30, bytes))
        for (const auto& library : detect_library_symbols(bytes)) add_unique(b.library_use, library);
    return finish();
}

}  // namespace

std::vector<SubmissionFile> find_submission(const std::string& directory, const std::vector<std::string>& exercises)
{
    std::map<std::string, std::vector<std::string>> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(directory, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file()) continue;  // follows links: a linked file is found, then refused
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
    t.runner_object = (lib / "grader_runner.o").string();
    return t;
}

std::vector<std::string> compile_command(const std::string& nvcc, const std::string& arch, const std::string& source,
                                         const std::string& object, const std::string& deps_file)
{
    return {nvcc,  "-c",           "-O3", "-std=c++17", "-lineinfo", "-arch=sm_" + arch, "-MD", "-MF", deps_file,
            "-MT", "submission.o", "-o",  object,       source};
}

std::vector<std::string> symbols_command(const std::string& object)
{
    return {"nm", "-P", "-t", "d", object};
}

std::vector<std::string> link_command(const std::string& nvcc, const std::string& arch,
                                      const std::string& runner_object, const std::string& object,
                                      const std::string& executable)
{
    return {nvcc, "-arch=sm_" + arch, "-cudart", "static", "-o", executable, runner_object, object};
}

std::vector<std::string> parse_make_dependencies(const std::string& text)
{
    std::vector<std::string> result;
    std::set<std::string> seen;
    std::string word;
    bool in_target = true;  // before the rule's ':'
    auto flush = [&] {
        if (!word.empty() && !in_target && seen.insert(word).second) result.push_back(word);
        word.clear();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size()) {
            const char next = text[i + 1];
            if (next == '\n' || (next == '\r' && i + 2 < text.size() && text[i + 2] == '\n')) {  // continuation
                flush();
                i += next == '\r' ? 2 : 1;
                continue;
            }
            if (next == ' ' || next == '\t' || next == '#' || next == '\\') {
                word += next;
                ++i;
                continue;
            }
            word += c;
        } else if (c == '\n' || c == '\r') {  // the end of a rule
            flush();
            in_target = true;
        } else if (c == ' ' || c == '\t') {
            flush();
        } else if (c == ':' && in_target &&
                   (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\t' || text[i + 1] == '\n' ||
                    text[i + 1] == '\r')) {
            word.clear();  // the target (nvcc does not escape its spaces)
            in_target = false;
        } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
            word += '$';
            ++i;
        } else {
            word += c;
        }
    }
    flush();
    return result;
}

namespace {

// The program's real path (PATH searched when the name has no slash); empty if not found.
std::string real_program_path(const std::string& program)
{
    fs::path path = program;
    if (program.find('/') == std::string::npos) {
        path.clear();
        const char* env = std::getenv("PATH");
        std::stringstream dirs(env ? env : "");
        std::string d;
        while (std::getline(dirs, d, ':')) {
            if (d.empty()) continue;
            const fs::path candidate = fs::path(d) / program;
            if (::access(candidate.c_str(), X_OK) == 0) {
                path = candidate;
                break;
            }
        }
        if (path.empty()) return {};
    }
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    return ec ? std::string() : real.string();
}

}  // namespace

std::string toolchain_root(const std::string& nvcc)
{
    const std::string real = real_program_path(nvcc);
    return real.empty() ? real : fs::path(real).parent_path().parent_path().string();
}

std::vector<std::string> header_roots(const std::string& root)
{
    std::vector<std::string> roots;
    std::error_code ec;
    auto add = [&](const fs::path& p) {
        if (!fs::is_directory(p, ec)) return;
        add_unique(roots, fs::canonical(p, ec).string());
    };
    if (!root.empty()) {
        add(fs::path(root) / "include");
        for (auto it = fs::directory_iterator(fs::path(root) / "targets", ec); !ec && it != fs::directory_iterator();
             it.increment(ec))
            add(it->path() / "include");
    }
    add("/usr/include");
    add("/usr/lib/gcc");
    return roots;
}

std::string library_of_header(const std::string& path_below_root)
{
    std::vector<std::string> parts;
    for (const auto& part : fs::path(path_below_root)) parts.push_back(part.string());
    if (!parts.empty() && parts[0] == "cccl") parts.erase(parts.begin());  // CUDA 13: include/cccl/{cub,thrust,cuda}
    if (parts.empty()) return {};
    std::string first = parts[0];
    std::transform(first.begin(), first.end(), first.begin(), [](unsigned char c) { return std::tolower(c); });
    if (first == "cub") return "CUB";
    if (first == "thrust") return "Thrust";
    // libcu++'s algorithms as a whole (cuda/std/numeric, cuda/std/algorithm, the numeric ones one by
    // one); its other headers pull in single internal algorithm headers (iter_swap, min) by themselves.
    if (first == "cuda" && parts.size() >= 3 && parts[1] == "std" &&
        (parts[2] == "numeric" || parts[2] == "algorithm" || parts[2] == "__numeric" || parts[2] == "execution" ||
         parts[2] == "__pstl"))
        return "cuda::std algorithms";
    const std::pair<const char*, const char*> prefixes[] = {
        {"cublas", "cuBLAS"}, {"nvblas", "cuBLAS"},     {"cudnn", "cuDNN"},       {"cufft", "cuFFT"},
        {"curand", "cuRAND"}, {"cusparse", "cuSPARSE"}, {"cusolver", "cuSOLVER"}, {"cutensor", "cuTENSOR"},
        {"nvrtc", "NVRTC"},   {"npp", "NPP"},           {"nccl", "NCCL"},
    };
    for (const auto& [prefix, library] : prefixes)
        if (first.rfind(prefix, 0) == 0) return library;
    return {};
}

DependencyCheck check_dependencies(const std::vector<std::string>& dependencies, const std::string& source,
                                   const std::vector<std::string>& roots)
{
    DependencyCheck check;
    const std::string real_source = resolved(source);
    for (const auto& dependency : dependencies) {
        if (dependency.empty()) continue;
        if (dependency == source) continue;
        if (dependency.front() != '/') {  // every path the compile reads is absolute: the source is
            add_unique(check.outside, dependency);
            continue;
        }
        const std::string real = resolved(dependency);
        if (real == real_source) continue;
        const auto root =
            std::find_if(roots.begin(), roots.end(), [&](const std::string& r) { return under(real, r); });
        if (root == roots.end()) {
            add_unique(check.outside, real);
            continue;
        }
        const std::string library = library_of_header(real.substr(root->size() + 1));
        if (!library.empty()) add_unique(check.library_use, library);
    }
    return check;
}

std::vector<Symbol> parse_nm(const std::string& text)
{
    std::vector<Symbol> symbols;
    std::stringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        line = trim(line);
        if (line.empty() || line.back() == ':') continue;  // "lib.a[member.o]:"
        std::vector<std::string> tokens;
        std::size_t start = 0;
        while (start <= line.size()) {
            const std::size_t space = line.find(' ', start);
            tokens.push_back(line.substr(start, space - start));
            if (space == std::string::npos) break;
            start = space + 1;
        }
        // From the right: up to two decimal numbers (value, size), then the one-letter type; the
        // name is everything before it, spaces included.
        std::size_t end = tokens.size();
        for (int k = 0; k < 2 && end > 0 && is_digits(tokens[end - 1]); ++k) --end;
        if (end < 2 || tokens[end - 1].size() != 1) continue;
        Symbol s;
        s.type = tokens[end - 1][0];
        for (std::size_t k = 0; k + 1 < end; ++k) s.name += (k ? " " : "") + tokens[k];
        if (!s.name.empty()) symbols.push_back(std::move(s));
    }
    return symbols;
}

ForbiddenSymbols forbidden_symbols(const std::string& runner_object, const std::string& root)
{
    ForbiddenSymbols f;
    auto add = [&](const std::vector<Symbol>& symbols, const std::string& owner, bool references) {
        for (const auto& s : symbols) {
            const std::string name = unversioned(s.name);
            switch (kind_of(s.type)) {
                case SymbolKind::undefined:
                    if (references) f.referenced.emplace(name, owner);
                    break;
                case SymbolKind::strong:
                case SymbolKind::weak: {
                    auto [it, inserted] = f.defined.emplace(name, ForbiddenSymbols::Definition{true, owner});
                    it->second.weak_only = it->second.weak_only && kind_of(s.type) == SymbolKind::weak;
                    break;
                }
                case SymbolKind::ignored:
                    break;
            }
        }
    };
    std::error_code ec;
    if (!fs::is_regular_file(runner_object, ec))
        throw std::runtime_error("the grader's runner object " + runner_object +
                                 " is missing (build the grader_runner_object target)");
    add(nm_symbols({"nm", "-P", "-t", "d", runner_object}, runner_object), "the grader's runner", true);

    if (!root.empty()) {
        std::vector<fs::path> candidates = {fs::path(root) / "lib64" / "libcudart_static.a",
                                            fs::path(root) / "lib" / "libcudart_static.a"};
        for (auto it = fs::directory_iterator(fs::path(root) / "targets", ec); !ec && it != fs::directory_iterator();
             it.increment(ec))
            candidates.push_back(it->path() / "lib" / "libcudart_static.a");
        const std::string cudart = first_existing(candidates);
        if (!cudart.empty()) add(nm_symbols({"nm", "-P", "-t", "d", cudart}, cudart), "the CUDA runtime", true);
    }

    // The C/C++ runtime the host link uses, as the host compiler finds it: what the runner's
    // libraries call among themselves (malloc, open, dlsym, ...) is interposed by a definition in
    // the executable. (Not libm: what the runner calls of it is in its references, and a global
    // variable named like a Bessel function, y1, should not cost a student the exercise.)
    for (const char* library :
         {"libc.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1"}) {
        const StepResult where = run_trusted({"g++", std::string("-print-file-name=") + library}, 1u << 16);
        const std::string path = trim(where.output);
        if (!where.status.ok() || path.empty() || path.front() != '/' || !fs::is_regular_file(path, ec)) continue;
        add(nm_symbols({"nm", "-D", "-P", "-t", "d", "--defined-only", path}, path),
            std::string("the C/C++ runtime (") + library + ")", false);
    }

    for (const auto& e : harness::all_exercises())
        f.launcher_prefixes.push_back("_Z" + std::to_string(e.name.size()) + e.name);
    return f;
}

std::string loads_code_at_run_time(const std::vector<Symbol>& submission, bool reads_a_library)
{
    // Module and library loading of the runtime and the driver, and the driver's entry points:
    // ways to run GPU code this file does not compile.
    static const std::set<std::string> loaders = {"cudaLibraryLoadData",
                                                  "cudaLibraryLoadFromFile",
                                                  "cudaLibraryGetKernel",
                                                  "cudaLibraryGetGlobal",
                                                  "cudaLibraryEnumerateKernels",
                                                  "cudaGetDriverEntryPoint",
                                                  "cudaGetDriverEntryPointByVersion",
                                                  "cuModuleLoad",
                                                  "cuModuleLoadData",
                                                  "cuModuleLoadDataEx",
                                                  "cuModuleLoadFatBinary",
                                                  "cuModuleGetFunction",
                                                  "cuLibraryLoadData",
                                                  "cuLibraryLoadFromFile",
                                                  "cuLibraryGetKernel",
                                                  "cuGetProcAddress",
                                                  "cuGetProcAddress_v2",
                                                  "cuLinkCreate",
                                                  "cuLinkCreate_v2"};
    // The dynamic loader, which reaches the driver's loaders too. CUB opens the driver with it, so
    // a file that reads a library's headers is judged as library use instead.
    static const std::set<std::string> dynamic_loader = {"dlopen", "dlmopen", "dlsym", "dlvsym"};
    for (const auto& s : submission) {
        if (kind_of(s.type) != SymbolKind::undefined) continue;
        const std::string name = unversioned(s.name);
        if (loaders.count(name) || (!reads_a_library && dynamic_loader.count(name)))
            return "calls `" + name +
                   "`, which loads GPU code at run time: every kernel must be compiled from the submitted file";
    }
    return {};
}

std::string forbidden_definition(const std::vector<Symbol>& submission, const ForbiddenSymbols& f)
{
    std::vector<std::string> reasons;
    std::set<std::string> named;
    for (const auto& s : submission) {
        const SymbolKind kind = kind_of(s.type);
        if (kind != SymbolKind::strong && kind != SymbolKind::weak) continue;
        const std::string name = unversioned(s.name);
        if (!named.insert(name).second) continue;
        std::string why;
        if (name == "main") {
            why = "defines `main`";
        } else if (is_cuda_entry_point(name)) {
            why = "defines `" + name + "`, a CUDA runtime or driver entry point";
        } else {
            const bool launcher =
                is_cpp_name(name) && std::any_of(f.launcher_prefixes.begin(), f.launcher_prefixes.end(),
                                                 [&](const std::string& p) { return name.rfind(p, 0) == 0; });
            const auto reference = f.referenced.find(name);
            const auto definition = f.defined.find(name);
            if (reference != f.referenced.end() && !launcher) {
                why = "defines `" + demangle(name) + "`, which " + reference->second + " calls";
            } else if (definition != f.defined.end()) {
                const bool shared_inline = kind == SymbolKind::weak && definition->second.weak_only &&
                                           (is_cpp_name(name) || name.rfind("DW.ref.", 0) == 0);
                if (!shared_inline)
                    why = "defines `" + demangle(name) + "`, which " + definition->second.owner + " defines";
            }
        }
        if (!why.empty()) reasons.push_back(why);
    }
    if (reasons.empty()) return {};
    std::string message = reasons.front();
    if (reasons.size() > 1) message += " (and " + std::to_string(reasons.size() - 1) + " more such symbols)";
    return message + ": a submission defines only its launcher and its own kernels and helpers";
}

std::vector<BuildResult> build_runners(const Toolchain& toolchain,
                                       const std::vector<std::pair<std::string, std::string>>& work, int jobs,
                                       const harness::Sandbox* sandbox,
                                       const std::function<void(std::size_t, const BuildResult&)>& built)
{
    std::vector<BuildResult> results(work.size());
    if (work.empty()) return results;
    Context ctx;
    ctx.toolchain = toolchain;
    ctx.sandbox = sandbox;
    ctx.root = toolchain_root(toolchain.nvcc);
    ctx.sandbox_nvcc = real_program_path(toolchain.nvcc);  // under the root, which the sandbox shows
    if (ctx.sandbox_nvcc.empty()) ctx.sandbox_nvcc = toolchain.nvcc;
    ctx.roots = header_roots(ctx.root);
    ctx.forbidden = forbidden_symbols(toolchain.runner_object, ctx.root);

    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t k; (k = next++) < work.size();) {
            const auto& [source, executable] = work[k];
            try {
                results[k] = build_one(ctx, source, executable);
            } catch (const std::exception& e) {  // the grader's own trouble (disk full, ...): this file only
                results[k] = BuildResult{};
                results[k].executable = executable;
                results[k].failure = std::string("the grader could not build this file: ") + e.what();
            }
            if (built) built(k, results[k]);
        }
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < std::max(1, std::min<int>(jobs, static_cast<int>(work.size()))); ++i)
        threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    return results;
}

}  // namespace grading

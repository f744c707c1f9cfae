// The build steps: one file's compile, dependency check, symbol check and link, each a child
// process with a time limit (in the sandbox unless there is none), and the files built side by side.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <sys/stat.h>
#include <unistd.h>

#include "grading/build.hpp"
#include "harness/parallel.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "harness/text.hpp"
#include "limits.hpp"
#include "symbol_names.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t max_messages = 64 * 1024;  // of the compiler's and the linker's, together
constexpr std::size_t max_object_bytes = 256u << 20;  // an object (or kept file) the checks read whole
constexpr std::size_t max_disassembly = 64u << 20;    // objdump's text of the host code
constexpr std::size_t max_findings = 32;              // of each kind (refused, named) in code_findings

// The last `max_bytes` of valid UTF-8 text, cut between two characters.
std::string tail_text(const std::string& text, std::size_t max_bytes)
{
    if (text.size() <= max_bytes) return text;
    std::size_t start = text.size() - max_bytes;
    while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
    return text.substr(start);
}

// The whole of a file a step wrote: nullopt when it is missing, a link or not a regular file, or
// larger than `max_bytes`. (The step's processes are gone by now: nothing changes it meanwhile.)
std::optional<std::string> whole_file(const std::string& path, std::size_t max_bytes)
{
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    std::string text = harness::read_file_tail(path, max_bytes + 1);
    if (text.size() > max_bytes) return std::nullopt;
    return text;
}

// One step to completion: its status, its output as the step wrote it (up to `max_output`, else
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
    // One byte more than is kept says whether the output was whole.
    r.output = harness::read_file_tail(options.output_file, max_output + 1);
    r.complete = r.output.size() <= max_output;
    if (!r.complete) r.output.erase(0, r.output.size() - max_output);
    return r;
}

struct Context {
    Toolchain toolchain;
    std::string root;                // the toolchain's root, real path
    std::string sandbox_nvcc;        // nvcc under the real root (what the sandbox sees)
    std::vector<std::string> roots;  // header roots
    ForbiddenSymbols forbidden;
    const harness::Sandbox* sandbox = nullptr;
    bool link = true;  // false: check_sources, steps 1 to 4 only
};

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
    inner.limits = detail::build_limits(ctx.toolchain, ctx.sandbox != nullptr);
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

// A file of the build's folder as the step sees it: /out/<name> in the sandbox.
std::string boxed_path(const Context& ctx, const fs::path& out, const std::string& name)
{
    return ctx.sandbox != nullptr ? "/out/" + name : (out / name).string();
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

// The PTX nvcc kept for the file and the hidden reference's PTX of the same exercise, read once for
// the three checks that compare them (foreign code, technique, fingerprint).
struct KeptPtx {
    std::optional<std::string> ptx;        // empty: the compiler kept none
    std::string reference_base;            // <reference_ptx_dir>/<stem>, empty without a reference directory
    std::optional<std::string> reference;  // <reference_base>.ptx
};

KeptPtx read_kept_ptx(const Context& ctx, const std::string& source, const fs::path& out)
{
    const std::string stem = fs::path(source).stem().string();
    KeptPtx kept;
    kept.ptx = whole_file((out / "keep" / (stem + ".ptx")).string(), max_object_bytes);
    if (!ctx.toolchain.reference_ptx_dir.empty()) {
        kept.reference_base = ctx.toolchain.reference_ptx_dir + "/" + stem;
        kept.reference = whole_file(kept.reference_base + ".ptx", max_object_bytes);
    }
    return kept;
}

// The checks of step 4 (docs/security.md, "Code the student did not write"): every finding goes
// into b.code_findings, refused ones first; what could not be checked into b.not_checked; the PTX
// comparison into b.reference. Returns the message that refuses the file (empty: build it).
std::string check_foreign_code(const Context& ctx, BuildResult& b, const std::vector<Symbol>& symbols,
                               const std::string& source, const fs::path& out, const KeptPtx& kept)
{
    const bool library = !b.library_use.empty();
    std::vector<std::string> refused, named;
    // Refused calls, the gravest first: loading or finding code, then (after the object's
    // findings below) processes, memory, files and the grader's own code.
    HostCallCheck calls = check_host_calls(symbols, ctx.forbidden, library);
    std::stable_sort(calls.refused.begin(), calls.refused.end(),
                     [](const HostCall& a, const HostCall& b) { return a.kind < b.kind; });
    auto loads = [](const HostCall& c) {
        return c.kind == HostCallKind::loads_code || c.kind == HostCallKind::finds_symbols;
    };
    for (const auto& c : calls.refused)
        if (loads(c)) refused.push_back(c.message);
    for (const auto& c : calls.named) named.push_back(c.message);

    const std::string stem = fs::path(source).stem().string();
    const std::optional<std::string> object = whole_file((out / "submission.o").string(), max_object_bytes);
    if (!object) {
        refused.push_back("has an object larger than " + std::to_string(max_object_bytes >> 20) +
                          " MiB, more than the checks read");
    } else {
        const std::string fatbin =
            whole_file((out / "keep" / (stem + ".fatbin")).string(), max_object_bytes).value_or(std::string());
        ObjectCheck inside = check_object(*object, fatbin, library);
        refused.insert(refused.end(), inside.refused.begin(), inside.refused.end());
        named.insert(named.end(), inside.named.begin(), inside.named.end());
        b.not_checked.insert(b.not_checked.end(), inside.not_checked.begin(), inside.not_checked.end());
    }

    // Raw system call instructions, from the disassembly of the host code (in the sandbox, as nm).
    const std::vector<std::string> disassemble = disassembly_command(boxed_path(ctx, out, "submission.o"));
    if (disassemble.empty()) {
        b.not_checked.push_back("raw system call instructions (objdump, from binutils, is not installed)");
    } else {
        const StepResult d = run_step(ctx, {disassemble,
                                            {{out.string(), "/out", false}},
                                            out.string(),
                                            (out.parent_path() / "disassembly.log").string(),
                                            std::chrono::seconds(60),
                                            max_disassembly});
        if (!d.status.ok())
            b.not_checked.push_back("raw system call instructions (objdump failed: " + d.status.describe() + ")");
        else if (!d.complete)
            refused.push_back("has more host code than the checks read (its disassembly passes " +
                              std::to_string(max_disassembly >> 20) + " MiB)");
        else
            for (auto& f : raw_system_call_instructions(d.output)) refused.push_back(std::move(f));
    }

    for (const auto& c : calls.refused)
        if (!loads(c)) refused.push_back(c.message);

    // PTX written into inline asm: a hint, for course staff.
    if (const std::optional<std::string> text = whole_file(source, max_source_bytes)) {
        const std::size_t asm_instructions = inline_asm_instructions(*text);
        if (asm_instructions >= substantial_inline_ptx)
            named.push_back("has " + std::to_string(asm_instructions) +
                            " PTX instructions in inline `asm` statements: PTX written by hand, or pasted");
    }

    // The PTX nvcc generated against the hidden reference's of the same exercise.
    if (!kept.ptx) {
        b.reference.note = "the compiler kept no PTX";
    } else if (!kept.reference) {
        b.reference.note = "no PTX of the reference here" +
                           (kept.reference_base.empty() ? "" : " (" + kept.reference_base + ".ptx)");
    } else {
        b.reference = compare_with_reference(*kept.ptx, *kept.reference);
    }
    if (!b.reference.compared) b.not_checked.push_back("the PTX against the reference's: " + b.reference.note);

    // The assembler reading a file at the build (`.incbin "/etc/..."` in inline asm): a file's bytes
    // in the object, which no dependency list names. Read from the front end's output, in which
    // macros, split literals and escapes are resolved.
    if (const std::optional<std::string> host = whole_file((out / "keep" / (stem + ".cudafe1.cpp")).string(),
                                                           max_object_bytes)) {
        const std::vector<std::string> directives = assembler_file_directives(*host);
        if (!directives.empty())
            refused.push_back("has the assembler directive `" + directives.front() +
                              "` in inline `asm`, which reads a file (or builds a directive) while the file is "
                              "built; a submission is its own code");
    } else {
        b.not_checked.push_back("the inline asm's assembler directives: the compiler kept no " + stem +
                                ".cudafe1.cpp");
    }

    // At most max_findings of each, for results.json: the message counts them all.
    auto keep = [&](const std::vector<std::string>& found, const char* what) {
        for (std::size_t k = 0; k < found.size() && k < max_findings; ++k)
            b.code_findings.push_back(harness::valid_text(found[k]));
        if (found.size() > max_findings)
            b.code_findings.push_back("... and " + std::to_string(found.size() - max_findings) + " more " + what);
    };
    keep(refused, "findings like these");
    keep(named, "calls or data named like these");
    if (refused.empty() || !ctx.toolchain.refuse_foreign_code) return {};
    std::string message = refused.front();
    if (refused.size() > 1)
        message += " (and " + std::to_string(refused.size() - 1) + " more finding" + (refused.size() > 2 ? "s" : "") +
                   ": code_findings lists them)";
    return message;
}

// The technique, from the compiled kernel (grading/technique.hpp): the file's PTX beside the
// reference's, the object's calls, and cuobjdump's resource usage where the toolkit has it.
void read_technique(const Context& ctx, BuildResult& b, const std::vector<Symbol>& symbols, const std::string& source,
                    const fs::path& out, const KeptPtx& kept)
{
    const std::string stem = fs::path(source).stem().string();
    std::vector<std::string> referenced;
    for (const auto& s : symbols)
        if (detail::is_reference(s.type)) referenced.push_back(detail::unversioned_name(s.name));
    b.technique = check_technique(stem, kept.ptx, kept.reference, referenced);

    const std::string cuobjdump = ctx.root + "/bin/cuobjdump";
    if (::access(cuobjdump.c_str(), X_OK) != 0) {
        b.technique.resources_not_checked = "not checked: the toolkit has no cuobjdump (" + cuobjdump + ")";
        return;
    }
    const StepResult usage = run_step(ctx, {{cuobjdump, "--dump-resource-usage", boxed_path(ctx, out, "submission.o")},
                                            {{out.string(), "/out", false}},
                                            out.string(),
                                            (out.parent_path() / "resource-usage.log").string(),
                                            std::chrono::seconds(60),
                                            4u << 20});
    if (!usage.status.ok() || !usage.complete) {
        b.technique.resources_not_checked = "not checked: cuobjdump failed (" + usage.status.describe() + ")";
        return;
    }
    for (auto& k : parse_resource_usage(usage.output))
        if (!b.technique.kernels ||
            std::find(b.technique.kernel_names.begin(), b.technique.kernel_names.end(), k.name) !=
                b.technique.kernel_names.end())
            b.technique.resources.push_back(std::move(k));
    if (b.technique.resources.empty())
        b.technique.resources_not_checked = "cuobjdump listed no kernel's resources";
}

// The fingerprint of the file's compiled kernels (KernelFingerprint), for the class step's list of
// near-identical kernels: the SASS where the toolkit has cuobjdump and the reference's SASS is
// beside its PTX (CMake writes it where cuobjdump was found), else the PTX.
void read_fingerprint(const Context& ctx, BuildResult& b, const fs::path& out, const KeptPtx& kept)
{
    const std::string cuobjdump = ctx.root + "/bin/cuobjdump";
    const std::optional<std::string> reference_sass =
        kept.reference_base.empty() ? std::nullopt : whole_file(kept.reference_base + ".sass", max_object_bytes);
    if (reference_sass && ::access(cuobjdump.c_str(), X_OK) == 0) {
        const StepResult sass = run_step(ctx, {{cuobjdump, "-sass", boxed_path(ctx, out, "submission.o")},
                                               {{out.string(), "/out", false}},
                                               out.string(),
                                               (out.parent_path() / "sass.log").string(),
                                               std::chrono::seconds(60),
                                               max_disassembly});
        if (sass.status.ok() && sass.complete) {
            const std::vector<std::string> reference = sass_opcodes(*reference_sass);
            b.fingerprint = fingerprint_kernel(sass_opcodes(sass.output), "sass", &reference);
            return;
        }
    }
    if (!kept.ptx) return;
    const std::vector<std::string> reference = kept.reference ? ptx_opcodes(*kept.reference) : std::vector<std::string>();
    b.fingerprint = fingerprint_kernel(ptx_opcodes(*kept.ptx), "ptx", kept.reference ? &reference : nullptr);
}

BuildResult build_one(const Context& ctx, const std::string& source, const std::string& executable)
{
    BuildResult b;
    b.executable = executable;
    const auto started = Clock::now();
    // What the steps wrote is the submission's text: the messages are made valid UTF-8 (no terminal
    // sequences) here, once, for every report and terminal after.
    auto finish = [&]() -> BuildResult {
        b.failure = harness::valid_text(b.failure);
        b.invalid = harness::valid_text(b.invalid);
        b.seconds = std::chrono::duration<double>(Clock::now() - started).count();
        return b;
    };

    const fs::path dir = fs::path(executable).parent_path();
    const fs::path out = dir / "build";
    fs::remove_all(out);
    fs::create_directories(out / "keep");
    if (ctx.sandbox != nullptr) {  // /out and /out/keep, for the sandbox's uid
        ctx.sandbox->make_writable(out.string());
        ctx.sandbox->make_writable((out / "keep").string());
    }
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

    // The sandbox reads the grader's copy of the file, readable by its uid: a file of mode 0600 (unzip
    // and tar keep the mode a student's machine gave it) is the grader's to read, and was a compile
    // error of the student's ("Permission denied") when bound itself.
    std::string bound_source = source;
    if (boxed) {
        const std::optional<std::string> text = whole_file(source, max_source_bytes);
        if (!text) {
            b.failure = "the grader could not read " + name;
            return finish();
        }
        const fs::path copy = dir / "submitted" / name;
        fs::create_directories(copy.parent_path());
        std::ofstream written(copy, std::ios::binary | std::ios::trunc);
        written << *text;
        written.close();
        if (!written) {
            b.failure = "the grader could not copy " + name + " into its work directory";
            return finish();
        }
        fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                  fs::perms::others_read);
        bound_source = copy.string();
    }

    // 1. Compile, writing the list of every file the compile read (host and device passes).
    const StepResult compile = run_step(ctx, {compile_command(nvcc, ctx.toolchain.arch, src, object, deps, o + "/keep"),
                                              {{bound_source, src, false}, {out.string(), "/out", true}},
                                              out.string(),
                                              (dir / "compile.log").string(),
                                              limit,
                                              max_messages});
    b.output = tail_text(harness::valid_text(compile.output), max_messages);

    // 2. What it read: only the source, the toolchain's headers and the system's. Checked before the
    // compile's status: the compiler writes the list before it compiles, and a compile that read a
    // file outside them (`#include "/etc/passwd"`, an instructor's file below /usr) quotes its lines
    // in its errors and warnings, which the student sees: those messages are withheld.
    const std::optional<std::string> deps_text = whole_file((out / "deps.d").string(), 64u << 20);
    if (deps_text) b.dependencies = parse_make_dependencies(*deps_text);
    // A compile stopped in its preprocessor writes no list: the files its messages name count too.
    std::vector<std::string> read = b.dependencies;
    for (const auto& file : files_named_in_messages(compile.output))
        if (std::find(read.begin(), read.end(), file) == read.end()) read.push_back(file);
    const DependencyCheck included = check_dependencies(read, src, ctx.roots);
    if (!included.outside.empty()) {
        b.output = "(the compiler's messages are withheld: they may quote " + included.outside.front() + ")\n";
        b.invalid =
            name + " includes " + included.outside.front() +
            (included.outside.size() > 1 ? " (and " + std::to_string(included.outside.size() - 1) + " more)" : "") +
            ", a file outside the submission and outside the compiler's and the system's headers;"
            " a submission is one file";
        return finish();
    }
    if (!compile.status.ok()) {
        b.failure = step_failure(compile, "compiler", "compile error");
        return finish();
    }
    // (The source is always on the list: an empty one was not written by the compiler.)
    if (b.dependencies.empty()) {
        b.failure = "the compiler wrote no dependency list (" + deps + ")";
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
        b.failure = step_failure(symbols, "symbol check (nm)",
                                 "the symbol check (nm) failed: " + tail_text(harness::valid_text(symbols.output), 2000));
        return finish();
    }
    const std::vector<Symbol> symbol_table = parse_nm(symbols.output);
    b.invalid = forbidden_definition(symbol_table, ctx.forbidden);
    if (!b.invalid.empty()) {
        b.invalid = name + " " + b.invalid;
        return finish();
    }

    // 4. Code the student did not write: what it calls, what its object holds, the raw system
    // calls in its host code, the PTX against the hidden reference's.
    const KeptPtx kept = read_kept_ptx(ctx, bound_source, out);
    if (const std::string refused = check_foreign_code(ctx, b, symbol_table, bound_source, out, kept);
        !refused.empty()) {
        b.invalid = name + " " + refused;
        return finish();
    }

    read_technique(ctx, b, symbol_table, bound_source, out, kept);
    read_fingerprint(ctx, b, out, kept);

    if (!ctx.link) {
        b.ok = true;
        b.executable.clear();
        return finish();
    }

    // 5. Link: the runner object first, so its copy of a shared inline function wins, and a
    // duplicate strong definition fails instead of replacing an archive member.
    const StepResult link =
        run_step(ctx, {link_command(nvcc, ctx.toolchain.arch, runner_object, object, runner),
                       {{ctx.toolchain.runner_object, "/grader/grader_runner.o", false}, {out.string(), "/out", true}},
                       out.string(),
                       (dir / "link.log").string(),
                       limit,
                       max_messages});
    const std::string link_output = harness::valid_text(link.output);
    if (link_output.find_first_not_of(" \t\r\n") != std::string::npos)
        b.output = tail_text(b.output + (b.output.empty() ? "" : "\n") + link_output, max_messages);
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
    if (const std::optional<std::string> bytes = whole_file(executable, 1u << 30))
        for (const auto& library : detect_library_symbols(*bytes))
            if (std::find(b.library_use.begin(), b.library_use.end(), library) == b.library_use.end())
                b.library_use.push_back(library);
    return finish();
}

}  // namespace

std::vector<std::string> compile_command(const std::string& nvcc, const std::string& arch, const std::string& source,
                                         const std::string& object, const std::string& deps_file,
                                         const std::string& keep_dir)
{
    return {nvcc,     "-c", "-O3",     "-std=c++17", "-lineinfo", "-arch=sm_" + arch, "-MD", "-MF", deps_file,
            "-MT",    "submission.o", "--keep",     "--keep-dir", keep_dir,           "-o",  object, source};
}

std::vector<std::string> symbols_command(const std::string& object)
{
    return {"nm", "-P", "-t", "d", object};
}

std::vector<std::string> disassembly_command(const std::string& object)
{
    if (harness::search_path("objdump").empty()) return {};
    return {"objdump", "-d", "-w", "--no-show-raw-insn", object};
}

std::vector<std::string> link_command(const std::string& nvcc, const std::string& arch,
                                      const std::string& runner_object, const std::string& object,
                                      const std::string& executable)
{
    return {nvcc, "-arch=sm_" + arch, "-cudart", "static", "-o", executable, runner_object, object};
}

namespace {

std::vector<BuildResult> build_all(const Toolchain& toolchain,
                                   const std::vector<std::pair<std::string, std::string>>& work, int jobs,
                                   const harness::Sandbox* sandbox,
                                   const std::function<void(std::size_t, const BuildResult&)>& built, bool link)
{
    if (work.empty()) return {};
    Context ctx;
    ctx.toolchain = toolchain;
    ctx.sandbox = sandbox;
    ctx.link = link;
    ctx.root = toolchain_root(toolchain.nvcc);
    ctx.sandbox_nvcc = detail::real_program_path(toolchain.nvcc);  // under the root, which the sandbox shows
    if (ctx.sandbox_nvcc.empty()) ctx.sandbox_nvcc = toolchain.nvcc;
    ctx.roots = header_roots(ctx.root);
    ctx.forbidden = forbidden_symbols(toolchain.runner_object, ctx.root);

    std::vector<std::size_t> files(work.size());
    std::iota(files.begin(), files.end(), std::size_t{0});
    return harness::parallel_map(files, static_cast<std::size_t>(std::max(jobs, 1)), [&](std::size_t k) {
        const auto& [source, executable] = work[k];
        BuildResult result;
        try {
            result = build_one(ctx, source, executable);
        } catch (const std::exception& e) {  // the grader's own trouble (disk full, ...): this file only
            result.executable = executable;
            result.failure = harness::valid_text(std::string("the grader could not build this file: ") + e.what());
        }
        if (built) built(k, result);
        return result;
    });
}

}  // namespace

std::vector<BuildResult> build_runners(const Toolchain& toolchain,
                                       const std::vector<std::pair<std::string, std::string>>& work, int jobs,
                                       const harness::Sandbox* sandbox,
                                       const std::function<void(std::size_t, const BuildResult&)>& built)
{
    return build_all(toolchain, work, jobs, sandbox, built, true);
}

std::vector<BuildResult> check_sources(const Toolchain& toolchain,
                                       const std::vector<std::pair<std::string, std::string>>& work, int jobs,
                                       const harness::Sandbox* sandbox)
{
    return build_all(toolchain, work, jobs, sandbox, {}, false);
}

}  // namespace grading

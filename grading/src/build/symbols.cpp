// Symbol policy: what a submission's object may define and call, read with nm, against the symbols
// of the runner object, the CUDA runtime and the C/C++ runtime the link uses.
#include <cxxabi.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "grading/build.hpp"
#include "harness/exercise.hpp"
#include "harness/process.hpp"
#include "symbol_names.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

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

// The symbols of one of the grader's own files, read with nm outside the sandbox. Its whole
// output: one larger than a child may write (harness::max_child_file_bytes) stops nm, an error.
std::vector<Symbol> nm_symbols(const std::vector<std::string>& argv, const std::string& what)
{
    const harness::CommandResult r = harness::run_command(argv, std::chrono::seconds(60), harness::max_child_file_bytes);
    if (!r.status.ok())
        throw std::runtime_error("cannot read the symbols of " + what + " (" + r.status.describe() +
                                 "): " + r.output.substr(r.output.size() > 2000 ? r.output.size() - 2000 : 0));
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

}  // namespace

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
        const harness::CommandResult where = harness::run_command(
            {"g++", std::string("-print-file-name=") + library}, std::chrono::seconds(60), 1u << 16);
        const std::string path = trim(where.output);
        if (!where.status.ok() || path.empty() || path.front() != '/' || !fs::is_regular_file(path, ec)) continue;
        add(nm_symbols({"nm", "-D", "-P", "-t", "d", "--defined-only", path}, path),
            std::string("the C/C++ runtime (") + library + ")", false);
    }

    for (const auto& e : harness::all_exercises())
        f.launcher_prefixes.push_back("_Z" + std::to_string(e.name.size()) + e.name);
    return f;
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
        } else if (name == "__gmon_start__" || name == "_init" || name == "_fini" || name.rfind("_ITM_", 0) == 0 ||
                   name == "__register_frame_info" || name == "__deregister_frame_info" ||
                   name == "__libc_csu_init" || name == "__libc_start_main" || name == "_start") {
            // Hooks the C runtime calls before main (crti's _init calls __gmon_start__ when defined,
            // crtbegin's frame_dummy _ITM_registerTMCloneTable).
            why = "defines `" + name + "`, which the C runtime calls before the grader's runner starts";
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

namespace detail {

std::string unversioned_name(const std::string& name)
{
    return unversioned(name);
}

std::string demangled_name(const std::string& name)
{
    return demangle(name);
}

bool is_reference(char nm_type)
{
    return kind_of(nm_type) == SymbolKind::undefined;
}

}  // namespace detail

}  // namespace grading

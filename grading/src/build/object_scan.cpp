// What a submission's object holds besides its own compiled code (docs/security.md, "Code the
// student did not write"), read with elf.hpp:
//   - initializers: .init_array/.preinit_array/.ctors entries (and .fini_array/.dtors, .init,
//     .fini) other than nvcc's registration of the file's kernels, and the compiler's own
//     registration of the destructors of global library objects (std::map, the iostream object);
//   - nvcc's registration functions (__cudaRegisterFatBinary, ...) called from anywhere but the
//     code nvcc generates for them: registering GPU code by hand;
//   - embedded code: the GPU code section (.nv_fatbin) must be the compile's own fatbin byte for
//     byte; elsewhere no ELF header (a cubin has e_machine 190), no fatbin or fatbin wrapper
//     magic, no PTX text, no loader's name as a string; large high-entropy blobs are named;
//   - raw system call instructions in the host code, from objdump's disassembly.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

#include "elf.hpp"
#include "grading/build.hpp"
#include "symbol_names.hpp"

namespace grading {
namespace {

using detail::ElfObject;
using detail::ElfRelocation;
using detail::ElfSymbol;
namespace elf = detail::elf;

bool has_prefix(std::string_view text, std::string_view prefix)
{
    return text.substr(0, prefix.size()) == prefix;
}

std::string shown_symbol(const std::string& name)
{
    return name.empty() ? std::string("an unnamed place") : "`" + detail::demangled_name(name) + "`";
}

std::string hex(std::uint64_t value)
{
    std::ostringstream text;
    text << "0x" << std::hex << value;
    return text.str();
}

// The functions nvcc generates to register and unregister the file's GPU code (crt/host_runtime.h:
// static, so local and mangled as C++; a student's function of the same name and signature in the
// same file is a redefinition, in a namespace another name).
bool is_nvcc_registration(const ElfSymbol& s)
{
    static const std::set<std::string, std::less<>> names = {"_ZL24__sti____cudaRegisterAllv",
                                                             "_ZL31__nv_cudaEntityRegisterCallbackPPv",
                                                             "_ZL26__cudaUnregisterBinaryUtilv"};
    if (s.bind != 0 || s.type != elf::stt_func) return false;  // STB_LOCAL functions only
    std::string_view name = s.name;
    // The compiler's own suffixes of a split function (.cold, .part.N, .isra.N, .constprop.N) only:
    // any other ("...cudaRegisterAllv.x", made with an asm label) is a student's function.
    if (const std::size_t dot = name.find('.'); dot != std::string_view::npos) {
        const std::string_view suffix = name.substr(dot);
        const auto numbered = [&](std::string_view head) {
            return suffix.size() > head.size() && suffix.substr(0, head.size()) == head &&
                   suffix.find_first_not_of("0123456789", head.size()) == std::string_view::npos;
        };
        if (suffix != ".cold" && !numbered(".part.") && !numbered(".isra.") && !numbered(".constprop."))
            return false;
        name = name.substr(0, dot);
    }
    return names.count(name) > 0;
}

bool is_registration_call(std::string_view name)
{
    static const std::set<std::string, std::less<>> names = {
        "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary",
        "__cudaRegisterFunction",  "__cudaRegisterVar",          "__cudaRegisterManagedVar",
        "__cudaRegisterHostVar",   "__cudaRegisterTexture",      "__cudaRegisterSurface",
        "__cudaInitModule"};
    return names.count(name) > 0 || has_prefix(name, "__cudaRegisterLinkedBinary");
}

// Where a relocation made in executable code points, for a reference through a section symbol:
// x86-64's PC-relative forms carry the distance to the end of the 4-byte field (-4).
const ElfSymbol* code_target(const ElfObject& o, const ElfRelocation& r)
{
    if (r.symbol >= o.symbols.size()) return nullptr;
    const ElfSymbol& s = o.symbols[r.symbol];
    if (s.type != elf::stt_section) return &s;
    const std::int64_t bias = o.machine == elf::em_x86_64 ? 4 : 0;
    return o.symbol_at(s.section, s.value + static_cast<std::uint64_t>(r.addend + bias));
}

bool in_executable_section(const ElfObject& o, const ElfSymbol& s)
{
    return s.section != elf::shn_undef && s.section < o.sections.size() &&
           (o.sections[s.section].flags & elf::shf_execinstr) != 0;
}

// What the compiler's initializer of a file's globals may call without running functions of the
// student's: the C++ library (constructing a std::vector or std::map, the iostream object of GCC
// before 13, registering their destructors with __cxa_atexit) and the memory functions it
// inlines. Not the CUDA runtime, printing, or anything of the student's own.
bool library_construction(const std::string& name)
{
    static const std::set<std::string, std::less<>> c_names = {
        "__cxa_atexit", "atexit", "__dso_handle", "_Unwind_Resume", "__stack_chk_fail", "memcpy", "memmove",
        "memset", "memcmp", "strlen", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort",
        "__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw", "__cxa_begin_catch", "__cxa_end_catch",
        "__cxa_rethrow", "__gxx_personality_v0"};
    if (c_names.count(name)) return true;
    const std::string demangled = detail::demangled_name(name);
    if (has_prefix(demangled, "std::") || has_prefix(demangled, "__gnu_cxx::")) return true;
    for (std::string_view op : {"operator new(", "operator new[](", "operator delete(", "operator delete[]("})
        if (has_prefix(demangled, op)) return true;
    return false;
}

// The compiler's initializer of a file's globals: empty when everything it calls, and everything
// those call in turn within this object (a std::vector<T> constructor instantiated here calls T's),
// is library_construction; else the first thing that is not (a constructor of the student's, a
// function). Calls through pointers are not seen (docs/security.md).
// Where `function`'s code ends: its size, or for a symbol of size 0 (hand-written assembly) the
// next symbol of its section, else the section's end.
std::uint64_t function_end(const ElfObject& o, const ElfSymbol& function)
{
    if (function.size > 0) return function.value + function.size;
    std::uint64_t end = function.section < o.sections.size() ? o.sections[function.section].size : function.value + 1;
    if (const auto found = o.defined_in.find(function.section); found != o.defined_in.end())
        for (const std::size_t index : found->second) {
            const std::uint64_t value = o.symbols[index].value;
            if (value > function.value && value < end) end = value;
        }
    return std::max(end, function.value + 1);
}

// The functions of the object that `function` calls or jumps to directly where the assembler
// resolved the displacement itself (a call within one section leaves no relocation): x86-64 call
// and jmp rel32, jmp rel8, jcc rel8 and rel32 whose target is the start of a function symbol.
// A byte that only looks like such an opcode (inside another instruction) rarely lands exactly
// on a function's start.
std::vector<const ElfSymbol*> resolved_branch_targets(const ElfObject& o, const ElfSymbol& function,
                                                      std::uint64_t end)
{
    std::vector<const ElfSymbol*> targets;
    if (o.machine != elf::em_x86_64 || function.section >= o.sections.size()) return targets;
    const std::string_view code = o.contents(function.section);
    const auto byte = [&](std::uint64_t at) { return static_cast<std::uint8_t>(code[at]); };
    end = std::min<std::uint64_t>(end, code.size());
    for (std::uint64_t at = function.value; at < end; ++at) {
        std::uint64_t displacement_at = 0, next = 0;
        int width = 0;
        const std::uint8_t op = byte(at);
        if ((op == 0xE8 || op == 0xE9) && at + 5 <= end) {
            displacement_at = at + 1, width = 4, next = at + 5;
        } else if (op == 0x0F && at + 6 <= end && byte(at + 1) >= 0x80 && byte(at + 1) <= 0x8F) {
            displacement_at = at + 2, width = 4, next = at + 6;
        } else if ((op == 0xEB || (op >= 0x70 && op <= 0x7F)) && at + 2 <= end) {
            displacement_at = at + 1, width = 1, next = at + 2;
        } else {
            continue;
        }
        const auto [first, last] = o.relocations_in(function.section, displacement_at, displacement_at + width);
        if (first != last) continue;  // the linker's to resolve: the relocation walk sees it
        std::int64_t displacement = 0;
        if (width == 4) {
            std::uint32_t raw = 0;
            for (int k = 3; k >= 0; --k) raw = (raw << 8) | byte(displacement_at + static_cast<std::uint64_t>(k));
            displacement = static_cast<std::int32_t>(raw);
        } else {
            displacement = static_cast<std::int8_t>(byte(displacement_at));
        }
        const std::int64_t target = static_cast<std::int64_t>(next) + displacement;
        if (target < 0 || static_cast<std::uint64_t>(target) >= code.size()) continue;
        const ElfSymbol* found = o.symbol_at(function.section, static_cast<std::uint64_t>(target));
        if (found != nullptr && found != &function && found->type == elf::stt_func &&
            found->value == static_cast<std::uint64_t>(target))
            targets.push_back(found);
    }
    return targets;
}

std::string foreign_work_in_initializer(const ElfObject& o, const ElfSymbol& function, int depth,
                                        std::set<const ElfSymbol*>& visited)
{
    if (!visited.insert(&function).second) return {};
    if (visited.size() > 256) return function.name;  // more code than the library's construction calls
    const std::uint64_t end = function_end(o, function);
    // Calls the assembler resolved leave no relocation (a student function beside the initializer
    // in .text.startup, a hand-written initializer jumping to student code).
    for (const ElfSymbol* target : resolved_branch_targets(o, function, end)) {
        const bool helper = has_prefix(target->name, "_Z41__static_initialization_and_destruction_0");
        if (!helper && !library_construction(target->name)) return target->name;
        if (depth >= 8) return target->name;
        const std::string inner = foreign_work_in_initializer(o, *target, depth + 1, visited);
        if (!inner.empty()) return inner;
    }
    const auto [first, last] = o.relocations_in(function.section, function.value, end);
    for (const ElfRelocation* it = first; it != last; ++it) {
        const ElfRelocation& r = *it;
        const ElfSymbol* target = code_target(o, r);
        if (target == nullptr) {
            // A constant of a data section (a string, a number) is no code; a place in code that no
            // function symbol holds is code all the same.
            const ElfSymbol& s = o.symbols[r.symbol];
            if (in_executable_section(o, s)) return o.sections[s.section].name + "+" + hex(r.addend);
            continue;
        }
        const std::string& name = target->name;
        const bool defined_here = in_executable_section(o, *target);
        if (!defined_here && target->section != elf::shn_undef) continue;  // the global object, other data
        // GCC without optimisation calls a helper that does the initializer's work.
        const bool helper = has_prefix(name, "_Z41__static_initialization_and_destruction_0");
        if (!helper && !library_construction(name)) return name;
        if (defined_here) {
            if (depth >= 8) return name;  // deeper than the library's own code goes
            const std::string inner = foreign_work_in_initializer(o, *target, depth + 1, visited);
            if (!inner.empty()) return inner;
        }
    }
    return {};
}

std::vector<std::string> initializer_findings(const ElfObject& o)
{
    std::vector<std::string> findings;
    // An indirect function's resolver runs while the program is loaded, before any initializer.
    constexpr std::uint8_t stt_gnu_ifunc = 10;
    for (const auto& s : o.symbols)
        if (s.type == stt_gnu_ifunc && s.section != elf::shn_undef) {
            findings.push_back("defines " + shown_symbol(s.name) +
                               " as an indirect function (ifunc), whose resolver runs before the grader's runner "
                               "starts: a submission's code runs only when its launcher is called");
            break;
        }
    for (std::size_t k = 0; k < o.sections.size(); ++k) {
        const auto& section = o.sections[k];
        const std::string& name = section.name;
        // The C runtime's transactional-memory clone table: crtbegin's frame_dummy hands it to
        // _ITM_registerTMCloneTable before main.
        if (has_prefix(name, ".tm_clone_table")) {
            findings.push_back("has a " + name +
                               " section, which the C runtime hands to code before the grader's runner starts: a "
                               "submission's code runs only when its launcher is called");
            continue;
        }
        // Code placed in the program's own start or end (the crt's _init and _fini).
        if ((name == ".init" || name == ".fini") && (section.flags & elf::shf_execinstr) && section.size > 0) {
            findings.push_back("puts code in the program's " + name +
                               " section, which runs before (or after) the grader's runner: a submission's code "
                               "runs only when its launcher is called");
            continue;
        }
        const bool start = section.type == elf::sht_init_array || section.type == elf::sht_preinit_array ||
                           has_prefix(name, ".init_array") || has_prefix(name, ".preinit_array") ||
                           has_prefix(name, ".ctors");
        const bool end = section.type == elf::sht_fini_array || has_prefix(name, ".fini_array") ||
                         has_prefix(name, ".dtors");
        if (!start && !end) continue;
        const std::string when = start ? "before the grader's runner starts" : "after the grader's runner ends";
        std::set<std::uint64_t> relocated;
        const auto list = o.relocations.find(k);
        if (list != o.relocations.end())
            for (const ElfRelocation& r : list->second) {
                relocated.insert(r.offset);
                const std::string target = o.target_name(r);
                const ElfSymbol* function = nullptr;
                if (r.symbol < o.symbols.size()) {
                    const ElfSymbol& s = o.symbols[r.symbol];
                    function = s.type == elf::stt_section
                                   ? o.symbol_at(s.section, s.value + static_cast<std::uint64_t>(r.addend))
                                   : &s;
                }
                if (start && function != nullptr && is_nvcc_registration(*function) &&
                    has_prefix(function->name, "_ZL24__sti____cudaRegisterAll"))
                    continue;  // nvcc's registration of the file's kernels
                if (start && function != nullptr && has_prefix(function->name, "_GLOBAL__sub_I_") &&
                    function->bind == 0 && in_executable_section(o, *function)) {
                    std::set<const ElfSymbol*> visited;
                    const std::string work = foreign_work_in_initializer(o, *function, 0, visited);
                    if (work.empty()) continue;  // the compiler registering library objects' destructors
                    findings.push_back("runs " + shown_symbol(work) + " " + when +
                                       " (a global object with a constructor, or a global initialized by a call): "
                                       "a submission's code runs only when its launcher is called");
                    continue;
                }
                findings.push_back("runs " + shown_symbol(target) + " " + when + " (" + name +
                                   "): a submission's code runs only when its launcher is called");
            }
        // Entries written as numbers rather than relocated addresses.
        const std::string_view bytes = o.contents(k);
        for (std::uint64_t at = 0; at + 8 <= bytes.size(); at += 8) {
            if (relocated.count(at)) continue;
            std::uint64_t value = 0;
            std::memcpy(&value, bytes.data() + at, 8);
            if (value != 0 && value != ~std::uint64_t{0}) {
                findings.push_back("has an entry at a fixed address (" + hex(value) + ") in " + name +
                                   ", which runs " + when);
                break;
            }
        }
    }
    return findings;
}

std::vector<std::string> registration_findings(const ElfObject& o)
{
    std::vector<std::string> findings;
    std::set<std::string> said;
    for (const auto& [section, list] : o.relocations) {
        if (section >= o.sections.size()) continue;
        for (const ElfRelocation& r : list) {
            if (r.symbol >= o.symbols.size()) continue;
            const std::string& target = o.symbols[r.symbol].name;
            if (!is_registration_call(target)) continue;
            const ElfSymbol* caller = o.symbol_at(section, r.offset);
            const bool code = (o.sections[section].flags & elf::shf_execinstr) != 0;
            if (code && caller != nullptr && is_nvcc_registration(*caller)) continue;
            const std::string where =
                caller ? shown_symbol(caller->name) : "section " + o.sections[section].name + " at " + hex(r.offset);
            if (!said.insert(target + "|" + where).second) continue;
            if (findings.size() >= 8) continue;  // counted below
            findings.push_back((code ? "calls `" + target + "` from " : "keeps the address of `" + target + "` in ") +
                               where +
                               ", outside the code nvcc generates: registering GPU code by hand runs code this "
                               "compile did not produce");
        }
    }
    if (said.size() > findings.size())
        findings.push_back("calls nvcc's registration functions from " + std::to_string(said.size() - findings.size()) +
                           " more places outside the code nvcc generates");
    return findings;
}

// The names of loaders and of the places a hand-written lookup reads, as strings in the data.
bool names_a_loader(std::string_view text)
{
    static const std::set<std::string, std::less<>> exact = {
        "dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "dl_iterate_phdr", "__libc_dlopen_mode", "__libc_dlsym",
        "_r_debug", "cuModuleLoad", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary",
        "cuModuleGetFunction", "cuLibraryLoadData", "cuLibraryLoadFromFile", "cuLibraryGetKernel",
        "cuGetProcAddress", "cuGetProcAddress_v2", "cuLaunchKernel", "cuLinkCreate", "cuLinkAddData",
        "cuLinkComplete", "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cudaLibraryLoadData",
        "cudaGetExportTable", "cuGetExportTable", "__cudaRegisterFatBinary", "__cudaRegisterFunction"};
    if (exact.count(text)) return true;
    for (std::string_view part : {"libcuda.so", "libnvrtc", "libnvJitLink", "libnvptxcompiler", "/proc/self/maps",
                                  "/proc/self/exe", "/proc/self/mem", "nvrtcCreateProgram", "nvrtcCompileProgram",
                                  "nvJitLinkCreate", "nvPTXCompilerCompile"})
        if (text.find(part) != std::string_view::npos) return true;
    return false;
}

struct Blob {
    std::uint64_t offset = 0, size = 0;
    double bits = 0;
};

// The longest run of 4 KiB windows (stepping 1 KiB) above 7.0 bits per byte. The byte counts
// slide with the window: linear in the section's size.
Blob high_entropy_run(std::string_view bytes)
{
    constexpr std::size_t window = 4096, step = 1024;
    Blob best, run;
    bool in_run = false;
    std::array<std::size_t, 256> counts{};
    for (std::size_t k = 0; k < std::min(window, bytes.size()); ++k) ++counts[static_cast<unsigned char>(bytes[k])];
    for (std::size_t at = 0; at + window <= bytes.size(); at += step) {
        if (at > 0)
            for (std::size_t k = 0; k < step; ++k) {
                --counts[static_cast<unsigned char>(bytes[at - step + k])];
                ++counts[static_cast<unsigned char>(bytes[at + window - step + k])];
            }
        double bits = 0;
        for (std::size_t n : counts)
            if (n) {
                const double p = static_cast<double>(n) / window;
                bits -= p * std::log2(p);
            }
        if (bits > 7.0) {
            if (!in_run) run = {at, 0, 0};
            in_run = true;
            run.size = at + window - run.offset;
            run.bits = std::max(run.bits, bits);
            if (run.size > best.size) best = run;
        } else {
            in_run = false;
        }
    }
    return best;
}

// The compile's own GPU code: .nv_fatbin is the fatbin nvcc wrote (its kept copy), then padding.
std::string own_fatbin_finding(const ElfObject& o, std::size_t section, std::string_view own)
{
    const std::string_view bytes = o.contents(section);
    if (own.empty()) return {};
    if (bytes.size() < own.size() || bytes.substr(0, own.size()) != own)
        return "its GPU code section (.nv_fatbin) is not the code this compile produced";
    if (bytes.substr(own.size()).find_first_not_of('\0') != std::string_view::npos)
        return "its GPU code section (.nv_fatbin) holds " + std::to_string(bytes.size() - own.size()) +
               " bytes more than this compile produced";
    return {};
}

}  // namespace

double shannon_entropy(std::string_view bytes)
{
    if (bytes.empty()) return 0;
    std::array<std::size_t, 256> counts{};
    for (unsigned char c : bytes) ++counts[c];
    double bits = 0;
    for (std::size_t n : counts)
        if (n) {
            const double p = static_cast<double>(n) / static_cast<double>(bytes.size());
            bits -= p * std::log2(p);
        }
    return bits;
}

ObjectCheck check_object(const std::string& object_bytes, const std::string& own_fatbin, bool reads_a_library)
{
    ObjectCheck check;
    const ElfObject o = detail::read_elf(object_bytes);
    if (!o.error.empty()) {
        check.not_checked.push_back("the object's sections (" + o.error + ")");
        return check;
    }
    for (auto& f : initializer_findings(o)) check.refused.push_back(std::move(f));
    for (auto& f : registration_findings(o)) check.refused.push_back(std::move(f));

    bool own_seen = false;
    for (std::size_t k = 1; k < o.sections.size(); ++k) {
        const auto& section = o.sections[k];
        if (!(section.flags & elf::shf_alloc) || section.type == elf::sht_nobits) continue;
        const std::string_view bytes = o.contents(k);
        if (section.name == ".nv_fatbin") {
            own_seen = true;
            if (std::string f = own_fatbin_finding(o, k, own_fatbin); !f.empty()) check.refused.push_back(f);
            continue;
        }
        const std::string where = " in its data (section " + section.name + ", offset ";
        if (section.name == ".nvFatBinSegment") {
            // nvcc's one wrapper {0x466243b1, 1, &fatbin, 0}; a second one wraps other code.
            if (bytes.size() > 24 && bytes.substr(24).find_first_not_of('\0') != std::string_view::npos)
                check.refused.push_back("has more than nvcc's one fatbin wrapper in section .nvFatBinSegment: GPU "
                                        "code this compile did not produce");
            continue;
        }
        // ELF files (a GPU cubin has e_machine 190), fatbins and their wrappers.
        for (std::size_t at = bytes.find("\x7f" "ELF"); at != std::string_view::npos;
             at = bytes.find("\x7f" "ELF", at + 1)) {
            std::uint16_t machine = 0;
            if (at + 20 <= bytes.size()) std::memcpy(&machine, bytes.data() + at + 18, 2);
            check.refused.push_back(std::string("holds ") +
                                    (machine == elf::em_cuda ? "a GPU cubin (an ELF file for EM_CUDA)"
                                                             : "an ELF file (e_machine " + std::to_string(machine) + ")") +
                                    where + hex(at) + "): compiled code this compile did not produce");
            break;
        }
        for (const auto& [magic, what] :
             {std::pair<std::string_view, const char*>{std::string_view("\x50\xed\x55\xba", 4), "a fatbin"},
              {std::string_view("\xb1\x43\x62\x46", 4), "a fatbin wrapper"}})
            if (const std::size_t at = bytes.find(magic); at != std::string_view::npos) {
                check.refused.push_back(std::string("holds ") + what + where + hex(at) +
                                        "): GPU code this compile did not produce");
            }
        if (section.flags & elf::shf_execinstr) continue;  // machine code: only the magic numbers above
        // PTX text.
        for (std::string_view marker : {".target sm_", ".target compute_", ".visible .entry", ".visible .func",
                                        ".address_size 64", ".entry "})
            if (const std::size_t at = bytes.find(marker); at != std::string_view::npos) {
                check.refused.push_back("holds PTX text (\"" + std::string(marker) + "\")" + where + hex(at) +
                                        "): GPU code this compile did not produce");
                break;
            }
        // Loaders named as strings: a lookup written by hand.
        if (!reads_a_library)
            for (std::size_t at = 0; at < bytes.size();) {
                std::size_t end = bytes.find('\0', at);
                if (end == std::string_view::npos) end = bytes.size();
                const std::string_view text = bytes.substr(at, end - at);
                if (text.size() >= 5 && text.size() <= 4096 && names_a_loader(text)) {
                    std::string quoted(text.substr(0, 60));
                    for (char& c : quoted)
                        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
                    check.refused.push_back("names \"" + quoted + "\"" + where + hex(at) +
                                            "): a loader or a library looked up by hand at run time");
                    break;
                }
                at = end + 1;
            }
        // Compressed or encrypted data: named, it may be a table of the student's own.
        const Blob blob = high_entropy_run(bytes);
        if (blob.size > 0) {
            std::ostringstream text;
            text.precision(2);
            text << std::fixed << "holds " << (blob.size + 1023) / 1024 << " KiB of data that looks compressed or "
                 << "encrypted (" << blob.bits << " bits per byte)" << where << hex(blob.offset)
                 << "): encoded code would look like this";
            check.named.push_back(text.str());
        }
    }
    if (!own_seen && !own_fatbin.empty())
        check.refused.push_back("has no GPU code section (.nv_fatbin) though the compile produced one");
    if (own_fatbin.empty()) check.not_checked.push_back("the GPU code section against the compile's own fatbin "
                                                        "(the compiler kept none)");
    return check;
}

std::vector<std::string> raw_system_call_instructions(const std::string& disassembly)
{
    std::vector<std::string> found;
    std::string function;
    std::istringstream lines(disassembly);
    for (std::string line; std::getline(lines, line);) {
        // "0000000000000010 <name>:" opens a function; "  1f:\t<bytes>\t<mnemonic> <operands>" is an instruction.
        if (!line.empty() && line.back() == ':' && line.find(" <") != std::string::npos) {
            const std::size_t open = line.find(" <");
            function = line.substr(open + 2, line.size() - open - 4);
            continue;
        }
        const std::size_t colon = line.find(":\t");
        if (colon == std::string::npos) continue;
        std::string text = line.substr(colon + 2);
        // With raw bytes shown ("0f 05 \tsyscall"), the mnemonic follows them and a tab.
        if (const std::size_t tab = text.find('\t'); tab != std::string::npos &&
            text.find_first_not_of("0123456789abcdef ") == tab)
            text = text.substr(tab + 1);
        std::istringstream words(text);
        std::string mnemonic, operands;
        words >> mnemonic;
        // Prefixes objdump prints as words of their own ("rex.W syscall", "cs syscall").
        static const std::set<std::string, std::less<>> prefixes = {
            "cs", "ds", "es", "ss", "fs", "gs", "data16", "data32", "addr16", "addr32", "rep", "repz", "repe",
            "repnz", "repne", "lock", "notrack", "bnd", "xacquire", "xrelease"};
        for (int k = 0; k < 8 && (prefixes.count(mnemonic) > 0 || has_prefix(mnemonic, "rex")); ++k) {
            std::string next;
            if (!(words >> next)) break;
            mnemonic = next;
        }
        std::getline(words, operands);
        operands.erase(0, operands.find_first_not_of(" \t"));
        const bool raw = mnemonic == "syscall" || mnemonic == "sysenter" || mnemonic == "svc" ||
                         (mnemonic == "int" && has_prefix(operands, "$0x80"));
        if (!raw) continue;
        const std::string where = function.empty() ? std::string() : " in " + shown_symbol(function);
        found.push_back("contains a `" + mnemonic + (mnemonic == "int" ? " $0x80" : "") + "` instruction" + where +
                        ", which makes a system call directly");
        if (found.size() >= 8) break;
    }
    return found;
}

}  // namespace grading

// Finding a submission's files and building each into its own runner, in parallel, each step with
// a time limit and, unless --no-sandbox, inside the sandbox. A file that does not build fails only
// its own exercise. One file of grading/src/build/ per concern: toolchain.cpp (where the compiler
// and the runner object are), submission.cpp (the files and their refusal), headers.cpp (the
// dependency list and the header policy), symbols.cpp (the symbol policy), source_scan.cpp
// (libraries named in a source or a runner), steps.cpp (the four steps below) and limits.cpp (the
// steps' process limits).
//
// One file's build, five steps (each a child process; in the sandbox each sees only the
// toolchain, the read-only system and the files named here):
//   1. compile   nvcc -c -O3 -std=c++17 -lineinfo -arch=sm_XX -MD -MF deps.d -MT submission.o
//                     --keep --keep-dir keep -o submission.o SOURCE
//                (--keep changes no code: it leaves the compile's PTX and fatbin in keep/)
//   2. includes  the dependency list the compiler wrote (host and device passes) is read: a file
//                that is neither the source, nor a header of the toolchain, nor one of the C/C++
//                system makes the submission invalid; a header of CUB, Thrust, cuBLAS, ... is
//                library use, however the source spelled it
//   3. symbols   nm -P -t d submission.o: a definition of main, of a CUDA entry point or of a
//                symbol of the runner or its runtime makes the submission invalid
//                (forbidden_definition below); every call is checked against what honest
//                launchers call (check_host_calls)
//   4. code      what the student did not write (docs/security.md): the object's initializers,
//                registration of GPU code by hand, embedded code (check_object), raw system call
//                instructions (objdump -d, raw_system_call_instructions), and the PTX nvcc
//                generated compared with the hidden reference's (compare_with_reference)
//                then the technique (technique.hpp): the PTX, the calls, cuobjdump's resource usage
//   5. link      nvcc -arch=sm_XX -cudart static -o runner grader_runner.o submission.o: the runner
//                is one relocatable object, first on the line, so a duplicate fails the link
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/technique.hpp"

namespace harness {
class Sandbox;
}

namespace grading {

// The largest submission file that is built: a course's kernel is a few KiB of source.
constexpr std::uintmax_t max_source_bytes = 16u << 20;

// One exercise's file, and whether it is built: decided once, by find_submission.
struct SubmissionFile {
    std::string exercise;
    std::string path;     // the entry named <exercise>.cu (as on disk; the first by path when there
                          // are several); empty: none was found
    std::string refusal;  // why `path` is not built, the exercise's invalid_submission message (valid
                          // UTF-8): a link, a folder, a FIFO, a device, too large, unreadable, or
                          // more than one entry of the name; empty: build it
    std::string unread;   // when none was found: what of the folder could not be read (valid UTF-8)
    // When none was found: files whose names are close to <exercise>.cu, each with the name to give
    // it: "kogge_stone.cu: did you mean scan_kogge_stone.cu?" (valid UTF-8); empty: none.
    std::string near_miss;

    bool buildable() const { return !path.empty() && refusal.empty(); }
};

// Looks for <exercise>.cu anywhere below `directory` for each exercise named. Follows no link below
// `directory`, enters no hidden folder (.git/ skipped silently, .github/ and others said in `unread`),
// never throws: what it cannot read (a folder, a loop, deeper than 32 folders, past 100,000 entries)
// goes into `unread`, each entry of the name not a readable file of at most max_source_bytes in `refusal`.
std::vector<SubmissionFile> find_submission(const std::string& directory, const std::vector<std::string>& exercises);

// Names of libraries the source calls that the exercise must not (CUB, Thrust, cuBLAS, ...),
// from its #include lines and namespaces, comments and strings ignored. A hint only: the build
// decides from the compiler's dependency list (check_dependencies), which macros cannot hide.
std::vector<std::string> detect_library_use(const std::string& source);
// The same from the linked runner's bytes: CUB's and Thrust's kernels and functions carry their
// namespace in their mangled names. build_runners applies it to every runner it links.
std::vector<std::string> detect_library_symbols(const std::string& executable_bytes);

struct Toolchain {
    std::string nvcc;                         // compiler; its root (nvcc's ../) holds the CUDA headers
    std::string arch;                         // e.g. "90" for sm_90
    std::string runner_object;                // lib/grader_runner.o: the runner and harness_core, one object
    std::chrono::seconds compile_limit{180};  // per step (compile, link)
    // lib/reference-ptx/: <exercise>.ptx, each hidden reference's PTX, made by CMake from the
    // reference sources (none in the students' handout, which has no sources): compared with the
    // PTX of each submission file of that name. Missing: not compared.
    std::string reference_ptx_dir;
    // What the checks of code the student did not write refuse (calls, initializers, embedded
    // code) makes the file invalid_submission; false (the rubric's "code_checks": "name") names
    // it in code_findings and builds the file all the same.
    bool refuse_foreign_code = true;
};

// Where `grade` finds the compiler and the runner object when nothing overrides them.
Toolchain default_toolchain(const std::string& grade_executable);

// The PTX nvcc generated for a file against the hidden reference's of the same exercise
// (similarity.cpp): the share of the reference's distinct runs of ptx_run_length consecutive
// instructions (opcodes with their type suffixes) that the submission's PTX also has.
constexpr std::size_t ptx_run_length = 5;
// Below this many distinct runs a reference is a few textbook lines that honest kernels match too:
// the overlap is reported but decides nothing (measured: the reductions have 40-72, Kogge-Stone
// 35, Brent-Kung 85; the hierarchical scan 237, the convolutions 330-350).
constexpr std::size_t min_decisive_reference_runs = 150;
struct ReferenceComparison {
    bool compared = false;  // both PTX texts were there
    double overlap = 0;     // shared_runs / reference_runs
    std::size_t reference_runs = 0, shared_runs = 0;
    bool decisive = false;  // reference_runs >= min_decisive_reference_runs
    std::string note;       // why it was not compared, or is not decisive
};

// A compact fingerprint of a file's compiled kernels (similarity.cpp), for finding students whose
// kernels are near-identical to each other's in the class step (grading/class_results.hpp), which
// compares fingerprints without the code: SASS where the toolkit has cuobjdump and the reference's
// SASS is there (lib/reference-ptx/<exercise>.sass), the PTX otherwise. The code's opcodes (a
// PTX's with type suffixes, SASS's with modifiers: registers, labels, addresses, immediates
// dropped, so renaming, reformatting and reordering the source's declarations change nothing) cut
// into runs of ptx_run_length, each hashed; the runs the hidden reference's code also has are left
// out, so that what two files share because both follow the reference (or are the stub, whose
// kernels are empty) is never counted. What is kept: the smallest fingerprint_sketch_size hashes
// of the remaining distinct runs (a bottom-k sketch), from which fingerprint_similarity estimates
// the share of their runs two files have in common.
constexpr std::size_t fingerprint_sketch_size = 256;
struct KernelFingerprint {
    std::string code;                  // "sass" or "ptx": fingerprints of different code are not compared
    std::size_t instructions = 0;      // opcodes read
    std::size_t runs = 0;              // distinct runs
    std::size_t own_runs = 0;          // of those, the runs the reference's code lacks
    std::vector<std::uint32_t> sketch;  // the smallest hashes of the own runs, ascending, at most fingerprint_sketch_size
    std::string reference;             // what the runs were compared with: "none" when no reference code was here
};

struct BuildResult {
    bool ok = false;  // a runner was linked at `executable`
    std::string executable;
    std::string output;                     // compiler and linker messages
    std::string failure;                    // when !ok and invalid is empty: "compile error", ...
    std::string invalid;                    // non-empty: an invalid_submission, this one-line message (ok is false)
    std::vector<std::string> library_use;   // "CUB", "Thrust", ...: from the headers read and the runner's symbols
    std::vector<std::string> dependencies;  // every file the compile read, as the compiler listed them
    // Code the student may not have written (docs/security.md): every finding of the checks, refused
    // (then `invalid` holds the first) or named for course staff, valid UTF-8.
    std::vector<std::string> code_findings;
    std::vector<std::string> not_checked;  // checks that could not run here, and why
    ReferenceComparison reference;         // the PTX against the hidden reference's
    TechniqueReport technique;             // what the compiled code shows of the exercise's technique
    std::optional<KernelFingerprint> fingerprint;  // none: the compiler kept no code to read
    double seconds = 0;
};

// The commands of one build (CONTRACT.md: -O3 -std=c++17 -lineinfo, static runtime). `nvcc` is the
// compiler as the step sees it (inside the sandbox: under the toolchain root's real path).
std::vector<std::string> compile_command(const std::string& nvcc, const std::string& arch, const std::string& source,
                                         const std::string& object, const std::string& deps_file,
                                         const std::string& keep_dir);
std::vector<std::string> symbols_command(const std::string& object);
// objdump -d of the object's executable sections, or empty where objdump is not installed.
std::vector<std::string> disassembly_command(const std::string& object);
std::vector<std::string> link_command(const std::string& nvcc, const std::string& arch,
                                      const std::string& runner_object, const std::string& object,
                                      const std::string& executable);

// Builds every (source, executable) pair, `jobs` at a time, in the order given; results in the
// same order. `built` (when given) hears of each as soon as it is done, on the thread that built
// it, so that its exercise can start while the others still compile. Each step runs in `sandbox`
// (nullptr: directly, for trusted code with --no-sandbox). The build's files go to <executable's
// folder>/build/. Throws std::runtime_error when the grader's own runner object cannot be read (an
// error of the grading environment, not of any submission), before any build starts.
std::vector<BuildResult> build_runners(const Toolchain& toolchain,
                                       const std::vector<std::pair<std::string, std::string>>& work, int jobs,
                                       const harness::Sandbox* sandbox,
                                       const std::function<void(std::size_t, const BuildResult&)>& built = {});

// build_runners without its last step, the link: every check, nothing linked (the tests of the
// checks over whole sets of files, tools). A file that passes them all has `ok` and no executable.
std::vector<BuildResult> check_sources(const Toolchain& toolchain,
                                       const std::vector<std::pair<std::string, std::string>>& work, int jobs,
                                       const harness::Sandbox* sandbox);

// ---- The pieces of the checks, exposed for the tests ----

// The prerequisites of a make rule as compilers write it (-MD): "target : a b\<newline> c", with
// "\ " for a space in a name; every rule's prerequisites, in order, without repeats.
std::vector<std::string> parse_make_dependencies(const std::string& text);

// The files a compiler's messages name where a message starts ("PATH:LINE:", "PATH(LINE):", "In file
// included from PATH:LINE"): absolute paths of files that exist here, in order, without repeats. What a
// compile read when it stopped before it wrote its dependency list, whose messages quote those files.
std::vector<std::string> files_named_in_messages(const std::string& messages);

// The toolchain's root: nvcc's real path (PATH searched when it has no slash), two levels up.
std::string toolchain_root(const std::string& nvcc);
// The folders whose headers a submission may read: the toolchain's include folders (<root>/include,
// <root>/targets/*/include, real paths) and the C/C++ system's (/usr/include, /usr/lib/gcc).
std::vector<std::string> header_roots(const std::string& toolchain_root);

// The library a header belongs to ("CUB", "Thrust", "cuBLAS", "cuda::std algorithms", ...), from its
// path below a header root; empty when it is none of them.
std::string library_of_header(const std::string& path_below_root);

struct DependencyCheck {
    std::vector<std::string> library_use;  // in the order their first header was read
    std::vector<std::string> outside;      // files neither the source nor under a header root (real paths)
};
// `source` is the source as the compiler was given it. Paths are resolved (symbolic links, "..")
// before they are compared with the roots, so a path built by macros is judged by where it leads.
DependencyCheck check_dependencies(const std::vector<std::string>& dependencies, const std::string& source,
                                   const std::vector<std::string>& roots);

// One line of `nm -P -t d`: name, type letter (T, W, U, ...).
struct Symbol {
    std::string name;
    char type = '?';
};
std::vector<Symbol> parse_nm(const std::string& text);

// What a submission must not define, from the symbols of the runner object, of libcudart_static.a
// and of the C/C++ runtime libraries the link uses.
struct ForbiddenSymbols {
    struct Definition {
        bool weak_only = true;  // every definer defines it weakly
        std::string owner;      // who defines it, for the message
    };
    std::map<std::string, std::string> referenced;  // name -> who calls it (the runner, the CUDA runtime)
    std::map<std::string, Definition> defined;      // name -> its definitions elsewhere in the link
    std::vector<std::string> launcher_prefixes;     // "_Z16scan_kogge_stone": the contract's launchers
};
// Reads the runner object, <root>'s libcudart_static.a and the C/C++ runtime libraries the host
// compiler finds (g++ -print-file-name: libc, libstdc++, libgcc_s, libpthread, libdl, librt) with
// nm, at grade time: the set always matches the runner object in use. Throws std::runtime_error if
// the runner object cannot be read.
ForbiddenSymbols forbidden_symbols(const std::string& runner_object, const std::string& toolchain_root);

// Empty when the submission's symbols are allowed, else why not, naming the first symbol that is
// not (demangled): a definition (strong or weak) of
//   - main;
//   - an unmangled name starting with cuda, __cuda, or cu and a capital (CUDA runtime/driver);
//   - a symbol the runner object references, unless it is a contract launcher;
//   - a symbol the runner object, libcudart_static.a or the C/C++ runtime define, except a weak
//     definition of a C++ name (or DW.ref.*) that all of them define only weakly: template
//     instantiations and inline functions, where the runner object, first on the link line, wins;
//   - a symbol libcudart_static.a references.
// Symbol versions ("write@GLIBC_2.2.5") are ignored. Undefined and local symbols never count.
std::string forbidden_definition(const std::vector<Symbol>& submission, const ForbiddenSymbols& forbidden);

// ---- Code the student did not write (docs/security.md) ----

// The host-call allowlist (host_calls.cpp, where the lists are): what a name a submission calls is.
// In the order their messages come: the gravest first.
enum class HostCallKind {
    allowed,          // what honest launchers call
    loads_code,       // dlopen, cuModuleLoad*, cuLibrary*, cudaLibrary*, cuLink*, nvrtc*, nvJitLink*, ...
    finds_symbols,    // dlsym, dladdr, dl_iterate_phdr, getauxval, the linker's own symbols, ...
    raw_system_call,  // syscall()
    starts_threads,   // pthread_create, std::thread, fork, exec*, system, popen, posix_spawn, kill, ...
    protects_memory,  // mprotect, mmap, pkey_*
    opens_files,      // open*, fopen, socket, pipe, dup*, ioctl, read/write, std::ifstream, ...
    grader_internal,  // a symbol only the grader's runner defines
    unknown,          // none of these: named, not refused
};
const char* to_text(HostCallKind kind);
HostCallKind classify_host_call(const std::string& name);  // raw (mangled) name, a version suffix ignored

struct HostCall {
    std::string name;   // raw, without a version suffix
    std::string shown;  // demangled
    HostCallKind kind = HostCallKind::unknown;
    std::string message;  // "calls `fork`, which starts or signals ...": for the student
};
struct HostCallCheck {
    std::vector<HostCall> refused;  // every refused class
    std::vector<HostCall> named;    // HostCallKind::unknown
};
// Every name the submission references (nm's U, w, v), once each, in nm's order. With
// `reads_a_library` (the file reads CUB's or Thrust's headers, which may open the driver
// themselves) the dynamic loader and the driver's entry point are named instead of refused.
// `forbidden` (its `defined` map) tells the grader's own symbols apart.
HostCallCheck check_host_calls(const std::vector<Symbol>& submission, const ForbiddenSymbols& forbidden,
                               bool reads_a_library);

// Empty unless the submission calls something that loads or finds code at run time (the
// loads_code and finds_symbols classes above; dlopen/dlsym allowed with `reads_a_library`): the
// first such call, as a message.
std::string loads_code_at_run_time(const std::vector<Symbol>& submission, bool reads_a_library);

// What the object holds besides the code compiled from the file (object_scan.cpp): refused are
// initializers other than nvcc's registration (and the compiler's registration of library objects'
// destructors), ifunc resolvers, .init/.fini code, nvcc's registration functions called from
// anywhere but nvcc's generated code, a .nv_fatbin that is not `own_fatbin` (the compile's own,
// kept by --keep) byte for byte, and in any other loaded section an ELF header (a cubin: e_machine
// 190), fatbin or fatbin-wrapper magic, PTX text or (unless `reads_a_library`) a loader's or
// library's name as a string; named are runs of 4 KiB windows above 7.0 bits per byte.
struct ObjectCheck {
    std::vector<std::string> refused, named;
    std::vector<std::string> not_checked;
};
ObjectCheck check_object(const std::string& object_bytes, const std::string& own_fatbin, bool reads_a_library);
// Shannon entropy in bits per byte (0 for no bytes).
double shannon_entropy(std::string_view bytes);
// Raw system call instructions (syscall, sysenter, int $0x80, svc) in objdump -d output, with the
// function that holds each (at most 8).
std::vector<std::string> raw_system_call_instructions(const std::string& disassembly);

// The opcodes of a PTX text's instructions, in order, with their type suffixes (ld.global.nc.f32,
// setp.lt.s32, bra.uni); registers, labels, immediates, predicates, directives and comments dropped.
std::vector<std::string> ptx_opcodes(const std::string& ptx);
ReferenceComparison compare_with_reference(const std::string& submission_ptx, const std::string& reference_ptx);
// The opcodes of a `cuobjdump -sass` listing's instructions, in order, with their modifiers
// (ISETP.GE.AND, LDG.E.128.CONSTANT); predicates, registers, addresses, encodings and NOPs dropped.
std::vector<std::string> sass_opcodes(const std::string& listing);
// The fingerprint of `opcodes` (code: "sass" or "ptx"), without the runs `reference_opcodes` has
// (nullptr: no reference code here, every run kept).
KernelFingerprint fingerprint_kernel(const std::vector<std::string>& opcodes, std::string code,
                                     const std::vector<std::string>* reference_opcodes);
// The estimated Jaccard similarity of two fingerprints' own runs (shared runs / runs of either):
// exact when both have at most fingerprint_sketch_size own runs; 0 when either has none or their
// code differs.
double fingerprint_similarity(const KernelFingerprint& a, const KernelFingerprint& b);
// As results.json records it (an exercise's "fingerprint", the instructor's only) and back; nullopt
// from JSON of another shape.
nlohmann::json to_json(const KernelFingerprint& fingerprint);
std::optional<KernelFingerprint> fingerprint_from_json(const nlohmann::json& json);

// The PTX-like instructions (an opcode with a dotted suffix) in the source's inline `asm`
// statements, comments skipped: a hint of PTX written or pasted into the file.
std::size_t inline_asm_instructions(const std::string& source);
// The assembler directives that read a file or build a directive's name (.incbin, .include, .macro,
// .irp, .altmacro; any letter case) in a C++ text's inline `asm` statements. Given the front end's
// output (nvcc --keep's <stem>.cudafe1.cpp: macros expanded, adjacent literals joined, escapes
// decoded), no spelling of the source hides them.
std::vector<std::string> assembler_file_directives(const std::string& source);
// At least this many is "PTX of substantial size", named for course staff.
constexpr std::size_t substantial_inline_ptx = 40;

}  // namespace grading

// A kernel's fingerprint (grading/src/build/similarity.cpp) and the similarity of two, which the
// class step lists near-identical kernels by (grading/src/class/similar_kernels.cpp): SASS listings
// read, the reference's runs left out, the bottom-k sketch's estimate, the JSON; and, with the real
// nvcc (PTX, as CI has no cuobjdump), where the threshold comes from: independent kernels of the
// repository stay far below similar_kernel_threshold, renamed and reformatted copies far above it,
// the stubs and the references have too little code of their own to be compared.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "grading/build.hpp"
#include "grading/class_results.hpp"
#include "harness/exercise.hpp"
#include "harness/parallel.hpp"
#include "harness/process.hpp"
#include "support/test_support.hpp"
#include "toolchain_copy.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

using test_support::repository;

std::vector<std::string> numbered_opcodes(const std::string& prefix, int count)
{
    std::vector<std::string> ops;
    for (int k = 0; k < count; ++k) ops.push_back(prefix + std::to_string(k) + ".f32");
    return ops;
}

std::string read(const fs::path& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_CASE("SASS opcodes: modifiers kept; addresses, predicates, operands, encodings and NOPs dropped")
{
    const std::string listing =
        "\n\tcode for sm_90\n\t\tFunction : _Z1kPf\n"
        "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90\"\n"
        "        /*0000*/                   LDC R1, c[0x0][0x28] ;                /* 0x00000a00ff017b82 */\n"
        "                                                                           /* 0x000fe40000000800 */\n"
        "        /*0010*/                   S2R R0, SR_TID.X ;                    /* 0x0000000000007919 */\n"
        "        /*0020*/                   ISETP.GE.AND P0, PT, R0, UR4, PT ;    /* 0x0000000400007c0c */\n"
        "        /*0030*/               @P0 EXIT ;                               /* 0x000000000000094d */\n"
        "        /*0040*/              @!P0 LDG.E.128.CONSTANT R4, desc[UR6][R2.64] ;\n"
        "        /*0050*/                   BRA 0x50;                             /* 0xfffffffc00fc7947 */\n"
        "        /*0060*/                   NOP;                                  /* 0x0000000000007918 */\n"
        "\t\t..........\n";
    CHECK(sass_opcodes(listing) ==
          std::vector<std::string>{"LDC", "S2R", "ISETP.GE.AND", "EXIT", "LDG.E.128.CONSTANT", "BRA"});
    CHECK(sass_opcodes("").empty());
    CHECK(sass_opcodes("/*zz*/ MOV R1, R2 ;\n/*0010*/\n/*0020*/   @P0\n").empty());  // cut off: no crash
}

TEST_CASE("a fingerprint leaves out the reference's runs and keeps the smallest hashes of the rest")
{
    const std::vector<std::string> reference = numbered_opcodes("ref", 60);
    std::vector<std::string> file = numbered_opcodes("own", 40);
    file.insert(file.end(), reference.begin(), reference.end());
    const KernelFingerprint f = fingerprint_kernel(file, "ptx", &reference);
    CHECK(f.code == "ptx");
    CHECK(f.instructions == 100);
    CHECK(f.runs == 96);
    CHECK(f.own_runs == 96 - 56);  // the reference's 56 runs left out; the 4 across the seam stay
    CHECK(f.sketch.size() == 40);
    CHECK(std::is_sorted(f.sketch.begin(), f.sketch.end()));
    CHECK(f.reference == "the hidden reference's ptx");

    // The reference itself, or a copy of it, has no code of its own.
    CHECK(fingerprint_kernel(reference, "ptx", &reference).own_runs == 0);
    // Without reference code every run counts.
    const KernelFingerprint alone = fingerprint_kernel(file, "ptx", nullptr);
    CHECK(alone.own_runs == 96);
    CHECK(alone.reference == "none");
    // A large kernel keeps fingerprint_sketch_size hashes only.
    const KernelFingerprint large = fingerprint_kernel(numbered_opcodes("big", 5000), "sass", nullptr);
    CHECK(large.own_runs == 4996);
    CHECK(large.sketch.size() == fingerprint_sketch_size);
}

TEST_CASE("the similarity: exact for small kernels, estimated from the sketches for large ones")
{
    const KernelFingerprint a = fingerprint_kernel(numbered_opcodes("x", 104), "ptx", nullptr);  // 100 runs
    std::vector<std::string> half = numbered_opcodes("x", 54);                                    // 50 of them
    for (const auto& op : numbered_opcodes("y", 50)) half.push_back(op);                          // and 46 + 4 others
    const KernelFingerprint b = fingerprint_kernel(half, "ptx", nullptr);
    CHECK(fingerprint_similarity(a, a) == 1.0);
    CHECK(fingerprint_similarity(a, b) == doctest::Approx(50.0 / 150.0));
    CHECK(fingerprint_similarity(a, b) == fingerprint_similarity(b, a));
    // Different code, or no code of its own: never similar.
    KernelFingerprint sass = a;
    sass.code = "sass";
    CHECK(fingerprint_similarity(a, sass) == 0.0);
    CHECK(fingerprint_similarity(a, fingerprint_kernel({}, "ptx", nullptr)) == 0.0);

    // 3000 runs each, 2000 shared: the Jaccard similarity is 0.5, the 256-hash sketch within 0.1.
    std::vector<std::string> p = numbered_opcodes("s", 2004), q = p;
    for (const auto& op : numbered_opcodes("p", 1000)) p.push_back(op);
    for (const auto& op : numbered_opcodes("q", 1000)) q.push_back(op);
    const double estimate =
        fingerprint_similarity(fingerprint_kernel(p, "sass", nullptr), fingerprint_kernel(q, "sass", nullptr));
    CHECK(estimate == doctest::Approx(0.5).epsilon(0.2));
    MESSAGE("sketch estimate of a Jaccard similarity of 0.5: " << estimate);
}

TEST_CASE("a fingerprint as results.json records it, and back; other shapes refused")
{
    const KernelFingerprint f = fingerprint_kernel(numbered_opcodes("j", 30), "sass", nullptr);
    const nlohmann::json j = to_json(f);
    const std::optional<KernelFingerprint> back = fingerprint_from_json(j);
    REQUIRE(back);
    CHECK(back->sketch == f.sketch);
    CHECK(back->own_runs == f.own_runs);
    CHECK(fingerprint_similarity(*back, f) == 1.0);
    CHECK_FALSE(fingerprint_from_json(nullptr));
    CHECK_FALSE(fingerprint_from_json(nlohmann::json::array()));
    nlohmann::json bad = j;
    bad["code"] = "cubin";
    CHECK_FALSE(fingerprint_from_json(bad));
    bad = j;
    std::reverse(bad["sketch"].begin(), bad["sketch"].end());  // not ascending
    CHECK_FALSE(fingerprint_from_json(bad));
    bad = j;
    bad["sketch"] = std::vector<std::uint32_t>(fingerprint_sketch_size + 1, 1);
    CHECK_FALSE(fingerprint_from_json(bad));
    bad = j;
    bad.erase("own_runs");
    CHECK_FALSE(fingerprint_from_json(bad));
}

namespace {

// A copy as a student would disguise it: every name of the file renamed, the layout changed
// (indentation, braces on lines of their own, blank lines, a comment), nothing else.
std::string renamed_and_reformatted(std::string source)
{
    static const std::vector<std::pair<std::string, std::string>> names = {
        {"in", "zz_src"},       {"out", "zz_dst"},       {"n", "zz_count"},       {"t", "zz_tid"},
        {"xy", "zz_buffer"},    {"stride", "zz_step"},   {"index", "zz_pos"},     {"i0", "zz_first"},
        {"i1", "zz_second"},    {"start", "zz_base"},    {"sums", "zz_totals"},   {"section", "zz_part"},
        {"offset", "zz_add"},   {"tile", "zz_shared"},   {"i", "zz_i"},           {"j", "zz_j"},
        {"sum", "zz_acc"},      {"r", "zz_radius"},      {"row", "zz_y"},         {"col", "zz_x"},
        {"lane", "zz_lane"},    {"value", "zz_v"},       {"tid", "zz_thread"},    {"scan_sections_kernel", "zz_phase1"},
        {"add_offsets_kernel", "zz_phase3"},              {"scratch", "zz_spare"}, {"sections", "zz_parts"}};
    for (const auto& [from, to] : names) source = std::regex_replace(source, std::regex("\\b" + from + "\\b"), to);
    source = std::regex_replace(source, std::regex("\\)\\s*\\{"), ")\n{\n");
    source = std::regex_replace(source, std::regex("\n    "), "\n\t\t");
    source = std::regex_replace(source, std::regex(";\n"), ";\n\n");
    return "// my own work, honestly\n" + source;
}

struct Compiled {
    std::string name;      // below the repository, or "copy of <name>"
    std::string exercise;  // the file's stem
    std::string family;    // who wrote it: "reference", "stub", "buggy", "adversarial", or the copied file's
    std::optional<std::string> ptx;
    std::optional<std::string> sass;  // cuobjdump -sass of its object, where the toolkit has cuobjdump
};

struct CompiledSet {
    std::string skip;
    std::string sass_skip;  // why there is no SASS
    std::vector<Compiled> files;
    int kept = 0;  // of their PTX, as test_build_honest_set's compiles kept it
};

// The files compared: per exercise the reference, the stub, every buggy kernel, the adversarial
// kernels that are honest GPU code (their attacks are elsewhere), and disguised copies of four
// kernels; each compiled to PTX by the real nvcc as grade compiles a submission.
const CompiledSet& compiled()
{
    static CompiledSet set;
    static std::once_flag once;
    std::call_once(once, [] {
        const Toolchain toolchain = default_toolchain(fs::read_symlink("/proc/self/exe").string());
        if (::access(toolchain.nvcc.c_str(), X_OK) != 0) {
            set.skip = "no nvcc at " + toolchain.nvcc + " (the CUDA compiler CMake found): the threshold is not measured";
            return;
        }
        const fs::path dir = fs::temp_directory_path() / ("grader_test_fingerprint_" + std::to_string(getpid()));
        fs::create_directories(dir);
        std::vector<std::pair<Compiled, std::string>> work;  // (file, source text)
        for (const auto& e : harness::all_exercises()) {
            const std::string stem = e.name + ".cu";
            work.push_back({{"reference/" + stem, e.name, "reference", {}}, read(repository() / "reference" / stem)});
            for (const auto& folder : fs::directory_iterator(repository() / "exercises"))
                if (fs::exists(folder.path() / stem))
                    work.push_back({{"exercises/" + folder.path().filename().string() + "/" + stem, e.name, "stub", {}},
                                    read(folder.path() / stem)});
            for (const char* family : {"buggy", "adversarial"}) {
                const fs::path root = repository() / "tests" / family / e.name;
                if (!fs::is_directory(root)) continue;
                for (const auto& folder : fs::directory_iterator(root))
                    if (fs::exists(folder.path() / stem))
                        work.push_back({{"tests/" + std::string(family) + "/" + e.name + "/" +
                                             folder.path().filename().string(),
                                         e.name, family, {}},
                                        read(folder.path() / stem)});
            }
        }
        for (const char* name : {"tests/buggy/scan_hierarchical/two_levels_only", "tests/buggy/conv2d_tiled/wraps_around",
                                 "tests/buggy/conv1d_tiled/clamped_ghosts",
                                 "tests/adversarial/scan_kogge_stone/hides_work_on_a_stream"}) {
            const auto original = std::find_if(work.begin(), work.end(), [&](const auto& w) { return w.first.name == name; });
            REQUIRE(original != work.end());
            Compiled copy = original->first;
            copy.name = "copy of " + copy.name;
            copy.family = name;
            work.push_back({copy, renamed_and_reformatted(original->second)});
        }
        const std::string cuobjdump = toolchain_root(toolchain.nvcc) + "/bin/cuobjdump";
        const bool with_sass = ::access(cuobjdump.c_str(), X_OK) == 0;
        if (!with_sass) set.sass_skip = "no " + cuobjdump + ": the SASS is not measured (the PTX is)";
        // A repository file's PTX as test_build_honest_set's compile kept it (a CTest fixture: grade's
        // compile, the one below with -c), where the copy of the file beside it is the file as it is.
        const auto kept_ptx = [](const Compiled& c, const std::string& text) -> std::optional<std::string> {
            std::string below;  // the file, below the repository
            if (c.family == "reference" || c.family == "stub")
                below = c.name;
            else if (c.family == "buggy" || c.family == "adversarial")
                below = c.name + "/" + c.exercise + ".cu";
            else
                return std::nullopt;  // a disguised copy
            const fs::path copy = fs::path(GRADER_REPOSITORY_PTX) / below, ptx = fs::path(GRADER_REPOSITORY_PTX) / (below + ".ptx");
            if (!fs::is_regular_file(copy) || !fs::is_regular_file(ptx) || read(copy) != text) return std::nullopt;
            return read(ptx);
        };
        std::atomic<int> kept{0};
        harness::parallel_for(0, static_cast<std::int64_t>(work.size()), 1, [&](std::int64_t k, std::int64_t) {
            const fs::path sub = dir / std::to_string(k);
            fs::create_directories(sub);
            const fs::path source = sub / (work[k].first.exercise + ".cu"), ptx = sub / "out.ptx", object = sub / "out.o";
            std::ofstream(source) << work[k].second;
            // As grade compiles a submission (build.hpp), its PTX and object apart.
            const auto compile = [&](const char* what, const fs::path& output) {
                return harness::run_command({toolchain.nvcc, what, "-O3", "-std=c++17", "-lineinfo",
                                             "-arch=sm_" + toolchain.arch, "-o", output.string(), source.string()},
                                            std::chrono::seconds(300))
                    .status.ok();
            };
            if (auto ptx_kept = kept_ptx(work[k].first, work[k].second)) {
                work[k].first.ptx = std::move(ptx_kept);
                ++kept;
            } else if (compile("-ptx", ptx)) {
                work[k].first.ptx = read(ptx);
            }
            if (with_sass && compile("-c", object)) {
                const harness::CommandResult listing =
                    harness::run_command({cuobjdump, "-sass", object.string()}, std::chrono::seconds(120), 64u << 20);
                if (listing.status.ok()) work[k].first.sass = listing.output;
            }
        });
        for (auto& w : work) set.files.push_back(std::move(w.first));
        fs::remove_all(dir);
        set.kept = kept;
    });
    return set;
}

}  // namespace

namespace {

// The measurement on one code of the files ("ptx" or "sass"): the code of a file, none when it has none.
void measure(const CompiledSet& set, const std::string& code)
{
    const auto code_of = [&code](const Compiled& c) { return code == "sass" ? c.sass : c.ptx; };
    const auto opcodes_of = [&code](const std::string& text) {
        return code == "sass" ? sass_opcodes(text) : ptx_opcodes(text);
    };
    std::map<std::string, std::vector<const Compiled*>> by_exercise;
    for (const auto& c : set.files) by_exercise[c.exercise].push_back(&c);
    double independent_max = 0, copies_min = 1;
    std::string independent_worst;
    int independent_pairs = 0, copies = 0, edits = 0, edits_listed = 0;
    double edits_min = 1, edits_max = 0;
    for (const auto& [exercise, files] : by_exercise) {
        const Compiled* reference = nullptr;
        for (const auto* c : files)
            if (c->family == "reference") reference = c;
        REQUIRE(reference != nullptr);
        REQUIRE_MESSAGE(code_of(*reference), "the reference of " << exercise << " did not compile");
        const std::vector<std::string> reference_ops = opcodes_of(*code_of(*reference));
        std::map<const Compiled*, KernelFingerprint> prints;
        for (const auto* c : files) {
            if (!code_of(*c)) {
                // Only attacks may fail to compile on their own (they need the runner's headers).
                CHECK_MESSAGE(c->family == "adversarial", c->name << " did not compile");
                continue;
            }
            prints[c] = fingerprint_kernel(opcodes_of(*code_of(*c)), code, &reference_ops);
        }
        // The stub's kernels are empty and the reference has nothing of its own: neither is compared.
        for (const auto& [c, f] : prints)
            if (c->family == "stub" || c->family == "reference") {
                INFO(c->name << ": " << f.own_runs << " runs of its own");
                CHECK(f.own_runs < min_similar_kernel_runs);
            }
        for (auto a = prints.begin(); a != prints.end(); ++a)
            for (auto b = std::next(a); b != prints.end(); ++b) {
                if (a->second.own_runs < min_similar_kernel_runs || b->second.own_runs < min_similar_kernel_runs) continue;
                const double s = fingerprint_similarity(a->second, b->second);
                const Compiled &x = *a->first, &y = *b->first;
                if (x.family == y.name || y.family == x.name) {  // a disguised copy and its original
                    INFO(x.name << " | " << y.name);
                    CHECK(s >= 0.9);
                    copies_min = std::min(copies_min, s);
                    ++copies;
                } else if (x.family != y.family && x.family.find('/') == std::string::npos &&
                           y.family.find('/') == std::string::npos) {
                    // Written by different people: the buggy kernels share one author's base (they
                    // are one-bug edits of it, near-identical by design), the adversarial kernels
                    // another's; across them the kernels are independent.
                    INFO(x.name << " | " << y.name);
                    CHECK(s < similar_kernel_threshold / 2);
                    if (s >= independent_max) independent_max = s, independent_worst = x.name + " | " + y.name;
                    ++independent_pairs;
                } else if (x.family == y.family && x.family == "buggy") {
                    // One author's one-bug edits of one base: near-identical by design, the range shown.
                    edits_min = std::min(edits_min, s), edits_max = std::max(edits_max, s);
                    edits_listed += s >= similar_kernel_threshold;
                    ++edits;
                }
            }
    }
    CHECK(copies == 4);
    CHECK(independent_pairs >= 10);
    MESSAGE(code << ": " << independent_pairs << " pairs of independent kernels: at most " << independent_max << " ("
                              << independent_worst << "); " << copies << " renamed and reformatted copies: at least "
                              << copies_min << "; " << edits << " pairs of one-bug edits of one base (tests/buggy): "
                              << edits_min << " to " << edits_max << ", " << edits_listed
                              << " listed; the threshold " << similar_kernel_threshold);
}

}  // namespace

TEST_CASE("real nvcc: independent kernels stay below the threshold, disguised copies above, stubs and references are not compared")
{
    const CompiledSet& set = compiled();
    if (!set.skip.empty()) {
        MESSAGE("skipped: " << set.skip);
        return;
    }
    MESSAGE(set.kept << " of " << set.files.size() << " files' PTX as test_build_honest_set's compiles kept it, the rest compiled here");
    SUBCASE("PTX") { measure(set, "ptx"); }
    SUBCASE("SASS")
    {
        if (!set.sass_skip.empty())
            MESSAGE("skipped: " << set.sass_skip);
        else
            measure(set, "sass");
    }
}

TEST_CASE("the build fingerprints the SASS where the toolkit has cuobjdump and the reference's SASS is there, else the PTX")
{
    // A toolkit of the fake compiler (its kept PTX: FAKE_PTX lines) with a cuobjdump that lists the
    // SASS the source names (FAKE_SASS lines), and a reference folder with PTX, and SASS or not.
    const fs::path dir = fs::temp_directory_path() / ("grader_test_fingerprint_sass_" + std::to_string(getpid()));
    fs::remove_all(dir);
    Toolchain toolchain = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    toolchain.nvcc = fake_toolchain_copy(GRADER_FAKE_NVCC, dir / "toolkit", "",
                                         // the object keeps the SASS lines for the fake cuobjdump
                                         "for a; do case \"$a\" in *.cu) src=$a;; esac; prev=$a; done\n"
                                         "[ -n \"$src\" ] && sed -n 's|.*// FAKE_SASS: *||p' \"$src\" > \"$out_dir/sass.txt\"");
    // The copy's nvcc wrapper learns the object's folder from -o.
    {
        std::ifstream in(toolchain.nvcc);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        text.insert(text.find('\n') + 1, "prev=; for a; do [ \"$prev\" = -o ] && out_dir=$(dirname \"$a\"); prev=$a; done\n");
        std::ofstream(toolchain.nvcc) << text;
    }
    const fs::path cuobjdump = dir / "toolkit" / "bin" / "cuobjdump";
    std::ofstream(cuobjdump) << "#!/bin/sh\n[ \"$1\" = -sass ] || exit 1\n"
                                "n=0; while read -r line; do printf '        /*%04x*/   %s ;  /* 0x0 */\\n' $n \"$line\"; "
                                "n=$((n + 16)); done < \"$(dirname \"$2\")/sass.txt\"\n";
    fs::permissions(cuobjdump, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);

    std::string ptx, sass;
    for (int k = 0; k < 40; ++k) ptx += "// FAKE_PTX: op" + std::to_string(k) + ".f32 %r1, %r2;\n";
    const std::vector<std::string> reference_sass = {"LDC", "S2R", "ISETP.GE.AND", "EXIT", "LDG.E", "FADD", "STG.E", "BRA"};
    for (const auto& op : reference_sass) sass += "// FAKE_SASS: " + op + " R1, R2\n";
    for (int k = 0; k < 30; ++k) sass += "// FAKE_SASS: @P0 IADD" + std::to_string(k) + ".X R1, R2\n";
    const fs::path source = dir / "file" / "scan_kogge_stone.cu";
    fs::create_directories(source.parent_path() / "work");
    std::ofstream(source) << "// FAKE_RUNNER: correct\n" << ptx << sass;

    fs::create_directories(dir / "reference");
    toolchain.reference_ptx_dir = (dir / "reference").string();
    std::ofstream(dir / "reference" / "scan_kogge_stone.ptx") << "\tret;\n";
    const auto build = [&] {
        const auto results =
            check_sources(toolchain, {{source.string(), (source.parent_path() / "work" / "runner").string()}}, 1, nullptr);
        REQUIRE(results.size() == 1);
        INFO(results[0].failure << results[0].invalid << results[0].output);
        REQUIRE(results[0].ok);
        REQUIRE(results[0].fingerprint);
        return *results[0].fingerprint;
    };

    // No reference SASS: the PTX, 36 runs, none the reference's.
    const KernelFingerprint from_ptx = build();
    CHECK(from_ptx.code == "ptx");
    CHECK(from_ptx.instructions == 40);
    CHECK(from_ptx.own_runs == 36);

    // The reference's SASS beside its PTX: the SASS, less the runs of the reference's SASS.
    std::string reference_listing;
    for (const auto& op : reference_sass) reference_listing += "        /*0000*/   " + op + " R1, R2 ;\n";
    std::ofstream(dir / "reference" / "scan_kogge_stone.sass") << reference_listing;
    const KernelFingerprint from_sass = build();
    CHECK(from_sass.code == "sass");
    CHECK(from_sass.instructions == 38);
    CHECK(from_sass.runs == 34);
    CHECK(from_sass.own_runs == 34 - 4);
    CHECK(from_sass.reference == "the hidden reference's sass");

    // A cuobjdump that fails: the PTX after all.
    std::ofstream(cuobjdump) << "#!/bin/sh\nexit 3\n";
    CHECK(build().code == "ptx");
    fs::remove_all(dir);
}

// The checks of code the student did not write (host calls, initializers, embedded code, raw
// system calls, the PTX against the reference's) over every file of the repository, with the real
// nvcc where it is installed (no GPU: nothing is linked or run):
//   - the honest set (the references, the stubs, every buggy kernel) passes: nothing refused,
//     nothing named; each reference's PTX matches itself;
//   - every attacking submission under tests/adversarial/ gets the build's part of the verdict its
//     expect.json requires of grade on a GPU (refused with its message, built, or, for the attacks
//     graded with the rubric's code_checks "name" to reach the sandbox, refused under the default
//     rubric and naming what the GPU test looks for), the three classes of issue 20 included.
#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <fstream>

#include <nlohmann/json.hpp>

#include "grading/build.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

using test_support::repository;

using test_support::contains;

bool starts_with(const std::string& text, const std::string& prefix)
{
    return text.rfind(prefix, 0) == 0;
}

bool honest(const std::string& name)
{
    return starts_with(name, "reference/") || starts_with(name, "exercises/") || starts_with(name, "tests/buggy/");
}

struct SetBuild {
    std::string skip;
    fs::path dir;
    std::map<std::string, BuildResult> results;  // by path below the repository
    ~SetBuild()
    {
        std::error_code ignored;
        if (!dir.empty()) fs::remove_all(dir, ignored);
    }
};

std::vector<fs::path> files_matching(const fs::path& root, int depth)
{
    std::vector<fs::path> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it.depth() == depth && it->path().extension() == ".cu" && it->is_regular_file()) found.push_back(it->path());
    std::sort(found.begin(), found.end());
    return found;
}

// Which files a test case checks: the honest set (the references, the stubs, every buggy kernel) or
// one half of the attacking submissions (in path order: two halves, so that CTest runs them side by
// side). Each is compiled once per process, and only by the cases that need it (CTest runs the cases
// of each set in a process of its own: tests/unit/grading/build/CMakeLists.txt's PARTS).
enum class Set { honest, attacks_first_half, attacks_second_half };

SetBuild& set_build(Set which)
{
    static SetBuild builds[3];
    static std::once_flag once[3];
    const auto index = static_cast<std::size_t>(which);
    SetBuild& build = builds[index];
    std::call_once(once[index], [&build, which, index] {
        Toolchain toolchain = default_toolchain(fs::read_symlink("/proc/self/exe").string());
        if (::access(toolchain.nvcc.c_str(), X_OK) != 0) {
            build.skip = "no nvcc at " + toolchain.nvcc + " (the CUDA compiler CMake found): not tested here";
            return;
        }
        build.dir = fs::temp_directory_path() /
                    ("grader_test_honest_set_" + std::to_string(getpid()) + "_" + std::to_string(index));
        fs::remove_all(build.dir);
        std::vector<fs::path> sources;
        const auto folders = which == Set::honest
                                 ? std::vector<std::pair<std::string, int>>{{"reference", 0}, {"exercises", 1}, {"tests/buggy", 2}}
                                 : std::vector<std::pair<std::string, int>>{{"tests/adversarial", 2}};
        for (const auto& [folder, depth] : folders)
            for (const auto& f : files_matching(repository() / folder, depth)) sources.push_back(f);
        if (which != Set::honest) {  // one half of the attacks, in path order
            const std::size_t half = (sources.size() + 1) / 2;
            if (which == Set::attacks_first_half) sources.resize(half);
            else sources.erase(sources.begin(), sources.begin() + static_cast<std::ptrdiff_t>(half));
        }
        std::vector<std::pair<std::string, std::string>> work;
        std::vector<std::string> names;
        for (const auto& source : sources) {
            const std::string name = fs::relative(source, repository()).string();
            // Each in a folder of its own, under the exercise's file name (the reference PTX's name).
            const fs::path sub = build.dir / std::to_string(work.size());
            fs::create_directories(sub / "work");
            fs::copy_file(source, sub / source.filename());
            work.emplace_back((sub / source.filename()).string(), (sub / "work" / "runner").string());
            names.push_back(name);
        }
        const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        const auto results = check_sources(toolchain, work, jobs, nullptr);
        for (std::size_t k = 0; k < names.size(); ++k) build.results[names[k]] = results[k];
        // Each file's PTX the compile kept (<runner's folder>/build/keep/), beside a copy of the file it
        // came from, for test_build_fingerprint (a CTest fixture): grade's compile is its -ptx compile.
        const fs::path shared = GRADER_REPOSITORY_PTX;
        for (std::size_t k = 0; k < names.size(); ++k) {
            const fs::path source = work[k].first, copy = shared / names[k], ptx = shared / (names[k] + ".ptx");
            const fs::path kept = fs::path(work[k].second).parent_path() / "build" / "keep" / (source.stem().string() + ".ptx");
            fs::remove(ptx);
            if (!fs::is_regular_file(kept)) continue;
            fs::create_directories(copy.parent_path());
            fs::copy_file(source, copy, fs::copy_options::overwrite_existing);
            fs::copy_file(kept, ptx, fs::copy_options::overwrite_existing);
        }
    });
    return build;
}

std::string findings_of(const BuildResult& b)
{
    std::string text = b.failure + b.invalid;
    for (const auto& f : b.code_findings) text += "\n    " + f;
    return text;
}

}  // namespace

TEST_CASE("the honest set: references, stubs and buggy kernels pass every check, nothing named")
{
    SetBuild& build = set_build(Set::honest);
    if (!build.skip.empty()) {
        MESSAGE("skipped: " << build.skip);
        return;
    }
    std::size_t checked = 0;
    for (const auto& [name, b] : build.results) {
        if (!honest(name)) continue;
        ++checked;
        CAPTURE(name);
        INFO(findings_of(b));
        CHECK(b.ok);
        CHECK(b.invalid.empty());
        CHECK(b.code_findings.empty());
        // The references' own PTX is the reference's: a match (decisive only where the reference
        // is large enough for copying to show). Not always a full one: nvcc names a file's
        // anonymous namespace after a hash of its path, and code from another path can come out a
        // few instructions apart (a clean clone under a random mktemp -d: conv1d_tiled at 0.988,
        // session 15). Honest files overlap the reference by 0.00 to 0.01.
        if (starts_with(name, "reference/")) {
            CHECK(b.reference.compared);
            CHECK(b.reference.overlap >= 0.95);
        }
    }
    CHECK(checked >= 40);
    MESSAGE(checked << " honest files checked");
}

TEST_CASE("the technique of the honest set: the references show all, the stubs none, the buggy kernels only their bug")
{
    SetBuild& build = set_build(Set::honest);
    if (!build.skip.empty()) {
        MESSAGE("skipped: " << build.skip);
        return;
    }
    // The buggy kernels whose bug is the technique itself: what each lacks.
    const std::map<std::string, std::vector<std::string>> lacking = {
        {"tests/buggy/reduce_interleaved_divergent/float_accumulator/reduce_interleaved_divergent.cu",
         {"adds_in_double"}},
        {"tests/buggy/reduce_interleaved_divergent/int_shared_array/reduce_interleaved_divergent.cu",  // adds in int
         {"adds_in_double"}},
        {"tests/buggy/reduce_sequential_addressing/missing_syncthreads/reduce_sequential_addressing.cu",
         {"synchronizes_block"}},
        {"tests/buggy/scan_hierarchical/prints_fake_score/scan_hierarchical.cu",  // a copy kernel
         {"uses_shared_memory", "synchronizes_block"}},
        {"tests/buggy/scan_kogge_stone/computes_on_cpu/scan_kogge_stone.cu",
         {"launches_kernel", "uses_shared_memory", "synchronizes_block"}},
    };
    std::size_t checked = 0;
    for (const auto& [name, b] : build.results) {
        if (!honest(name) || !b.ok) continue;
        ++checked;
        CAPTURE(name);
        std::vector<std::string> missing;
        for (const auto t : b.technique.missing()) missing.emplace_back(harness::to_text(t));
        // computes_on_gpu is the run's (the speed case's PCIe traffic), never the build's: not
        // checked here, and no other check depends on it.
        auto of_the_code = [](const TechniqueCheck& c) { return c.technique != harness::Technique::computes_on_gpu; };
        for (const auto& c : b.technique.checks) {
            CAPTURE(harness::to_text(c.technique));
            CHECK(c.found.has_value() == of_the_code(c));  // the PTX was kept: every technique of the code checked
        }
        if (starts_with(name, "reference/")) {
            CHECK(missing.empty());
            for (const auto& c : b.technique.checks)  // every technique of the family is the reference's
                if (c.expected && of_the_code(c)) CHECK(c.found == true);
        } else if (starts_with(name, "exercises/")) {
            // A stub launches its empty kernel and shows nothing else of the technique.
            CHECK(b.technique.check(harness::Technique::launches_kernel)->found == true);
            for (const auto& c : b.technique.checks)
                if (c.expected && of_the_code(c) && c.technique != harness::Technique::launches_kernel)
                    CHECK(c.found == false);
            CHECK_FALSE(missing.empty());
        } else {
            const auto bug = lacking.find(name);
            CHECK(missing == (bug == lacking.end() ? std::vector<std::string>{} : bug->second));
        }
    }
    CHECK(checked >= 40);
}

namespace {

// Each attacking submission of one half gets the build's part of the verdict its expect.json requires.
void check_attack_verdicts(Set half)
{
    SetBuild& build = set_build(half);
    if (!build.skip.empty()) {
        MESSAGE("skipped: " << build.skip);
        return;
    }
    std::size_t attacks = 0;
    for (const auto& [name, b] : build.results) {
        if (!starts_with(name, "tests/adversarial/")) continue;
        ++attacks;
        CAPTURE(name);
        INFO(findings_of(b));
        std::ifstream file(repository() / fs::path(name).parent_path() / "expect.json");
        const nlohmann::json spec = nlohmann::json::parse(file);
        const std::string exercise = fs::path(name).stem().string();
        // The checks of this exercise: the top level's, and its own entry under "for".
        nlohmann::json checks = spec;
        if (spec.contains("for") && spec.at("for").contains(exercise)) checks.update(spec.at("for").at(exercise));
        const nlohmann::json status = checks.value("exercise_status", nlohmann::json());
        // An attack graded with the rubric's code_checks "name" exists to reach the sandbox: under
        // the default rubric the build refuses it, and names there what the GPU test looks for.
        const bool named_mode = spec.value("rubric", nlohmann::json::object()).value("code_checks", "") == "name";
        if (named_mode) {
            CHECK_FALSE(b.ok);
            CHECK_FALSE(b.invalid.empty());
        } else if (status == "invalid_submission") {
            CHECK_FALSE(b.ok);
            if (checks.contains("message_contains"))
                CHECK(contains(b.invalid, checks.at("message_contains").get<std::string>()));
        } else if (status == "graded") {
            CHECK(b.ok);
        }
        if (checks.contains("code_finding")) {
            const nlohmann::json wanted = checks.at("code_finding");
            for (const auto& part : wanted.is_array() ? wanted : nlohmann::json::array({wanted})) {
                const std::string text = part.get<std::string>();
                if (text == "matches the reference's compiled code") continue;  // the grader's, with the rubric
                bool found = false;
                for (const auto& f : b.code_findings) found = found || contains(f, text);
                CHECK_MESSAGE(found, "a finding names \"" << text << "\"");
            }
        }
        if (checks.value("matches_reference", false)) {
            CHECK(b.reference.decisive);
            CHECK(b.reference.overlap >= 0.25);  // the rubric's default threshold
        }
    }
    CHECK(attacks >= 25);  // of 60 in two halves (session 17)
}

}  // namespace

TEST_CASE("the attacking submissions, first half: the build's verdict is the one their expect.json requires of grade")
{
    check_attack_verdicts(Set::attacks_first_half);
}

TEST_CASE("the attacking submissions, second half: the build's verdict is the one their expect.json requires of grade")
{
    check_attack_verdicts(Set::attacks_second_half);
}

// GPU test driver: runs the real `grade` on a submission and checks the results against an
// expectation file. Exits 77 (CTest: skipped) with the reason printed when there is no GPU.
//
//   check_grading --grade GRADE --submission DIR --expect FILE.json --work DIR
//
// `grade` must exit by itself with code 0 (every case passed) or 1 (graded, something failed); a
// usage or environment error (2, 3), a signal or the 15-minute limit fails the test.
//
// The expectation file (see tests/buggy/*/*/expect.json and tests/adversarial/*/*/expect.json):
//   {"exercises": ["scan_hierarchical"],          which exercises to grade; each must be in the report
//    "args": ["--case-time-limit", "3"],          extra grade arguments (optional)
//    "rubric": {"code_checks": "name"},           a rubric (grading/rubric.schema.json), written to
//                                                 DIR/rubric.json and given with --rubric (optional)
//
//  Checks of one exercise. At the top level they apply to every exercise graded; inside
//  "for": {"NAME": {...}} only to exercise NAME (both may be given):
//    "all": {"status": "pass"} | "full_marks" | "zero_points_clean",   for every case/exercise
//    "library_use": "CUB",                        the grader names this library and gives 0 points
//    "cases": [{"label": "n=1/int", "status": "pass"},   (add "exercise": NAME to check one exercise only)
//              {"label": "n=4196353/int", "status": "wrong", "finding": "text the findings contain"}],
//    "some_case": [{"status": "cuda_error", "finding": "..."}],   at least one case matches each entry
//              (a case entry may also hold "timed": true|false, matched against the case's "timed")
//    "exercise_status": "graded" | ["graded", "runner_failed"],   the status is this (one of these)
//    "message_contains": "main",                  the exercise's message contains this text
//    "points_at_most": 0, "speed_points_at_most": 0,   upper bounds on the exercise's points
//    "speedup_at_most": 0.25,                     every timed case that has a timing is at most this
//                                                 fast next to the reference (speedup_vs_reference)
//    "runner_output_lacks": "text" | ["a", "b"],  runner_output contains none of these
//    "code_finding": "text" | ["a", "b"],         for each, some entry of code_checks.findings contains it
//    "matches_reference": true | false,           code_checks.reference.matches is this
//    "technique_missing": ["launches_kernel"],    technique.missing is exactly this ([]: every expected
//                                                 technique shows in the compiled code)
//
//  Checks of the whole run:
//    "full_marks_for": ["scan_brent_kung"],       these exercises score full marks
//    "grade_exit_codes": [0],                     the exit codes accepted from grade (default [0, 1])
//    "install_unchanged": true,                   no file under GRADE's directory (bin/) or its sibling
//                                                 lib/ was added, removed, rewritten, replaced or
//                                                 retouched: content hash, size, mode, inode and
//                                                 modification time are compared before and after
//    "no_process_named": "name" | ["a", "b"],     no live (non-zombie) process has this name (its
//                                                 /proc/PID/comm) once grade has exited; the
//                                                 namespace teardown gets 10 s before it counts
//    "files_absent": ["grader-work/results.json", "/tmp/x"],   none of these exists after grading
//                                                 (nor as a dangling link); relative to --work DIR
//    "gpu_memory_released": true,                 once grade has exited, all but 2 GiB of the GPU's
//                                                 memory is free again (10 s grace; for tests that
//                                                 run alone)
//
//  Read by tests/adversarial/CMakeLists.txt only (ignored here):
//    "run_alone": true                            the test runs alone (CTest RUN_SERIAL): it depends on
//                                                 speed, or it exhausts something other tests share
//    "with_reference": ["scan_brent_kung"]        the submission is a copy of the test's directory plus
//                                                 these references (reference/NAME.cu), made at configure time
//    "reference_copy_in_work": ["scan_kogge_stone"]   a copy of reference/NAME.cu at DIR/reference/ (a
//                                                 harmless target for attacks that link to the reference)
#include <cuda_runtime.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/json_schema.hpp"
#include "harness/process.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what)
{
    std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
    failures += ok ? 0 : 1;
}

// A string or an array of strings, as a list.
std::vector<std::string> string_list(const json& value)
{
    if (value.is_string()) return {value.get<std::string>()};
    return value.get<std::vector<std::string>>();
}

bool case_matches(const json& c, const json& want)
{
    if (want.contains("label") && c.at("label") != want.at("label")) return false;
    if (want.contains("status") && c.at("status") != want.at("status")) return false;
    if (want.contains("timed") && c.at("timed") != want.at("timed")) return false;
    if (want.contains("finding")) {
        const std::string needle = want.at("finding");
        bool found = c.at("summary").get<std::string>().find(needle) != std::string::npos;
        for (const auto& f : c.at("findings")) found = found || f.get<std::string>().find(needle) != std::string::npos;
        if (!found) return false;
    }
    return true;
}

void print_case(const json& c)
{
    std::cout << "    " << c.at("label").get<std::string>() << ": " << c.at("status").get<std::string>() << " -- "
              << c.at("summary").get<std::string>() << "\n";
    for (const auto& f : c.at("findings")) std::cout << "        " << f.get<std::string>() << "\n";
}

// The checks of one exercise `e` that `spec` asks for (the top level, or one entry of "for").
void check_exercise(const json& e, const json& spec)
{
    const std::string name = e.at("name");
    const std::string all = spec.contains("all") && spec.at("all").is_string() ? spec.at("all").get<std::string>() : "";
    if (spec.contains("all") && spec.at("all").is_object()) {
        bool every = !e.at("cases").empty();
        for (const auto& c : e.at("cases")) every = every && case_matches(c, spec.at("all"));
        expect(every, name + ": every case matches " + spec.at("all").dump());
    }
    if (spec.contains("library_use")) {
        bool listed = false;
        for (const auto& lib : e.at("library_use")) listed = listed || lib == spec.at("library_use");
        expect(listed && e.at("points") == 0, name + " uses " + spec.at("library_use").dump() +
                                                  " and scores 0 (library_use " + e.at("library_use").dump() + ", " +
                                                  e.at("points").dump() + " points)");
    }
    if (all == "full_marks") {
        expect(e.at("status") == "graded", name + " is graded");
        expect(e.at("points") == e.at("max_points") && !e.at("cases").empty(),
               name + " scores full marks (" + e.at("points").dump() + "/" + e.at("max_points").dump() + ")");
    } else if (all == "zero_points_clean") {
        expect(e.at("status") == "graded" && e.at("points") == 0, name + " is graded and scores 0");
        bool clean = !e.at("cases").empty();
        for (const auto& c : e.at("cases"))
            clean = clean && case_matches(c, {{"status", "wrong"}, {"finding", "no output element was written"}});
        expect(clean, name + ": every case fails cleanly with 'no output element was written'");
    }
    for (const auto& want : spec.value("cases", json::array())) {
        if (want.contains("exercise") && want.at("exercise") != name) continue;
        bool matched = false;
        for (const auto& c : e.at("cases"))
            if (c.at("label") == want.at("label")) matched = case_matches(c, want);
        expect(matched, name + " case " + want.dump());
    }
    for (const auto& want : spec.value("some_case", json::array())) {
        bool matched = false;
        for (const auto& c : e.at("cases")) matched = matched || case_matches(c, want);
        expect(matched, name + " some case matches " + want.dump());
    }
    if (spec.contains("exercise_status")) {
        const auto allowed = string_list(spec.at("exercise_status"));
        const std::string status = e.at("status");
        expect(std::find(allowed.begin(), allowed.end(), status) != allowed.end(),
               name + " status " + e.at("status").dump() + " (expected " + spec.at("exercise_status").dump() + ")");
    }
    if (spec.contains("message_contains")) {
        const std::string needle = spec.at("message_contains");
        expect(e.at("message").get<std::string>().find(needle) != std::string::npos,
               name + " message " + e.at("message").dump() + " contains \"" + needle + "\"");
    }
    if (spec.contains("points_at_most"))
        expect(e.at("points").get<double>() <= spec.at("points_at_most").get<double>(),
               name + " scores " + e.at("points").dump() + " points, at most " + spec.at("points_at_most").dump());
    if (spec.contains("speed_points_at_most"))
        expect(e.at("speed_points").get<double>() <= spec.at("speed_points_at_most").get<double>(),
               name + " scores " + e.at("speed_points").dump() + " speed points, at most " +
                   spec.at("speed_points_at_most").dump());
    if (spec.contains("speedup_at_most")) {
        const double most = spec.at("speedup_at_most");
        for (const auto& c : e.at("cases")) {
            if (!c.at("timed").get<bool>() || !c.at("timing").is_object()) continue;
            const double speedup = c.at("timing").at("speedup_vs_reference");
            std::ostringstream what;
            what << name << " case " << c.at("label").get<std::string>() << " runs at " << speedup
                 << "x the reference, at most " << most << "x (student " << c.at("timing").value("student_ms", 0.0)
                 << " ms, events " << c.at("timing").value("student_event_ms", 0.0) << " ms, reference "
                 << c.at("timing").value("reference_ms", 0.0) << " ms)";
            expect(speedup <= most, what.str());
        }
    }
    if (spec.contains("code_finding")) {
        const json checks = e.value("code_checks", json());
        const json findings = checks.is_object() ? checks.at("findings") : json::array();
        for (const auto& needle : string_list(spec.at("code_finding"))) {
            bool found = false;
            for (const auto& f : findings) found = found || f.get<std::string>().find(needle) != std::string::npos;
            expect(found, name + " code_checks.findings name \"" + needle + "\" (" + findings.dump() + ")");
        }
    }
    if (spec.contains("matches_reference")) {
        const json checks = e.value("code_checks", json());
        const bool matches = checks.is_object() && checks.at("reference").at("matches").get<bool>();
        expect(matches == spec.at("matches_reference").get<bool>(),
               name + " matches the reference's compiled code: " + (matches ? "yes" : "no") + " (" +
                   (checks.is_object() ? checks.at("reference").dump() : std::string("no code_checks")) + ")");
    }
    if (spec.contains("technique_missing")) {
        const json technique = e.value("technique", json());
        const json missing = technique.is_object() ? technique.at("missing") : json();
        expect(missing == spec.at("technique_missing"), name + " technique.missing is " +
                                                             spec.at("technique_missing").dump() + " (it is " +
                                                             missing.dump() + ")");
    }
    if (spec.contains("runner_output_lacks")) {
        const std::string output = e.at("runner_output");
        for (const auto& needle : string_list(spec.at("runner_output_lacks")))
            expect(output.find(needle) == std::string::npos, name + " runner_output lacks \"" + needle + "\"");
    }
}

std::uint64_t hash_file(const fs::path& path)
{
    std::ifstream file(path, std::ios::binary);
    std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
    std::vector<char> chunk(1 << 20);
    while (file) {
        file.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        for (std::streamsize k = 0; k < file.gcount(); ++k) {
            hash ^= static_cast<unsigned char>(chunk[static_cast<std::size_t>(k)]);
            hash *= 0x100000001b3ull;
        }
    }
    return file.bad() ? 0 : hash;
}

// path -> what it is: for a file its size, mode, inode, modification time and content hash.
std::map<std::string, std::string> fingerprint(const std::vector<fs::path>& roots)
{
    std::map<std::string, std::string> prints;
    for (const auto& root : roots) {
        std::error_code ec;
        if (!fs::is_directory(root, ec)) continue;
        for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
             !ec && it != end; it.increment(ec)) {
            const fs::path path = it->path();
            struct stat st {};
            if (::lstat(path.c_str(), &st) != 0) continue;
            std::ostringstream print;
            if (S_ISLNK(st.st_mode)) {
                std::error_code link_error;
                print << "symbolic link to " << fs::read_symlink(path, link_error).string();
            } else if (S_ISREG(st.st_mode)) {
                print << "file of " << st.st_size << " bytes, mode " << std::oct << (st.st_mode & 07777) << std::dec
                      << ", inode " << st.st_ino << ", modified " << st.st_mtim.tv_sec << "." << std::setw(9)
                      << std::setfill('0') << st.st_mtim.tv_nsec << ", hash " << std::hex << hash_file(path);
            } else if (S_ISDIR(st.st_mode)) {
                print << "directory, mode " << std::oct << (st.st_mode & 07777);
            } else {
                print << "special file, mode " << std::oct << st.st_mode;
            }
            prints[path.string()] = print.str();
        }
    }
    return prints;
}

void compare_fingerprints(const std::map<std::string, std::string>& before,
                          const std::map<std::string, std::string>& after, const std::string& where)
{
    std::vector<std::string> differences;
    for (const auto& [path, print] : before) {
        const auto now = after.find(path);
        if (now == after.end())
            differences.push_back("removed: " + path);
        else if (now->second != print)
            differences.push_back("changed: " + path + ": was " + print + ", now " + now->second);
    }
    for (const auto& [path, print] : after)
        if (before.count(path) == 0) differences.push_back("added: " + path + " (" + print + ")");
    expect(differences.empty() && !before.empty(),
           "the install (" + where + ", " + std::to_string(before.size()) + " entries) is unchanged after grading");
    for (std::size_t k = 0; k < differences.size() && k < 20; ++k) std::cout << "        " << differences[k] << "\n";
}

// Live processes whose name (/proc/PID/comm) is one of `names`, as "PID (name)".
std::vector<std::string> processes_named(const std::set<std::string>& names)
{
    std::vector<std::string> found;
    std::error_code ec;
    for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string pid = it->path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string comm;
        std::getline(std::ifstream(it->path() / "comm"), comm);
        if (names.count(comm) == 0) continue;
        std::string stat;
        std::getline(std::ifstream(it->path() / "stat"), stat);
        const auto close = stat.rfind(')');
        if (close != std::string::npos && close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X'))
            continue;  // a zombie holds nothing; whoever inherited it reaps it
        found.push_back(pid + " (" + comm + ")");
    }
    return found;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string grade, submission, expect_file, work;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--grade")
            grade = argv[i + 1];
        else if (flag == "--submission")
            submission = argv[i + 1];
        else if (flag == "--expect")
            expect_file = argv[i + 1];
        else if (flag == "--work")
            work = argv[i + 1];
    }
    int devices = 0;
    const cudaError_t probe = cudaGetDeviceCount(&devices);
    if (probe != cudaSuccess || devices == 0) {
        std::cout << "SKIPPED: this test needs a CUDA GPU and there is none here ("
                  << (probe != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(probe) +
                                                 ", no usable NVIDIA driver or GPU"
                                           : std::string("no devices"))
                  << ")\n";
        return 77;
    }
    const json spec = json::parse(std::ifstream(expect_file));
    const std::string results = work + "/results.json";
    // grade refuses an --output whose directory does not exist (before grading anything).
    fs::create_directories(work);
    std::vector<std::string> command = {grade,      "--submission", submission, "--work-dir", work + "/grader-work",
                                        "--output", results};
    std::string exercises;
    for (const auto& e : spec.at("exercises")) exercises += (exercises.empty() ? "" : ",") + e.get<std::string>();
    command.insert(command.end(), {"--exercise", exercises});
    for (const auto& a : spec.value("args", json::array())) command.push_back(a.get<std::string>());
    if (spec.contains("rubric")) {
        const std::string rubric = work + "/rubric.json";
        std::ofstream(rubric) << spec.at("rubric").dump(2) << "\n";
        command.insert(command.end(), {"--rubric", rubric});
    }

    // The install: the directory of `grade` (bin/) and the lib/ beside it.
    const fs::path bin_dir = fs::absolute(grade).parent_path();
    const std::vector<fs::path> install = {bin_dir, bin_dir.parent_path() / "lib"};
    const bool check_install = spec.value("install_unchanged", false);
    const auto install_before = check_install ? fingerprint(install) : std::map<std::string, std::string>{};

    std::cout << "grading " << submission << " (" << exercises << ")\n" << std::flush;
    const auto run = harness::run_command(command, std::chrono::minutes(15), 1 << 20);
    std::cout << run.output << "\n";
    const std::vector<int> exit_codes = spec.value("grade_exit_codes", std::vector<int>{0, 1});
    expect(run.status.kind == harness::ExitStatus::Kind::exited &&
               std::find(exit_codes.begin(), exit_codes.end(), run.status.code) != exit_codes.end(),
           "grade exited by itself with an accepted code (" + run.status.describe() + "; accepted " +
               json(exit_codes).dump() + ")");

    // What must hold of the machine whatever the report says.
    if (check_install) compare_fingerprints(install_before, fingerprint(install), bin_dir.string() + " and lib/");
    if (spec.contains("no_process_named")) {
        const auto list = string_list(spec.at("no_process_named"));
        const std::set<std::string> names(list.begin(), list.end());
        auto left = processes_named(names);
        for (int waited = 0; !left.empty() && waited < 100; ++waited) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            left = processes_named(names);
        }
        std::string which;
        for (const auto& p : left) which += " " + p;
        expect(left.empty(), "no process named " + spec.at("no_process_named").dump() + " is left" +
                                 (left.empty() ? std::string() : ":" + which));
    }
    if (spec.value("gpu_memory_released", false)) {
        std::size_t free_bytes = 0, total_bytes = 0;
        for (int waited = 0; waited <= 100; ++waited) {
            if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) break;
            if (free_bytes + (std::size_t{2} << 30) >= total_bytes) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        expect(total_bytes > 0 && free_bytes + (std::size_t{2} << 30) >= total_bytes,
               "the GPU's memory is free again after grading (" + std::to_string(free_bytes >> 20) + " of " +
                   std::to_string(total_bytes >> 20) + " MiB free)");
    }
    for (const auto& absent : spec.value("files_absent", std::vector<std::string>{})) {
        const fs::path path = fs::path(absent).is_absolute() ? fs::path(absent) : fs::path(work) / absent;
        std::error_code ec;
        expect(!fs::exists(fs::symlink_status(path, ec)), "no file " + path.string());
    }

    std::ifstream results_file(results);
    if (!results_file) return std::cout << "  FAIL  no results.json\n", 1;
    const json report = json::parse(results_file, nullptr, false);
    if (report.is_discarded()) return std::cout << "  FAIL  results.json is not JSON\n", 1;
    const json schema = json::parse(std::ifstream(GRADER_SCHEMA_FILE));
    const auto errors = grading::validate_json_schema(schema, report);
    expect(errors.empty(),
           "results.json matches grading/results.schema.json" +
               (errors.empty() ? std::string() : ": " + errors[0].instance_path + " " + errors[0].message));

    try {  // a report that does not match the schema may lack what the checks read
        for (const auto& name : spec.at("exercises")) {
            bool reported = false;
            for (const auto& e : report.at("exercises")) reported = reported || e.at("name") == name;
            expect(reported, name.get<std::string>() + " is in the report");
        }
        const json per_exercise = spec.value("for", json::object());
        for (const auto& e : report.at("exercises")) {
            const std::string name = e.at("name");
            std::cout << "  " << name << ": " << e.at("status").get<std::string>() << ", " << e.at("points").dump()
                      << "/" << e.at("max_points").dump() << " points (speed " << e.at("speed_points").dump() << ")"
                      << (e.at("message").get<std::string>().empty() ? "" : ": " + e.at("message").get<std::string>())
                      << "\n";
            for (const auto& c : e.at("cases"))
                if (c.at("status") != "pass") print_case(c);
            check_exercise(e, spec);
            if (per_exercise.contains(name)) check_exercise(e, per_exercise.at(name));
            for (const auto& full : spec.value("full_marks_for", json::array()))
                if (full == name)
                    expect(e.at("points") == e.at("max_points"),
                           name + " scores full marks beside the failing exercise (" + e.at("points").dump() + ")");
        }
    } catch (const json::exception& error) {
        expect(false, std::string("the report has what the checks read: ") + error.what());
    }
    std::cout << (failures == 0 ? "all expectations met\n" : std::to_string(failures) + " expectation(s) failed\n");
    return failures == 0 ? 0 : 1;
}

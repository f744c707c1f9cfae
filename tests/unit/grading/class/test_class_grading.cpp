// `grade class` end to end with the fake toolchain (tests/fake_toolchain), no GPU: a synthetic class
// graded whole and checked file by file against the schemas; a regrade; the class killed with
// SIGKILL in the middle and resumed; shards merged against the class graded at once; two virtual GPUs.
// Most classes grade one case each (--case) to keep the run short.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grading/class_roster.hpp"
#include "grading/json_schema.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "support/sandbox_args.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using test_support::fresh_dir;

// One folder per student under dir/submissions, each with a scan_kogge_stone.cu of the given text.
fs::path make_class(const fs::path& dir, const std::map<std::string, std::string>& students)
{
    const fs::path submissions = dir / "submissions";
    for (const auto& [name, text] : students) {
        fs::create_directories(submissions / name);
        std::ofstream(submissions / name / "scan_kogge_stone.cu") << text << "\n";
    }
    return submissions;
}

std::vector<std::string> class_command(const fs::path& submissions, const fs::path& out,
                                       const std::vector<std::string>& extra)
{
    std::vector<std::string> command = {GRADE_EXECUTABLE, "class",   "--submissions",      submissions.string(),
                                        "--output-dir",   out.string(), "--nvcc",          FAKE_NVCC,
                                        "--reference-runner", FAKE_RUNNER, "--exercise", "scan_kogge_stone",
                                        "--case-time-limit", "10", "--reps", "3"};
    command.insert(command.end(), sandbox_args().begin(), sandbox_args().end());
    command.insert(command.end(), extra.begin(), extra.end());
    return test_support::with_own_gpu_lock(command);
}

harness::CommandResult grade_class(const fs::path& submissions, const fs::path& out, const std::vector<std::string>& extra)
{
    const auto run = harness::run_command(class_command(submissions, out, extra), std::chrono::minutes(5), 1 << 20);
    INFO(run.output);
    REQUIRE(run.status.kind == harness::ExitStatus::Kind::exited);
    return run;
}

json read_json(const fs::path& path)
{
    std::ifstream in(path);
    REQUIRE_MESSAGE(in, "no " << path);
    return json::parse(in);
}

void check_schema(const json& schema, const json& document, const fs::path& what)
{
    const auto errors = grading::validate_json_schema(schema, document);
    for (const auto& e : errors) MESSAGE(what << e.instance_path << ": " << e.message);
    CHECK(errors.empty());
}

json record_schema()
{
    const json whole = json::parse(std::ifstream(GRADER_CLASS_SCHEMA_FILE));
    json part = whole.at("$defs").at("record");
    part["$defs"] = whole.at("$defs");
    return part;
}

// Every file of every student and of the class against its schema; the students' folders by name.
std::map<std::string, json> check_class_files(const fs::path& out)
{
    const json results_schema = test_support::results_schema();
    const json class_schema = json::parse(std::ifstream(GRADER_CLASS_SCHEMA_FILE));
    const json class_results = read_json(out / "results.json");
    check_schema(class_schema, class_results, out / "results.json");
    std::map<std::string, json> students;
    for (const auto& s : class_results.at("students")) {
        const fs::path dir = out / s.at("files").get<std::string>();
        check_schema(record_schema(), read_json(dir / "record.json"), dir / "record.json");
        CHECK(fs::is_regular_file(dir / "grade.log"));
        CHECK(!fs::exists(dir / ".pending"));
        CHECK(!fs::exists(dir / "work"));
        if (s.at("status") != "not_graded") {
            check_schema(results_schema, read_json(dir / "results.json"), dir / "results.json");
            for (const char* file : {"gradescope.json", "prairielearn.json", "junit.xml", "summary.md"})
                CHECK_MESSAGE(fs::is_regular_file(dir / file), (dir / file).string());
            read_json(dir / "gradescope.json");
            read_json(dir / "prairielearn.json");
        }
        students[s.at("name").get<std::string>()] = s;
    }
    return students;
}

// The processes whose command line names `text` (a test's own directory).
std::vector<std::string> processes_naming(const std::string& text)
{
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string pid = entry.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos || std::stoi(pid) == ::getpid()) continue;
        std::ifstream in(entry.path() / "cmdline", std::ios::binary);
        std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (cmdline.find(text) != std::string::npos) {
            std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
            found.push_back(pid + ": " + cmdline);
        }
    }
    return found;
}

bool wait_for(const std::function<bool()>& condition, std::chrono::seconds limit)
{
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return condition();
}

std::string read_text(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct FileStamp {
    ino_t inode = 0;
    long long mtime_ns = 0;
    bool operator==(const FileStamp& o) const { return inode == o.inode && mtime_ns == o.mtime_ns; }
};
FileStamp stamp(const fs::path& path)
{
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return {st.st_ino, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec};
}

// class.csv's rows without the columns that depend on the run (gpu, seconds).
std::vector<std::string> csv_without_run_columns(const fs::path& file)
{
    std::vector<std::string> rows;
    std::istringstream in(read_text(file));
    std::string line;
    while (std::getline(in, line)) {
        for (int k = 0; k < 2; ++k) line = line.substr(0, line.rfind(','));
        rows.push_back(line);
    }
    return rows;
}

}  // namespace

TEST_CASE("a synthetic class: every student's files and the class's against their schemas; a regrade")
{
    const fs::path dir = fresh_dir("synthetic");
    const fs::path submissions =
        make_class(dir, {{"full", "// FAKE_RUNNER: correct"},
                         {"stub", "// FAKE_RUNNER: unwritten"},
                         {"hang", "// FAKE_RUNNER: hang_at:2"},
                         {"crash", "// FAKE_RUNNER: crash_at:4"},
                         {"compile_error", "FAKE_COMPILE_ERROR"},
                         {"slow", "// FAKE_RUNNER: slow_kernel"},
                         {"<b onclick=x>attack", "// FAKE_RUNNER: hostile_text\nFAKE_COMPILER_NOISE"},
                         {"refused", "// FAKE_DEFINES: main"},
                         {"library", "// FAKE_INCLUDES: @ROOT@/include/cccl/thrust/scan.h\n// FAKE_RUNNER: correct"}});
    const fs::path out = dir / "out";
    const auto run = grade_class(submissions, out, {});
    INFO(run.output);
    CHECK(run.status.code == 1);  // graded, some did not pass
    CHECK(run.output.find("9 students (plain layout); 0 already graded, 9 to grade on 1 GPU(s)") != std::string::npos);
    CHECK(run.output.find("[9/9]") != std::string::npos);
    CHECK(run.output.find("left") != std::string::npos);
    CHECK(run.output.find("\x1b") == std::string::npos);  // the attack's escapes never reach the console

    const auto students = check_class_files(out);
    REQUIRE(students.size() == 9);
    // How its folders were named, for the runs after it (class_roster.hpp: RosterNaming).
    const auto naming = grading::read_roster_naming((out / "roster.json").string());
    REQUIRE(naming);
    CHECK(naming->layout == grading::RosterLayout::plain);
    CHECK(students.at("full").at("status") == "passed");
    CHECK(students.at("full").at("exercises").at(0).at("correctness_points") == 8.0);  // speed: the machine's load
    CHECK(students.at("stub").at("points") == 0.0);
    CHECK(students.at("compile_error").at("exercises").at(0).at("status") == "compile_error");
    CHECK(students.at("refused").at("exercises").at(0).at("status") == "invalid_submission");
    CHECK(students.at("b_onclick_x_attack").at("status") == "failed");
    CHECK(students.at("slow").at("exercises").at(0).at("correctness_points") == 8.0);
    for (const auto& [name, s] : students) {
        CHECK(s.at("status") != "not_graded");
        CHECK(s.at("gpu") == "0");
    }
    const json class_results = read_json(out / "results.json");
    std::set<std::pair<std::string, std::string>> problems;
    for (const auto& p : class_results.at("problems"))
        problems.insert({p.at("student").get<std::string>(), p.at("kind").get<std::string>()});
    CHECK(problems.count({"hang", "timeout"}));
    CHECK(problems.count({"crash", "crashed"}));
    CHECK(problems.count({"refused", "invalid_submission"}));
    CHECK(problems.count({"library", "library_use"}));
    const std::string csv = read_text(out / "class.csv");
    CHECK(csv.rfind("student,scan_kogge_stone,total,max_points,status,gpu,seconds\r\n", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 10);
    const std::string html = read_text(out / "report.html");
    CHECK(html.find("<b onclick") == std::string::npos);
    CHECK(html.find("\x1b") == std::string::npos);

    // The stub is fixed and graded again; the others are not touched.
    const FileStamp full_before = stamp(out / "students" / "full" / "results.json");
    std::ofstream(submissions / "stub" / "scan_kogge_stone.cu") << "// FAKE_RUNNER: correct\n";
    const auto again = grade_class(submissions, out, {"--regrade", "stub"});
    INFO(again.output);
    CHECK(again.output.find("8 already graded, 1 to grade") != std::string::npos);
    CHECK(stamp(out / "students" / "full" / "results.json") == full_before);
    CHECK(read_json(out / "students" / "stub" / "previous" / "1" / "results.json").at("points") == 0.0);
    CHECK(fs::is_regular_file(out / "students" / "stub" / "previous" / "1" / "grade.log"));
    const json changes = read_json(out / "results.json").at("changes");
    REQUIRE(changes.size() == 1);
    CHECK(changes.at(0).at("student") == "stub");
    CHECK(changes.at(0).at("before") == 0.0);
    CHECK(changes.at(0).at("after").get<double>() >= 8.0);
    CHECK(read_text(out / "report.html").find("What changed after a regrade") != std::string::npos);
    check_class_files(out);
    CHECK(grade_class(submissions, out, {"--regrade", "nobody"}).status.code == 2);
    fs::remove_all(dir);
}

TEST_CASE("killed with SIGKILL in the middle, the same command resumes: nothing graded twice, nothing lost, no "
          "process left")
{
    const fs::path dir = fresh_dir("resume");
    const fs::path submissions = make_class(dir, {{"a", "// FAKE_RUNNER: correct"},
                                                  {"b", "// FAKE_RUNNER: exclusive_scan"},
                                                  {"c_slow", "FAKE_COMPILE_SLOW"},
                                                  {"d", "// FAKE_RUNNER: crash_at:7"},
                                                  {"e_stuck", "FAKE_COMPILER_HANG"},
                                                  {"f", "// FAKE_RUNNER: correct"}});
    const fs::path out = dir / "out";
    // One at a time, one case each; a grade that takes longer than 20 s is stopped (c_slow's compile takes 8
    // s, its whole grade 9.3 s on two busy cores: the limit is more than twice that).
    const std::vector<std::string> options = {"--per-gpu", "1", "--case", "n=1025/int", "--student-time-limit", "20"};
    harness::SpawnOptions spawn;
    spawn.argv = class_command(submissions, out, options);
    spawn.output_file = (dir / "first.log").string();
    harness::Child first = harness::Child::spawn(spawn);
    // Killed while c_slow's grade compiles, a and b graded.
    const bool in_the_middle = wait_for(
        [&] {
            return fs::exists(out / "students" / "b" / "results.json") &&
                   fs::exists(out / "students" / "c_slow" / "record.json");
        },
        std::chrono::seconds(120));
    INFO(read_text(dir / "first.log"));
    REQUIRE(in_the_middle);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    first.kill_and_reap();
    // Its grade and everything below it die with it.
    const bool none_left = wait_for([&] { return processes_naming(dir.string()).empty(); }, std::chrono::seconds(20));
    for (const auto& p : processes_naming(dir.string())) MESSAGE("left: " << p);
    CHECK(none_left);
    CHECK(!fs::exists(out / "students" / "c_slow" / "results.json"));
    const FileStamp a = stamp(out / "students" / "a" / "results.json");
    const FileStamp b = stamp(out / "students" / "b" / "results.json");

    const auto resumed = grade_class(submissions, out, options);
    INFO(resumed.output);
    CHECK(resumed.status.code == 1);
    CHECK(resumed.output.find("2 already graded, 4 to grade") != std::string::npos);
    CHECK(stamp(out / "students" / "a" / "results.json") == a);
    CHECK(stamp(out / "students" / "b" / "results.json") == b);
    const auto students = check_class_files(out);
    REQUIRE(students.size() == 6);
    CHECK(students.at("a").at("status") == "passed");
    CHECK(students.at("b").at("status") == "failed");
    CHECK(students.at("c_slow").at("status") == "passed");
    CHECK(students.at("d").at("status") == "failed");
    CHECK(students.at("e_stuck").at("status") == "not_graded");
    CHECK(students.at("e_stuck").at("message").get<std::string>().find("--student-time-limit (20 s)") != std::string::npos);
    CHECK(students.at("f").at("status") == "passed");
    CHECK(read_text(out / "class.csv").find("e_stuck,,,,not_graded,0,") != std::string::npos);
    CHECK(processes_naming(dir.string()).empty());

    // Run again: only the student without results is graded. The limit on a student's grade is the
    // class's, not a grading's (no regrade for it): e_stuck, the one left, is stopped after 5 s.
    std::vector<std::string> shorter = options;
    shorter.back() = "5";
    const auto third = grade_class(submissions, out, shorter);
    INFO(third.output);
    CHECK(third.output.find("5 already graded, 1 to grade") != std::string::npos);
    CHECK(check_class_files(out).at("e_stuck").at("message").get<std::string>().find("--student-time-limit (5 s)") !=
          std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("shards 0/2 and 1/2, merged, make the class graded at once; two virtual GPUs both take students")
{
    const fs::path dir = fresh_dir("shards");
    const fs::path submissions = make_class(dir, {{"a_slow", "FAKE_COMPILE_SLOW"},
                                                  {"b", "// FAKE_RUNNER: correct"},
                                                  {"c", "// FAKE_RUNNER: unwritten"},
                                                  {"d", "// FAKE_RUNNER: exclusive_scan"},
                                                  {"e", "FAKE_COMPILE_ERROR"}});
    const std::vector<std::string> options = {"--case", "n=1025/int"};
    std::vector<std::string> two_gpus = options;
    two_gpus.insert(two_gpus.end(), {"--gpus", "0,1", "--per-gpu", "1"});
    // a_slow holds GPU 0 for 8 s of compiling while the others go to GPU 1.
    const auto whole = grade_class(submissions, dir / "whole", two_gpus);
    INFO(whole.output);
    std::set<std::string> gpus;
    for (const auto& [name, s] : check_class_files(dir / "whole")) gpus.insert(s.at("gpu").get<std::string>());
    CHECK(gpus == std::set<std::string>{"0", "1"});

    std::vector<std::string> shard0 = options, shard1 = options;
    shard0.insert(shard0.end(), {"--shard", "0/2"});
    shard1.insert(shard1.end(), {"--shard", "1/2"});
    // Each student's share is the SHA-256 of their folder's name mod 2 (class_roster.hpp): b, c and e
    // in shard 0, a_slow and d in shard 1.
    const grading::Roster roster = grading::discover_roster(submissions.string());
    std::map<std::string, int> shard_of;
    for (const auto& s : roster.students) shard_of[s.name] = grading::shard_of_student(s, 2);
    CHECK(shard_of == std::map<std::string, int>{{"a_slow", 1}, {"b", 0}, {"c", 0}, {"d", 1}, {"e", 0}});
    const auto first = grade_class(submissions, dir / "shard0", shard0);
    CHECK(first.output.find("shard 0/2: 3") != std::string::npos);
    CHECK(!fs::exists(dir / "shard0" / "class.csv"));
    grade_class(submissions, dir / "shard1", shard1);
    for (const auto& [name, shard] : shard_of) {
        CAPTURE(name);
        CHECK(fs::is_regular_file(dir / ("shard" + std::to_string(shard)) / "students" / name / "results.json"));
        CHECK(!fs::exists(dir / ("shard" + std::to_string(1 - shard)) / "students" / name));
    }

    // Into a fresh folder, and into the first shard's own.
    for (const auto& [target, shards] : std::vector<std::pair<fs::path, std::vector<std::string>>>{
             {dir / "merged", {(dir / "shard0").string(), (dir / "shard1").string()}},
             {dir / "shard0", {(dir / "shard1").string()}}}) {
        std::vector<std::string> merge = {GRADE_EXECUTABLE, "class", "merge", "--output-dir", target.string()};
        merge.insert(merge.end(), shards.begin(), shards.end());
        const auto merged = harness::run_command(merge, std::chrono::minutes(1));
        INFO(merged.output);
        CHECK(merged.status.kind == harness::ExitStatus::Kind::exited);
        CHECK(merged.status.code == 1);
        check_class_files(target);
        CHECK(csv_without_run_columns(target / "class.csv") == csv_without_run_columns(dir / "whole" / "class.csv"));
        json a = read_json(target / "results.json"), b = read_json(dir / "whole" / "results.json");
        CHECK(a.at("summary") == b.at("summary"));
        CHECK(a.at("failing_cases") == b.at("failing_cases"));
    }
    // --regrade of a student of another shard: said, and left to that shard.
    std::vector<std::string> regrade = shard0;
    regrade.insert(regrade.end(), {"--regrade", "a_slow"});
    const auto elsewhere = grade_class(submissions, dir / "shard0", regrade);
    CHECK(elsewhere.output.find("--regrade a_slow: in shard 1/2, regraded there, not in this one") !=
          std::string::npos);
    CHECK(elsewhere.output.find("3 already graded, 0 to grade") != std::string::npos);

    const auto nothing = harness::run_command({GRADE_EXECUTABLE, "class", "merge", "--output-dir", (dir / "none").string()},
                                              std::chrono::minutes(1));
    CHECK(nothing.status.code == 2);

    // A shard with no student (5 students in 8 shards) is a clean success that says so.
    int empty = 0;
    while (!grading::shard_of(roster.students, empty, 8).empty()) ++empty;
    std::vector<std::string> empty_shard = options;
    empty_shard.insert(empty_shard.end(), {"--shard", std::to_string(empty) + "/8"});
    const auto none = grade_class(submissions, dir / "empty", empty_shard);
    INFO(none.output);
    CHECK(none.status.code == 0);
    CHECK(none.output.find("has none of the 5 students") != std::string::npos);
    CHECK(!fs::exists(dir / "empty" / "students"));

    // A late submission after shard 0 ran: nobody moves; merging with --submissions names the student
    // no shard graded (its shard), and the class lists it as not graded.
    fs::create_directories(submissions / "late");
    std::ofstream(submissions / "late" / "scan_kogge_stone.cu") << "// FAKE_RUNNER: correct\n";
    const grading::Roster later = grading::discover_roster(submissions.string());
    for (const auto& s : later.students)
        if (s.name != "late") CHECK(grading::shard_of_student(s, 2) == shard_of.at(s.name));
    const auto merged = harness::run_command({GRADE_EXECUTABLE, "class", "merge", "--output-dir",
                                              (dir / "merged").string(), "--submissions", submissions.string()},
                                             std::chrono::minutes(1));
    INFO(merged.output);
    CHECK(merged.status.code == 1);
    int late_shard = 0;
    for (const auto& s : later.students)
        if (s.name == "late") late_shard = grading::shard_of_student(s, 2);
    CHECK(merged.output.find("1 of the 6 students of " + submissions.string() +
                             " are in no shard's results: late (shard " + std::to_string(late_shard) + "/2)") !=
          std::string::npos);
    const json class_results = read_json(dir / "merged" / "results.json");
    check_schema(json::parse(std::ifstream(GRADER_CLASS_SCHEMA_FILE)), class_results, dir / "merged" / "results.json");
    std::map<std::string, std::string> status;
    for (const auto& s : class_results.at("students")) status[s.at("name")] = s.at("status");
    CHECK(status.size() == 6);
    CHECK(status["late"] == "not_graded");
    CHECK(status["b"] == "passed");
    fs::remove_all(dir);
}

TEST_CASE("grade class refuses before grading anyone: output inside the submissions, a machine that cannot grade")
{
    const fs::path dir = fresh_dir("refusals");
    const fs::path submissions = make_class(dir, {{"a", "// FAKE_RUNNER: correct"}});
    auto run = harness::run_command(class_command(submissions, submissions / "out", {}), std::chrono::minutes(1));
    CHECK(run.status.code == 2);
    CHECK(run.output.find("overlap") != std::string::npos);
    CHECK(!fs::exists(submissions / "out"));
    std::vector<std::string> broken = class_command(submissions, dir / "out", {});
    broken.insert(broken.end(), {"--nvcc", (dir / "no-nvcc").string()});
    run = harness::run_command(broken, std::chrono::minutes(1));
    CHECK(run.status.code == 3);
    CHECK(run.output.find("grade class: the compiler") != std::string::npos);
    CHECK(run.output.find("nothing was graded") != std::string::npos);
    CHECK(!fs::exists(dir / "out" / "students" / "a"));
    run = harness::run_command({GRADE_EXECUTABLE, "class", "--submissions", (dir / "missing").string(), "--output-dir",
                                (dir / "out").string()},
                               std::chrono::minutes(1));
    CHECK(run.status.code == 2);
    fs::remove_all(dir);
}

TEST_CASE("a folder added since that takes a graded student's name: both graded, the other's results kept aside")
{
    const fs::path dir = fresh_dir("renamed");
    const fs::path submissions = make_class(dir, {{"a b", "// FAKE_RUNNER: correct"}});
    const fs::path out = dir / "out";
    const std::vector<std::string> options = {"--case", "n=1025/int"};
    grade_class(submissions, out, options);
    CHECK(read_json(out / "students" / "a_b" / "record.json").at("source") == (submissions / "a b").string());
    // "a\tb" comes first in folder order: it is a_b now, and "a b" is a_b-2.
    make_class(dir, {{"a\tb", "// FAKE_RUNNER: unwritten"}});
    const auto again = grade_class(submissions, out, options);
    INFO(again.output);
    CHECK(again.output.find("a_b held the results of") != std::string::npos);
    CHECK(again.output.find("0 already graded, 2 to grade") != std::string::npos);
    CHECK(read_json(out / "students" / "a_b" / "record.json").at("source") == (submissions / "a\tb").string());
    CHECK(read_json(out / "students" / "a_b-2" / "record.json").at("source") == (submissions / "a b").string());
    CHECK(read_json(out / "students" / "a_b" / "previous" / "1" / "record.json").at("source") ==
          (submissions / "a b").string());
    check_class_files(out);
    fs::remove_all(dir);
}

// Red team: a student names their folder "results.json" (a clean name: it is kept as it is). The
// first `grade class` grades it into OUT/students/results.json/. Every later run on that OUT (a
// resume after a crash, late submissions, --regrade) checks one grading's --output
// OUT/students/results.json in its preflight, finds a directory there and refuses the whole class:
// "nothing was graded". Secure answer: a student's folder name never collides with a file of the
// grader's; the second run grades (or finds graded) every student and writes the class's files.
TEST_CASE("red team: a student folder named results.json does not stop every later grade class on that output")
{
    const fs::path dir = fresh_dir("results_json_name");
    const fs::path submissions =
        make_class(dir, {{"results.json", "// FAKE_RUNNER: correct"}, {"alice", "// FAKE_RUNNER: correct"}});
    const fs::path out = dir / "out";
    const std::vector<std::string> options = {"--case", "n=1025/int"};
    const auto first = grade_class(submissions, out, options);
    INFO(first.output);
    CHECK(first.output.find("nothing was graded") == std::string::npos);
    // A late submission: the same command again.
    make_class(dir, {{"bob", "// FAKE_RUNNER: correct"}});
    const auto again = grade_class(submissions, out, options);
    INFO(again.output);
    CHECK(again.output.find("nothing was graded") == std::string::npos);
    CHECK((again.status.code == 0 || again.status.code == 1));
    CHECK(fs::exists(out / "students" / "bob" / "results.json"));
    CHECK(fs::exists(out / "class.csv"));
    fs::remove_all(dir);
}

namespace {

// A kernel's PTX as the fake compiler keeps it (fake_nvcc.sh's FAKE_PTX lines): `opcodes` in order,
// their registers and labels named after `style`, so that two files with the same opcodes differ
// in every name as a renamed copy does.
std::string fake_ptx(const std::vector<std::string>& opcodes, const std::string& style)
{
    std::string text = "// FAKE_PTX: .visible .entry " + style + "_kernel(\n// FAKE_PTX: {\n";
    int k = 0;
    for (const auto& op : opcodes) {
        if (k % 9 == 4) text += "// FAKE_PTX: $" + style + "_L" + std::to_string(k) + ":\n";
        text += "// FAKE_PTX:   " + op + " \t%" + style + std::to_string(k) + ", %" + style + std::to_string(k + 1) +
                ", " + std::to_string(k * 4) + ";\n";
        ++k;
    }
    return text + "// FAKE_PTX:   ret;\n// FAKE_PTX: }\n";
}

std::vector<std::string> fake_opcodes(const std::string& family, int count)
{
    static const char* const types[] = {".f32", ".u32", ".s64", ".b32", ".pred"};
    std::vector<std::string> ops;
    for (int k = 0; k < count; ++k) ops.push_back(family + std::to_string(k % 17) + types[(k * 7) % 5]);
    return ops;
}

}  // namespace

TEST_CASE("near-identical kernels in a class: a renamed copy listed for review, others and stubs not; no student "
          "view shows a fingerprint; no points change")
{
    const fs::path dir = fresh_dir("similar");
    const std::vector<std::string> kernel = fake_opcodes("op", 60);
    const fs::path submissions =
        make_class(dir, {{"alice", "// FAKE_RUNNER: correct\n" + fake_ptx(kernel, "r")},
                         {"bob", "// FAKE_RUNNER: correct\n" + fake_ptx(kernel, "rd")},  // alice's, renamed
                         {"carol", "// FAKE_RUNNER: correct\n" + fake_ptx(fake_opcodes("ins", 60), "f")},
                         {"stub_a", "// FAKE_RUNNER: unwritten\n// FAKE_PTX: ret;\n"},
                         {"stub_b", "// FAKE_RUNNER: unwritten\n// FAKE_PTX: ret;\n"}});
    const fs::path out = dir / "out";
    const auto run = grade_class(submissions, out, {"--case", "n=1025/int"});
    INFO(run.output);
    const auto students = check_class_files(out);
    REQUIRE(students.size() == 5);

    const json similar = read_json(out / "results.json").at("similar_kernels");
    INFO(similar.dump(1));
    REQUIRE(similar.at("exercises").size() == 1);
    const json& scan = similar.at("exercises").at(0);
    CHECK(scan.at("exercise") == "scan_kogge_stone");
    CHECK(scan.at("code") == "ptx");
    CHECK(scan.at("compared") == 3);
    CHECK(scan.at("too_little_own_code") == 2);
    REQUIRE(scan.at("pairs").size() == 1);
    CHECK(scan.at("pairs").at(0).at("students") == json{"alice", "bob"});
    CHECK(scan.at("pairs").at(0).at("similarity") == 1.0);
    CHECK(scan.at("groups") == json::array({json{"alice", "bob"}}));
    // Nothing changes points: the copies are graded as the others are.
    CHECK(students.at("alice").at("exercises").at(0).at("correctness_points") ==
          students.at("carol").at("exercises").at(0).at("correctness_points"));
    CHECK(students.at("bob").at("exercises").at(0).at("correctness_points") ==
          students.at("carol").at("exercises").at(0).at("correctness_points"));

    const std::string html = read_text(out / "report.html");
    const auto section = html.find("Near-identical kernels, for review; never penalised");
    REQUIRE(section != std::string::npos);
    const std::string part = html.substr(section, html.find("</section>", section) - section);
    CHECK(part.find("alice<br>bob<br>") != std::string::npos);
    CHECK(part.find("100%") != std::string::npos);
    CHECK(part.find("carol") == std::string::npos);
    CHECK(part.find("stub_a") == std::string::npos);

    // The instructor's results.json holds each student's own fingerprint; the student's files none,
    // and nothing of another student.
    for (const char* name : {"alice", "bob"}) {
        const fs::path folder = out / "students" / name;
        const json own = read_json(folder / "results.json").at("exercises").at(0).at("fingerprint");
        CHECK(own.at("code") == "ptx");
        CHECK(own.at("own_runs").get<int>() >= 50);
        for (const char* file : {"gradescope.json", "prairielearn.json", "junit.xml", "summary.md", "student-results.json"}) {
            if (!fs::exists(folder / file)) continue;
            const std::string text = read_text(folder / file);
            CHECK_MESSAGE(text.find("fingerprint") == std::string::npos, (folder / file).string());
            CHECK_MESSAGE(text.find("sketch") == std::string::npos, (folder / file).string());
            CHECK_MESSAGE(text.find(name == std::string("alice") ? "bob" : "alice") == std::string::npos,
                          (folder / file).string());
        }
    }
    fs::remove_all(dir);
}

// What an instructor does to OUT and to the submissions between runs (issue 21): each rerun grades
// exactly who it must and says why.
TEST_CASE(
    "between runs: the submissions moved, results edited or broken by hand, a student withdrawn, "
    "another grade class holding a student")
{
    const fs::path dir = fresh_dir("between_runs");
    const fs::path submissions = make_class(
        dir, {{"a", "// FAKE_RUNNER: correct"}, {"b", "// FAKE_RUNNER: correct"}, {"c", "// FAKE_RUNNER: unwritten"}});
    const fs::path out = dir / "out";
    const fs::path rubric = dir / "rubric.json";
    std::ofstream(rubric) << R"({"correctness_points": 8, "speed_points": 2})";
    const std::vector<std::string> options = {"--case", "n=1025/int", "--rubric", rubric.string()};
    grade_class(submissions, out, options);
    const FileStamp a_record = stamp(out / "students" / "a" / "record.json");

    // The submissions moved (another path, another mount): the same folders, nobody graded again.
    const fs::path moved = dir / "moved";
    fs::rename(submissions, moved);
    auto run = grade_class(moved, out, options);
    INFO(run.output);
    CHECK(run.output.find("3 already graded, 0 to grade") != std::string::npos);
    CHECK(stamp(out / "students" / "a" / "record.json") == a_record);
    CHECK(run.output.find("other grading options") == std::string::npos);

    // The rubric changed since (fixed after a first run was stopped): who keeps the old one's points is said.
    std::ofstream(rubric) << R"({"correctness_points": 6, "speed_points": 4})";
    run = grade_class(moved, out, options);
    CHECK(run.output.find("3 student(s) graded before with other grading options or another rubric keep those "
                          "results: a, b, c") != std::string::npos);
    std::vector<std::string> jobs_only = options;  // --jobs changes no points
    jobs_only.insert(jobs_only.end(), {"--jobs", "3"});
    std::ofstream(rubric) << R"({"correctness_points": 8, "speed_points": 2})";
    run = grade_class(moved, out, jobs_only);
    CHECK(run.output.find("other grading options") == std::string::npos);

    // a's points changed by hand: kept, in the class's files. b's results.json broken by hand: b is
    // graded again, the broken file kept in previous/1/, and the console says so.
    json a = read_json(out / "students" / "a" / "results.json");
    a["points"] = 5.5;
    a["exercises"][0]["points"] = 5.5;
    std::ofstream(out / "students" / "a" / "results.json") << a.dump();
    std::ofstream(out / "students" / "b" / "results.json") << "{\"exercises\": [";
    run = grade_class(moved, out, options);
    INFO(run.output);
    CHECK(run.output.find("b/results.json is not grade's results (edited by hand?): graded again") !=
          std::string::npos);
    CHECK(run.output.find("2 already graded, 1 to grade") != std::string::npos);
    CHECK(read_text(out / "students" / "b" / "previous" / "1" / "results.json") == "{\"exercises\": [");
    CHECK(read_json(out / "students" / "b" / "results.json").at("points") == 8);
    CHECK(csv_without_run_columns(out / "class.csv").at(1) == "a,5.5,5.5,10,passed");

    // c withdrawn: left out of the class's files, said, its folder kept.
    fs::remove_all(moved / "c");
    run = grade_class(moved, out, options);
    INFO(run.output);
    CHECK(run.output.find("not students of " + moved.string() + " any more, left out of the class's files: c") !=
          std::string::npos);
    CHECK(csv_without_run_columns(out / "class.csv").size() == 3);  // the header, a and b
    CHECK(fs::is_regular_file(out / "students" / "c" / "results.json"));

    // Another grade class on this OUT holds b (its lock): this one leaves b to it and says so.
    fs::remove(out / "students" / "b" / "results.json");
    {
        const int fd = ::open((out / "students" / "b" / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        REQUIRE(fd >= 0);
        REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
        run = grade_class(moved, out, options);
        ::close(fd);
    }
    INFO(run.output);
    CHECK(run.status.code == 1);
    CHECK(run.output.find("b is being graded by another grade class; left to it") != std::string::npos);
    CHECK(!fs::exists(out / "students" / "b" / "results.json"));
    run = grade_class(moved, out, options);
    CHECK(run.output.find("1 already graded, 1 to grade") != std::string::npos);
    CHECK(fs::exists(out / "students" / "b" / "results.json"));
    fs::remove_all(dir);
}

// grade class's parts without grading anyone: the roster of each layout and its names, the shards,
// the GPUs, the command line, and the class's results, CSV and page from hand-made results.
#include <doctest/doctest.h>

#include <clocale>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <unistd.h>

#include "grading/class_grading.hpp"
#include "grading/class_results.hpp"
#include "grading/class_roster.hpp"
#include "grading/command_line.hpp"
#include "grading/json_schema.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using test_support::fresh_dir;

using test_support::write_file;

std::vector<std::string> names(const grading::Roster& roster)
{
    std::vector<std::string> list;
    for (const auto& s : roster.students) list.push_back(s.name);
    return list;
}

json schema()
{
    return json::parse(std::ifstream(GRADER_CLASS_SCHEMA_FILE));
}

// The schema of one of the class schema's $defs (the record of OUT/students/<name>/record.json).
json schema_of(const std::string& def)
{
    const json whole = schema();
    json part = whole.at("$defs").at(def);
    part["$defs"] = whole.at("$defs");
    return part;
}

// A grading's results.json, as much of it as the class reads (and as grade writes it).
json grade_results(double points, const std::vector<std::pair<std::string, std::string>>& cases,
                   double speedup = 0, const std::string& exercise_status = "graded")
{
    json case_list = json::array();
    int index = 0;
    for (const auto& [label, status] : cases) {
        json c = {{"index", index++}, {"label", label}, {"status", status}, {"summary", status == "pass" ? "" : "3 of 31 output element(s) wrong"}, {"timing", nullptr}};
        if (speedup > 0 && index == 1) c["timing"] = {{"speedup_vs_reference", speedup}};
        case_list.push_back(c);
    }
    return {{"schema_version", 6},
            {"device", "fake device (CPU)"},
            {"points", points},
            {"max_points", 10.0},
            {"exercises",
             {{{"name", "scan_kogge_stone"},
               {"status", exercise_status},
               {"message", ""},
               {"points", points},
               {"max_points", 10.0},
               {"correctness_points", std::min(points, 8.0)},
               {"speed_points", std::max(0.0, points - 8.0)},
               {"library_use", json::array()},
               {"cases", case_list}}}}};
}

grading::StudentFolder student(const std::string& name, std::optional<json> results, std::optional<json> previous = {})
{
    grading::StudentFolder f;
    f.record.name = name;
    f.record.source = "/submissions/" + name;
    f.record.gpu = "0";
    f.record.gpu_label = "0 (fake)";
    f.record.started_at = "2026-01-01T00:00:00Z";
    f.record.seconds = 1.5;
    f.record.outcome = results ? "graded" : "not_graded";
    if (!results) f.record.message = "its grade died: signal 9 (SIGKILL)";
    f.results = std::move(results);
    f.previous = std::move(previous);
    return f;
}

grading::CommandLine parse(std::vector<std::string> args)
{
    args.insert(args.begin(), {"grade", "class"});
    return grading::parse_command_line(args, grading::GradeOptions{});
}

// A roster's students, by folder, -> their shard of `count`.
std::map<std::string, int> shards_of(const grading::Roster& roster, int count)
{
    std::map<std::string, int> shards;
    for (const auto& s : roster.students) shards[s.source] = grading::shard_of_student(s, count);
    return shards;
}

}  // namespace

TEST_CASE("student names are clean file names, never . or .., hidden, an option or a formula")
{
    using grading::clean_student_name;
    CHECK(clean_student_name("alice") == "alice");
    CHECK(clean_student_name("Jane Doe") == "Jane_Doe");
    CHECK(clean_student_name("jane.doe@uni.edu") == "jane.doe@uni.edu");
    CHECK(clean_student_name("..") == "student");
    CHECK(clean_student_name(".") == "student");
    CHECK(clean_student_name("../../etc/passwd") == "etc_passwd");
    CHECK(clean_student_name(".hidden") == "hidden");
    CHECK(clean_student_name("-rf") == "rf");
    CHECK(clean_student_name("=cmd|' /C calc'!A0") == "cmd_C_calc_A0");
    CHECK(clean_student_name("@SUM(1)") == "SUM_1");
    CHECK(clean_student_name("<script>alert(1)</script>") == "script_alert_1_script");
    CHECK(clean_student_name("") == "student");
    CHECK(clean_student_name("\xff\xfe\x1b[2J") == "2J");
    CHECK(clean_student_name(std::string(500, 'a')).size() == 64);
}

TEST_CASE("a plain folder: one student per folder; files, links and hidden entries skipped; names unique")
{
    const fs::path dir = fresh_dir("plain");
    write_file(dir / "bob" / "scan_kogge_stone.cu", "");
    write_file(dir / "alice" / "x.cu", "");
    write_file(dir / "Alice!" / "x.cu", "");  // cleans to Alice, distinct from alice
    write_file(dir / "a b" / "x.cu", "");
    write_file(dir / "a_b" / "x.cu", "");  // a b cleans to a_b too: a name needing no cleaning is its folder's
    write_file(dir / ".git" / "HEAD", "");
    write_file(dir / "notes.txt", "");
    fs::create_directory_symlink("/etc", dir / "link");
    const grading::Roster roster = grading::discover_roster(dir.string());
    CHECK(roster.layout == grading::RosterLayout::plain);
    CHECK(names(roster) == std::vector<std::string>{"Alice", "a_b", "a_b-2", "alice", "bob"});
    for (const auto& s : roster.students) CHECK(fs::path(s.source).is_absolute());
    CHECK(roster.students[1].source == (dir / "a_b").string());
    CHECK(roster.students[2].source == (dir / "a b").string());
    // The file and the link skipped; "Alice!" and "a b" named otherwise than their folders.
    CHECK(roster.notes.size() == 4);
    fs::remove_all(dir);
}

TEST_CASE("a Gradescope export: students named after the submitters of submission_metadata.yml")
{
    const fs::path dir = fresh_dir("gradescope");
    write_file(dir / "submission_101" / "scan_kogge_stone.cu", "");
    write_file(dir / "submission_102" / "scan_kogge_stone.cu", "");
    write_file(dir / "submission_103" / "scan_kogge_stone.cu", "");
    write_file(dir / "submission_104" / "scan_kogge_stone.cu", "");
    write_file(dir / "submission_metadata.yml", R"(submission_101:
  :submitters:
  - :name: Solo Student
    :sid: '100'
    :email: solo@uni.edu
  :created_at: 2026-01-10 10:00:00.000000000 -08:00
  :score: 10.0
submission_102:
  :submitters:
  - :name: "<img src=x onerror=alert(1)>"
    :sid: '200'
    :email: ''
  - :name: Pair Two
    :sid: '201'
    :email: two@uni.edu
  :history:
  - :submitters:
    - :name: Someone Else
submission_103:
  :submitters:
  - :name: ../../Name Only
)");
    const grading::Roster roster = grading::discover_roster(dir.string());
    CHECK(roster.layout == grading::RosterLayout::gradescope);
    CHECK(names(roster) == std::vector<std::string>{"200", "Name_Only", "solo@uni.edu", "submission_104"});
    const auto& pair = roster.students[0];
    REQUIRE(pair.submitters.size() == 2);
    CHECK(pair.submitters[0].name == "<img src=x onerror=alert(1)>");
    CHECK(pair.submitters[1].email == "two@uni.edu");
    CHECK(roster.students[2].submitters[0].sid == "100");
    CHECK(roster.notes.size() == 2);  // submission_104 is not in the metadata; "../../Name Only" cleaned
    fs::remove_all(dir);
}

TEST_CASE("a GitHub Classroom clone: <assignment>-<username> folders, also inside <assignment>-submissions")
{
    const fs::path dir = fresh_dir("classroom");
    write_file(dir / "hw1-submissions" / "hw1-octocat" / "scan_kogge_stone.cu", "");
    write_file(dir / "hw1-submissions" / "hw1-monalisa" / "scan_kogge_stone.cu", "");
    write_file(dir / "hw1-submissions" / "hw1-mona-lisa2" / "scan_kogge_stone.cu", "");
    const grading::Roster roster = grading::discover_roster(dir.string());
    CHECK(roster.layout == grading::RosterLayout::github_classroom);
    CHECK(names(roster) == std::vector<std::string>{"mona-lisa2", "monalisa", "octocat"});
    // One folder alone says nothing of a prefix: plain.
    const fs::path one = fresh_dir("classroom_one");
    write_file(one / "hw1-octocat" / "x.cu", "");
    CHECK(grading::discover_roster(one.string()).layout == grading::RosterLayout::plain);
    fs::remove_all(dir);
    fs::remove_all(one);
}

TEST_CASE("no student folder, or no folder at all, is a clear error")
{
    const fs::path dir = fresh_dir("empty");
    write_file(dir / "scan_kogge_stone.cu", "");
    CHECK_THROWS_WITH_AS(grading::discover_roster(dir.string()), doctest::Contains("no student folders"),
                         grading::RosterError);
    CHECK_THROWS_WITH_AS(grading::discover_roster((dir / "missing").string()), doctest::Contains("no such directory"),
                         grading::RosterError);
    fs::remove_all(dir);
}

TEST_CASE("shards: the first 8 bytes of the SHA-256 of the folder's name, mod N")
{
    // SHA-256 of "" and "abc" (FIPS 180-4's example), their first 8 bytes.
    CHECK(grading::shard_hash("") == 0xe3b0c44298fc1c14ull);
    CHECK(grading::shard_hash("abc") == 0xba7816bf8f01cfeaull);
    // The key is the folder's name, not the student's name nor the rest of the path.
    const grading::RosterEntry one{"alice", "/x/hw1-alice", {}}, other{"bob", "/y/z/hw1-alice", {}};
    for (int n : {2, 3, 4, 7, 8})
        CHECK(grading::shard_of_student(one, n) == static_cast<int>(grading::shard_hash("hw1-alice") % n));
    CHECK(grading::shard_of_student(one, 8) == grading::shard_of_student(other, 8));
    CHECK(grading::shard_of_student(one, 1) == 0);
}

TEST_CASE("shards: every student in exactly one; adding or removing a folder moves no other student")
{
    const fs::path dir = fresh_dir("shards");
    // A GitHub Classroom clone whose names change when a folder comes: with only hw1-mona-lisa and
    // hw1-mona-lisb the assignment prefix is "hw1-mona-"; hw1-bob makes it "hw1-".
    std::vector<std::string> folders = {"hw1-mona-lisa", "hw1-mona-lisb"};
    for (int k = 0; k < 23; ++k) folders.push_back("hw1-mona-student" + std::to_string(k));
    for (const auto& f : folders) write_file(dir / f / "scan_kogge_stone.cu", "");
    const grading::Roster before = grading::discover_roster(dir.string());
    REQUIRE(before.students.size() == folders.size());
    CHECK(before.students.front().name == "lisa");
    for (int n : {1, 2, 3, 4, 8}) {
        CAPTURE(n);
        std::multiset<std::string> seen;
        for (int i = 0; i < n; ++i)
            for (const auto& s : grading::shard_of(before.students, i, n)) seen.insert(s.source);
        CHECK(seen.size() == before.students.size());  // the union is the roster, each once
        CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == before.students.size());
    }

    write_file(dir / "hw1-bob" / "scan_kogge_stone.cu", "");  // a late submission
    const grading::Roster added = grading::discover_roster(dir.string());
    REQUIRE(added.students.size() == folders.size() + 1);
    CHECK(added.students.front().name == "bob");  // the names changed (prefix "hw1-"): "mona-lisa"...
    fs::remove_all(dir / "hw1-mona-student7");    // and a student withdrew
    const grading::Roster removed = grading::discover_roster(dir.string());
    for (int n : {2, 3, 4, 8}) {
        CAPTURE(n);
        const auto was = shards_of(before, n), now = shards_of(added, n), after = shards_of(removed, n);
        for (const auto& [source, shard] : was) {
            CAPTURE(source);
            CHECK(now.at(source) == shard);
            if (after.count(source)) CHECK(after.at(source) == shard);
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("shards: balanced on average over many folder names, also names that differ in one byte's high bits")
{
    std::vector<grading::RosterEntry> students;
    for (int k = 0; k < 4000; ++k) students.push_back({"s", "/c/student" + std::to_string(k), {}});
    for (int n : {2, 4, 8, 5}) {
        CAPTURE(n);
        for (int i = 0; i < n; ++i) {
            const double share = static_cast<double>(grading::shard_of(students, i, n).size()) / 4000.0;
            CHECK(share > 0.8 / n);
            CHECK(share < 1.2 / n);
        }
    }
    // Folder names that differ only in the high bits of one byte (what FNV-1a would put in one shard of 2).
    std::set<int> of_two, of_four;
    for (const char c : std::string("acegikmoqsuwy")) {
        of_two.insert(grading::shard_of_student({"s", std::string("/c/x") + c, {}}, 2));
        of_four.insert(grading::shard_of_student({"s", std::string("/c/x") + c, {}}, 4));
    }
    CHECK(of_two.size() == 2);
    CHECK(of_four.size() == 4);
}

TEST_CASE("GPUs: --gpus, the fake device, CUDA_VISIBLE_DEVICES, nvidia-smi -L, else CUDA's device 0")
{
    grading::Toolchain real;
    real.nvcc = "/nonexistent/bin/nvcc";
    int probes = 0;
    const grading::DeviceProbe h100 = [&probes] {
        ++probes;
        grading::DeviceState d;
        d.name = "NVIDIA H100";
        d.uuid = "GPU-aaaa";
        return d;
    };
    const grading::DeviceProbe none = [] {
        grading::DeviceState d;
        d.error = "cudaErrorNoDevice (no CUDA-capable device is detected)";
        return d;
    };
    const std::string smi = "GPU 0: NVIDIA H200 (UUID: GPU-11111111-2222-3333-4444-555555555555)\n"
                            "GPU 1: NVIDIA H200 (UUID: GPU-66666666-2222-3333-4444-555555555555)\n";

    auto choice = grading::choose_gpus({"0", "1"}, real, h100, std::nullopt, std::nullopt);
    REQUIRE(choice.gpus.size() == 2);
    CHECK(!choice.fake);
    CHECK(choice.gpus[1].visible == "1");
    // An index counts in the class's own CUDA_VISIBLE_DEVICES, as CUDA's device numbers do.
    choice = grading::choose_gpus({"1"}, real, h100, std::string("4,6"), std::nullopt);
    REQUIRE(choice.gpus.size() == 1);
    CHECK(choice.gpus[0].visible == "6");
    CHECK(grading::choose_gpus({"2"}, real, h100, std::string("4,6"), std::nullopt).error.find("sees 2") !=
          std::string::npos);

    choice = grading::choose_gpus({}, real, h100, std::string("2,3"), smi);
    CHECK(choice.gpus.size() == 2);
    CHECK(choice.gpus[0].visible == "2");
    CHECK(grading::choose_gpus({}, real, h100, std::string(""), smi).error.find("no GPU") != std::string::npos);
    CHECK(!grading::choose_gpus({}, real, h100, std::string("NoDevFiles"), smi).error.empty());

    choice = grading::choose_gpus({}, real, h100, std::nullopt, smi);
    REQUIRE(choice.gpus.size() == 2);
    CHECK(choice.gpus[1].visible == "GPU-66666666-2222-3333-4444-555555555555");
    CHECK(choice.gpus[1].label == "1 (NVIDIA H200)");

    choice = grading::choose_gpus({}, real, h100, std::nullopt, std::nullopt);
    REQUIRE(choice.gpus.size() == 1);
    CHECK(choice.gpus[0].visible == "0");
    CHECK(grading::choose_gpus({}, real, none, std::nullopt, std::nullopt).error.find("no usable GPU") !=
          std::string::npos);

    // The fake toolchain's device: one virtual GPU, without asking CUDA.
    grading::Toolchain fake;
    fake.nvcc = FAKE_NVCC;
    probes = 0;
    choice = grading::choose_gpus({}, fake, h100, std::nullopt, std::nullopt);
    CHECK(probes == 0);
    CHECK(choice.fake);
    CHECK(grading::choose_gpus({"0", "1"}, fake, h100, std::nullopt, std::nullopt).fake);
    REQUIRE(choice.gpus.size() == 1);
    CHECK(choice.gpus[0].label.find("fake device") != std::string::npos);
}

TEST_CASE("nvidia-smi -L: GPUs by UUID, a GPU in MIG mode by its instances")
{
    const auto gpus = grading::parse_nvidia_smi_list(
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aaaaaaaa-1111-2222-3333-444444444444)\n"
        "  MIG 3g.40gb     Device  0: (UUID: MIG-bbbbbbbb-1111-2222-3333-444444444444)\n"
        "  MIG 3g.40gb     Device  1: (UUID: MIG-cccccccc-1111-2222-3333-444444444444)\n"
        "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-dddddddd-1111-2222-3333-444444444444)\n"
        "No devices were found\n");
    REQUIRE(gpus.size() == 3);
    CHECK(gpus[0].visible == "MIG-bbbbbbbb-1111-2222-3333-444444444444");
    CHECK(gpus[1].label.find("MIG 3g.40gb") != std::string::npos);
    CHECK(gpus[2].visible == "GPU-dddddddd-1111-2222-3333-444444444444");
    CHECK(grading::parse_nvidia_smi_list("").empty());
}

TEST_CASE("grade class's command line: its options, the grading options checked as one grading's")
{
    const fs::path dir = fresh_dir("command_line");
    write_file(dir / "alice" / "x.cu", "");
    const std::string subs = dir.string();
    auto line = parse({"--submissions", subs, "--output-dir", "out", "--gpus", "1,0", "--per-gpu", "5", "--shard",
                       "1/4", "--regrade", "alice", "bob", "--exercise", "scan_kogge_stone", "--reps", "5"});
    REQUIRE(line.class_grading);
    CHECK(line.class_grading->gpus == std::vector<std::string>{"0", "1"});
    CHECK(line.class_grading->per_gpu == 5);
    // Two at once by default: more is slower for correct submissions (docs/gpu-runs.md, session 15).
    CHECK(parse({"--submissions", subs, "--output-dir", "out"}).class_grading->per_gpu == 2);
    CHECK(line.class_grading->shard_index == 1);
    CHECK(line.class_grading->shard_count == 4);
    CHECK(line.class_grading->regrade == std::vector<std::string>{"alice", "bob"});
    CHECK(line.class_grading->grade_args == std::vector<std::string>{"--exercise", "scan_kogge_stone", "--reps", "5"});
    CHECK(line.class_grading->options.request.exercises == std::vector<std::string>{"scan_kogge_stone"});

    line = parse({"merge", "--output-dir", "out", "a", "b"});
    REQUIRE(line.class_merge);
    CHECK(line.class_merge->shard_dirs == std::vector<std::string>{"a", "b"});
    CHECK(line.class_merge->submissions.empty());
    line = parse({"merge", "--output-dir", "out", "--submissions", "subs", "a"});
    REQUIRE(line.class_merge);
    CHECK(line.class_merge->submissions == "subs");
    CHECK(line.class_merge->shard_dirs == std::vector<std::string>{"a"});

    const auto refused = [&](std::vector<std::string> args, const std::string& says) {
        const auto result = parse(args);
        CHECK(!result.class_grading);
        CHECK(result.exit_code == grading::exit_usage_error);
        CHECK_MESSAGE(result.message.find(says) != std::string::npos, result.message);
    };
    refused({"--output-dir", "out"}, "--submissions is required");
    refused({"--submissions", subs}, "--output-dir is required");
    refused({"--submissions", subs, "--output-dir", "o", "--shard", "4/4"}, "0 <= I < N");
    refused({"--submissions", subs, "--output-dir", "o", "--shard", "x"}, "expected I/N");
    refused({"--submissions", subs, "--output-dir", "o", "--gpus", "0,0"}, "twice");
    refused({"--submissions", subs, "--output-dir", "o", "--gpus", "0;rm"}, "CUDA device");
    refused({"--submissions", subs, "--output-dir", "o", "--per-gpu", "0"}, "--per-gpu");
    refused({"--submissions", subs, "--output-dir", "o", "--output", "x.json"}, "set by grade class");
    refused({"--submissions", subs, "--output-dir", "o", "--work-dir=w"}, "set by grade class");
    refused({"--submissions", subs, "--output-dir", "o", "--exercise", "nope"}, "unknown exercise");
    refused({"--submissions", subs, "--output-dir", "o", "--reps", "0"}, "grade class --help");
    refused({"merge", "--output-dir", "o", "--reps", "3"}, "only --output-dir");
    CHECK(parse({"--help"}).message.find("grade class merge") != std::string::npos);
    CHECK(parse({"--help"}).exit_code == grading::exit_success);
    fs::remove_all(dir);
}

TEST_CASE("the class's results: statuses, failing cases, grader-side problems, changes after a regrade; every file "
          "matches its schema")
{
    const json full = grade_results(10, {{"n=1/int", "pass"}, {"n=2/int", "pass"}}, 1.02);
    const json stub = grade_results(0, {{"n=1/int", "wrong"}, {"n=2/int", "wrong"}});
    const json hang = grade_results(4, {{"n=1/int", "pass"}, {"n=2/int", "timeout"}});
    const json invalid = grade_results(0, {}, 0, "invalid_submission");
    std::vector<grading::StudentFolder> folders = {student("full", full), student("stub", stub, full),
                                                   student("hang", hang), student("crashed", std::nullopt),
                                                   student("refused", invalid)};
    const json results = grading::class_results(folders, {});
    const auto errors = grading::validate_json_schema(schema(), results);
    for (const auto& e : errors) MESSAGE(e.instance_path << " " << e.message);
    CHECK(errors.empty());
    CHECK(results.at("exercises") == json::array({"scan_kogge_stone"}));
    const json& summary = results.at("summary");
    CHECK(summary.at("students") == 5);
    CHECK(summary.at("passed") == 1);
    CHECK(summary.at("failed") == 3);
    CHECK(summary.at("not_graded") == 1);
    CHECK(summary.at("median_points") == 2.0);
    // Students in name order; one not graded has no points.
    CHECK(results.at("students").at(0).at("name") == "crashed");
    CHECK(results.at("students").at(0).at("points").is_null());
    CHECK(results.at("students").at(1).at("exercises").at(0).at("speedup") == 1.02);
    // n=2/int failed for two students, with the diagnosis's numbers left out.
    const json& top = results.at("failing_cases").at(0);
    CHECK(top.at("label") == "n=2/int");
    CHECK(top.at("students") == 2);
    CHECK(top.at("diagnoses").at(0).at("summary") == "# of # output element(s) wrong");
    std::set<std::string> kinds;
    for (const auto& p : results.at("problems")) kinds.insert(p.at("kind").get<std::string>());
    CHECK(kinds == std::set<std::string>{"not_graded", "timeout", "invalid_submission"});
    REQUIRE(results.at("changes").size() == 1);
    CHECK(results.at("changes").at(0).at("student") == "stub");
    CHECK(results.at("changes").at(0).at("before") == 10.0);
    CHECK(results.at("changes").at(0).at("after") == 0.0);
    CHECK(results.at("changes").at(0).at("exercises").at(0).at("name") == "scan_kogge_stone");

    // record.json's shape is in the same schema file.
    const json record = grading::to_json(folders[3].record);
    CHECK(grading::validate_json_schema(schema_of("record"), record).empty());
    CHECK(grading::record_from_json(record).message == folders[3].record.message);
    json bad = record;
    bad["name"] = "../x";
    CHECK(!grading::validate_json_schema(schema_of("record"), bad).empty());
}

TEST_CASE("class.csv: one row per student, a stable header, RFC 4180 quoting, '.' decimals, no formula")
{
    std::vector<grading::StudentFolder> folders = {student("b", grade_results(7.666666, {{"n=1/int", "wrong"}})),
                                                   student("a", std::nullopt)};
    folders[0].record.gpu = "GPU-1,\"x\"";
    folders[1].record.gpu = "=HYPERLINK(\"x\")";
    // A locale with ',' decimals must not change the numbers.
    const char* locale = std::setlocale(LC_NUMERIC, "de_DE.UTF-8");
    const std::string csv = grading::class_csv(grading::class_results(folders, {"scan_kogge_stone"}));
    std::setlocale(LC_NUMERIC, "C");
    if (!locale) MESSAGE("no de_DE locale here: the decimals were checked in C only");
    CHECK(csv == "student,scan_kogge_stone,total,max_points,status,gpu,seconds\r\n"
                 "a,,,,not_graded,\"'=HYPERLINK(\"\"x\"\")\",1.5\r\n"
                 "b,7.67,7.67,10,failed,\"GPU-1,\"\"x\"\"\",1.5\r\n");
}

TEST_CASE("report.html: plots in inline SVG, nothing that loads or runs, every student text escaped")
{
    json hostile = grade_results(3, {{"n=1/int", "wrong"}});
    hostile["exercises"][0]["cases"][0]["summary"] = "<script>alert('x')</script> & \"q\" \xff";
    hostile["exercises"][0]["library_use"] = {"<b>CUB</b>"};
    std::vector<grading::StudentFolder> folders = {student("eve", hostile), student("bob", grade_results(10, {{"n=1/int", "pass"}}, 0.5))};
    folders[0].record.submitters = {{"<img src=x onerror=alert(1)>", "1", "eve@x\"onload=\"y"}};
    folders[1].record.message = "</td><script>";
    const std::string html = grading::class_report_html(grading::class_results(folders, {}));
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("<b>CUB") == std::string::npos);
    CHECK(html.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;") != std::string::npos);
    CHECK(html.find("eve@x&quot;onload=&quot;y") != std::string::npos);
    CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // the SVG namespace only
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("default-src 'none'") != std::string::npos);
    CHECK(html.find("<svg class=\"plot histogram\"") != std::string::npos);
    CHECK(html.find("<svg class=\"plot speedups\"") != std::string::npos);
    CHECK(grading::html_escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST_CASE("the class's files are written atomically, and a student's folder reads back with its previous results")
{
    const fs::path out = fresh_dir("files");
    const fs::path dir = out / "students" / "alice";
    write_file(dir / "results.json", grade_results(4, {{"n=1/int", "wrong"}}).dump());
    write_file(dir / "previous" / "1" / "results.json", grade_results(1, {{"n=1/int", "wrong"}}).dump());
    write_file(dir / "previous" / "2" / "results.json", grade_results(2, {{"n=1/int", "wrong"}}).dump());
    write_file(dir / "previous" / "3" / "results.json", "{ cut sho");
    grading::StudentRecord record;
    record.name = "alice";
    record.outcome = "graded";
    write_file(dir / "record.json", grading::to_json(record).dump());
    const grading::StudentFolder folder = grading::read_student_folder(dir.string());
    REQUIRE(folder.results);
    REQUIRE(folder.previous);
    CHECK(folder.previous->at("points") == 2.0);  // the latest that parses
    CHECK(!grading::read_grade_results((out / "missing.json").string()));
    write_file(out / "not_results.json", "[1, 2]");
    CHECK(!grading::read_grade_results((out / "not_results.json").string()));
    grading::write_class_files(out.string(), grading::class_results({folder}, {}));
    for (const char* file : {"results.json", "class.csv", "report.html"}) CHECK(fs::is_regular_file(out / file));
    std::size_t leftovers = 0;
    for (const auto& entry : fs::directory_iterator(out)) leftovers += entry.path().filename().string()[0] == '.';
    CHECK(leftovers == 0);
    fs::remove_all(out);
}

TEST_CASE("clock_text")
{
    CHECK(grading::clock_text(0) == "0:00");
    CHECK(grading::clock_text(65.4) == "1:05");
    CHECK(grading::clock_text(3725) == "1:02:05");
}

namespace {

// OUT/students/<name>/ as grade class leaves it: record.json and, when `points` is given, results.json.
void graded_folder(const fs::path& out, const std::string& name, const std::string& source, const std::string& shard,
                   std::optional<double> points)
{
    grading::StudentRecord record;
    record.name = name;
    record.source = source;
    record.shard = shard;
    record.started_at = "2026-01-01T00:00:00Z";
    record.outcome = points ? "graded" : "not_graded";
    write_file(out / "students" / name / "record.json", grading::to_json(record).dump());
    if (points)
        write_file(out / "students" / name / "results.json",
                   grade_results(*points, {{"n=1/int", *points >= 10 ? "pass" : "wrong"}}).dump());
}

struct Merged {
    int code;
    std::string out, err;
    json results;
};

Merged merge_class(const fs::path& out, const std::vector<std::string>& shards, const std::string& submissions = {})
{
    grading::ClassMergeCommand command;
    command.output_dir = out.string();
    command.shard_dirs = shards;
    command.submissions = submissions;
    std::ostringstream console, errors;
    Merged m{grading::run_class_merge(command, console, errors), console.str(), errors.str(), {}};
    if (fs::exists(out / "results.json")) m.results = json::parse(std::ifstream(out / "results.json"));
    return m;
}

std::map<std::string, std::string> statuses(const json& class_results)
{
    std::map<std::string, std::string> status;
    for (const auto& s : class_results.at("students")) status[s.at("name")] = s.at("status");
    return status;
}

}  // namespace

TEST_CASE("merge: a student graded in two shards is kept once, and the merge says which it kept")
{
    const fs::path dir = fresh_dir("merge_twice");
    graded_folder(dir / "s0", "alice", "/c/alice", "0/2", 10);
    graded_folder(dir / "s0", "bob", "/c/bob", "0/2", 10);
    graded_folder(dir / "s1", "alice", "/c/alice", "1/2", 4);  // graded again elsewhere, other points
    graded_folder(dir / "s1", "carol", "/c/carol", "1/2", 10);
    Merged m = merge_class(dir / "out", {(dir / "s0").string(), (dir / "s1").string()});
    INFO(m.out << m.err);
    CHECK(m.code == grading::exit_graded_with_failures);
    CHECK(m.err.find("alice was graded twice: kept " + (dir / "out" / "students" / "alice").string() +
                     " (shard 0/2, started 2026-01-01T00:00:00Z, 10 points), left out " +
                     (dir / "s1" / "students" / "alice").string() + " (shard 1/2") != std::string::npos);
    CHECK(statuses(m.results) ==
          std::map<std::string, std::string>{{"alice", "passed"}, {"bob", "passed"}, {"carol", "passed"}});
    CHECK(m.results.at("students").size() == 3);
    CHECK(grading::validate_json_schema(schema(), m.results).empty());

    // The same merge again: what it copied is no duplicate.
    m = merge_class(dir / "out", {(dir / "s0").string()});
    CHECK(m.err.empty());
    CHECK(m.code == grading::exit_success);

    // A copy made by hand beside a student, a link, a name no roster gives: none is a student.
    graded_folder(dir / "out", "alice (copy)", "/c/alice", "0/2", 10);
    graded_folder(dir / "out", "=HYPERLINK(1)", "/c/x", "0/2", 10);
    fs::create_directory_symlink(dir / "out" / "students" / "alice", dir / "out" / "students" / "zed");
    m = merge_class(dir / "out", {});
    INFO(m.out << m.err);
    CHECK(m.out.find("not students' folders, left out: =HYPERLINK(1), alice (copy), zed") != std::string::npos);
    CHECK(m.results.at("students").size() == 3);
    CHECK(grading::validate_json_schema(schema(), m.results).empty());
    fs::remove_all(dir);
}

TEST_CASE("merge --submissions: roster students in no shard named with their shard, removed students left out")
{
    const fs::path dir = fresh_dir("merge_roster");
    const fs::path subs = dir / "subs";
    for (const char* s : {"alice", "bob", "carol", "dave"}) write_file(subs / s / "scan_kogge_stone.cu", "");
    const grading::Roster roster = grading::discover_roster(subs.string());
    const fs::path out = dir / "out";
    std::string missing;
    for (const auto& s : roster.students) {
        const std::string shard = std::to_string(grading::shard_of_student(s, 2)) + "/2";
        if (s.name == "carol" || s.name == "dave")
            missing += (missing.empty() ? "" : ", ") + s.name + " (shard " + shard + ")";
        else
            graded_folder(out, s.name, s.source, shard, 10);
    }
    graded_folder(out, "zed", "/old/zed", "1/2", 10);  // a student removed since
    // A folder under a roster name that holds another folder's results (a name that moved).
    graded_folder(out, "dave", (subs / "dave!").string(), "0/2", 10);

    Merged m = merge_class(out, {}, subs.string());
    INFO(m.out << m.err);
    CHECK(m.code == grading::exit_graded_with_failures);
    CHECK(m.err.find("2 of the 4 students of " + subs.string() + " are in no shard's results: " + missing) !=
          std::string::npos);
    CHECK(m.err.find("dave in " + (out / "students").string() + " holds the results of " + (subs / "dave!").string()) !=
          std::string::npos);
    CHECK(m.out.find("left out of the class, not students of " + subs.string() + ": zed") != std::string::npos);
    CHECK(statuses(m.results) ==
          std::map<std::string, std::string>{
              {"alice", "passed"}, {"bob", "passed"}, {"carol", "not_graded"}, {"dave", "not_graded"}});
    for (const auto& s : m.results.at("students"))
        if (s.at("name") == "carol")
            CHECK(s.at("message").get<std::string>().find("graded by no shard (its shard: ") == 0);
    CHECK(grading::validate_json_schema(schema(), m.results).empty());
    CHECK(fs::is_directory(out / "students" / "zed"));  // kept, only left out of the class's files

    // Without --submissions the merge cannot know the roster: it counts each shard's students.
    fs::remove_all(out / "students" / "zed");
    fs::remove_all(out / "students" / "dave");
    std::vector<std::string> graded;
    for (const auto& s : roster.students)
        if (s.name == "alice" || s.name == "bob") graded.push_back(std::to_string(grading::shard_of_student(s, 2)));
    m = merge_class(out, {});
    INFO(m.out << m.err);
    CHECK(m.out.find("grade class merge: 2 students (shard ") != std::string::npos);
    if (graded[0] == graded[1])
        CHECK(m.out.find("no student of shard " + std::to_string(1 - std::stoi(graded[0])) + "/2") !=
              std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("merge without --submissions: one folder graded under two names is said")
{
    const fs::path dir = fresh_dir("merge_two_names");
    graded_folder(dir, "lisa", "/c/hw1-mona-lisa", "0/2", 10);
    graded_folder(dir, "mona-lisa", "/c/hw1-mona-lisa", "0/2", 10);
    graded_folder(dir, "bob", "/c/hw1-bob", "1/2", 10);
    const Merged m = merge_class(dir, {});
    INFO(m.out << m.err);
    CHECK(m.code == grading::exit_graded_with_failures);
    CHECK(m.err.find("the folder /c/hw1-mona-lisa was graded as lisa, mona-lisa") != std::string::npos);
    CHECK(m.err.find("different sets of grading options") == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("merge: students graded with different options or rubrics (record.json's grading) are said")
{
    const fs::path dir = fresh_dir("merge_options");
    graded_folder(dir, "alice", "/c/alice", "0/2", 10);
    graded_folder(dir, "bob", "/c/bob", "1/2", 10);
    Merged m = merge_class(dir, {});
    CHECK(m.code == grading::exit_success);
    for (const auto& [name, digest] :
         {std::pair<std::string, std::string>{"alice", "00000000000000aa"}, {"bob", "00000000000000bb"}}) {
        json record = json::parse(std::ifstream(dir / "students" / name / "record.json"));
        record["grading"] = digest;
        std::ofstream(dir / "students" / name / "record.json") << record.dump();
    }
    m = merge_class(dir, {});
    INFO(m.out << m.err);
    CHECK(m.code == grading::exit_graded_with_failures);
    CHECK(m.err.find("graded with 2 different sets of grading options or rubrics (record.json's \"grading\"):\n  "
                     "00000000000000aa: 1 (alice)\n  00000000000000bb: 1 (bob)") != std::string::npos);
    fs::remove_all(dir);
}

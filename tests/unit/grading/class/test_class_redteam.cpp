// Red-team findings against `grade class` (issue 21) that need no GPU and no grading: a student
// controls the name and the contents of their own folder in a class. Each test states the secure
// answer; they fail until the hole is fixed.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "grading/build.hpp"
#include "grading/class_results.hpp"
#include "grading/class_roster.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

using test_support::fresh_dir;

using test_support::write_file;

std::map<std::string, std::string> source_by_name(const grading::Roster& roster)
{
    std::map<std::string, std::string> sources;
    for (const auto& s : roster.students) sources[s.name] = s.source;
    return sources;
}

}  // namespace

// Attack: Mallory names her folder "-alice" (or "_alice", "@alice", " alice"): it cleans to "alice"
// and, as '-' sorts before 'a', comes first in folder order, so it takes the name "alice"; the real
// alice becomes "alice-2". class.csv identifies a student by that name alone (no folder, email or
// sid column), so whoever uploads it by name gives alice Mallory's points (here: none).
// Secure answer: a folder whose name is already a clean name keeps it whatever sorts before it;
// a folder whose name had to be cleaned never takes another folder's exact name.
TEST_CASE("red team: a folder named -alice does not take alice's name in the class")
{
    for (const char* thief : {"-alice", "_alice", "@alice", " alice"}) {
        CAPTURE(thief);
        const fs::path dir = fresh_dir("name_theft");
        write_file(dir / "alice" / "scan_kogge_stone.cu", "// alice's own work\n");
        write_file(dir / "bob" / "scan_kogge_stone.cu", "\n");
        write_file(dir / thief / "scan_kogge_stone.cu", "// FAKE_RUNNER: unwritten\n");
        const grading::Roster roster = grading::discover_roster(dir.string());
        const auto sources = source_by_name(roster);
        REQUIRE(sources.count("alice") == 1);
        CHECK(sources.at("alice") == (dir / "alice").string());
        fs::remove_all(dir);
    }
}

// Same in a GitHub Classroom clone (the name after "<assignment>-"): "hw1--alice" takes "alice".
TEST_CASE("red team: a GitHub Classroom folder hw1--alice does not take hw1-alice's name")
{
    const fs::path dir = fresh_dir("name_theft_classroom");
    write_file(dir / "hw1-alice" / "scan_kogge_stone.cu", "\n");
    write_file(dir / "hw1-bob" / "scan_kogge_stone.cu", "\n");
    write_file(dir / "hw1--alice" / "scan_kogge_stone.cu", "\n");
    const grading::Roster roster = grading::discover_roster(dir.string());
    CHECK(roster.layout == grading::RosterLayout::github_classroom);
    const auto sources = source_by_name(roster);
    REQUIRE(sources.count("alice") == 1);
    CHECK(sources.at("alice") == (dir / "hw1-alice").string());
    fs::remove_all(dir);
}

// A real student "alice-2" (a valid GitHub user name, or any folder) loses her name to the suffix
// given to a cleaned duplicate: folders "alice", "alice!" and "alice-2" become alice, alice-2 (the
// folder "alice!") and alice-2-2 (the folder "alice-2").
TEST_CASE("red team: the suffix of a cleaned duplicate never takes another folder's exact name")
{
    const fs::path dir = fresh_dir("suffix_theft");
    write_file(dir / "alice" / "x.cu", "");
    write_file(dir / "alice!" / "x.cu", "");
    write_file(dir / "alice-2" / "x.cu", "");
    const grading::Roster roster = grading::discover_roster(dir.string());
    const auto sources = source_by_name(roster);
    REQUIRE(sources.count("alice-2") == 1);
    CHECK(sources.at("alice-2") == (dir / "alice-2").string());
    fs::remove_all(dir);
}

// A GitHub Classroom clone: a .git/ and a .github/ at the top and in every student's repository. No
// hidden folder is a student, and a student's files are looked for outside their .git/ and .github/
// (the template's copy of a stub in .github/ must not make the student's own file "more than one").
TEST_CASE("red team: .git/ and .github/ are neither students nor submission content")
{
    const fs::path dir = fresh_dir("dot_folders");
    write_file(dir / ".git" / "HEAD", "ref: refs/heads/main\n");
    write_file(dir / ".github" / "workflows" / "classroom.yml", "");
    for (const char* student : {"hw1-alice", "hw1-bob"}) {
        write_file(dir / student / "scan_kogge_stone.cu", "// the student's own\n");
        write_file(dir / student / ".git" / "HEAD", "ref: refs/heads/main\n");
        write_file(dir / student / ".git" / "lost-found" / "scan_kogge_stone.cu", "// an old version\n");
        write_file(dir / student / ".github" / "classroom" / "scan_kogge_stone.cu", "// the template's stub\n");
    }
    const grading::Roster roster = grading::discover_roster(dir.string());
    CHECK(roster.layout == grading::RosterLayout::github_classroom);
    REQUIRE(roster.students.size() == 2);
    CHECK(roster.students[0].name == "alice");
    for (const auto& note : roster.notes) CHECK_MESSAGE(note.find(".git") == std::string::npos, note);

    const auto files = grading::find_submission(roster.students[0].source, {"scan_kogge_stone", "scan_brent_kung"});
    REQUIRE(files.size() == 2);
    CHECK(files[0].buildable());
    CHECK(files[0].path == (dir / "hw1-alice" / "scan_kogge_stone.cu").string());
    // Missing: the hidden folders not read are said, except a clone's own .git/.
    CHECK(files[1].path.empty());
    CHECK(files[1].unread == ".github/ (a hidden folder)");
    fs::remove_all(dir);
}

// A student folder that is a link (to a folder outside DIR, another course's or /etc) is not
// followed: skipped, and the console's notes name it.
TEST_CASE("red team: a student folder that is a link out of DIR is skipped and named, never followed")
{
    const fs::path dir = fresh_dir("linked_student");
    const fs::path outside = fresh_dir("linked_student_outside");
    write_file(dir / "alice" / "scan_kogge_stone.cu", "\n");
    write_file(outside / "scan_kogge_stone.cu", "// not a submission of this class\n");
    fs::create_directory_symlink(outside, dir / "mallory");
    fs::create_directory_symlink("/etc", dir / "etc");
    const grading::Roster roster = grading::discover_roster(dir.string());
    REQUIRE(roster.students.size() == 1);
    CHECK(roster.students[0].name == "alice");
    int named = 0;
    for (const auto& note : roster.notes)
        named += (note.find("mallory") != std::string::npos || note.find("etc") != std::string::npos) &&
                 note.find("a link") != std::string::npos;
    CHECK(named == 2);
    fs::remove_all(dir);
    fs::remove_all(outside);
}

// Folder names a student (or a Gradescope export of their e-mail) can make: a line break, bytes that
// are not UTF-8, a terminal sequence, a leading '-' (an option), 255 bytes, and spreadsheet formulas.
// Each is graded under a clean name that the console says, every note is one printable line, and no
// name or note starts a formula in class.csv.
TEST_CASE("red team: odd folder names are graded under clean names, said on the console, and no formula in class.csv")
{
    const fs::path dir = fresh_dir("odd_names");
    const std::vector<std::string> odd = {"new\nline", "\xff\xfe\x1b[2Jodd", "-rf", std::string(255, 'x'), "=1+1",
                                          "+cmd",      "@SUM(A1)",           "-2+3"};
    for (const auto& name : odd) write_file(dir / name / "scan_kogge_stone.cu", "\n");
    const grading::Roster roster = grading::discover_roster(dir.string());
    REQUIRE(roster.students.size() == odd.size());
    for (const auto& s : roster.students) {
        CAPTURE(s.name);
        CHECK(grading::clean_student_name(s.name) == s.name);
        CHECK(std::isalnum(static_cast<unsigned char>(s.name[0])));
        CHECK(s.name.size() <= 64);
    }
    CHECK(roster.notes.size() == odd.size());  // each folder: "the folder ... is the student ..."
    for (const auto& note : roster.notes) {
        CAPTURE(note);
        CHECK(note.find('\n') == std::string::npos);
        CHECK(note.find('\x1b') == std::string::npos);
        CHECK(note.find("is the student") != std::string::npos);
    }

    // class.csv from folders named anything (a merge reads OUT/students/ as it finds it).
    std::vector<grading::StudentFolder> folders;
    for (const std::string name : {"=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"}) {
        grading::StudentFolder f;
        f.record.name = name;
        f.record.outcome = "not_graded";
        folders.push_back(f);
    }
    const std::string csv = grading::class_csv(grading::class_results(folders, {"scan_kogge_stone"}));
    std::istringstream rows(csv);
    std::string row;
    std::getline(rows, row);  // the header
    int checked = 0;
    while (std::getline(rows, row)) {
        CAPTURE(row);
        const std::string first = row.substr(row[0] == '"' ? 1 : 0);
        CHECK(first[0] == '\'');
        ++checked;
    }
    CHECK(checked == 6);
    fs::remove_all(dir);
}

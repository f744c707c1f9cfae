// Red-team findings against `grade class` (issue 21) that need no GPU and no grading: a student
// controls the name and the contents of their own folder in a class. Each test states the secure
// answer; they fail until the hole is fixed.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

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

// Red-team findings against `grade class` (session 18): what a student controls in a Gradescope
// export (their display name, as Gradescope's Ruby writes it into submission_metadata.yml) or a
// GitHub Classroom clone. Each test states the secure answer and fails while the hole is open.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

#include "grading/class_roster.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

// Student name -> folder (file name) of a roster.
std::map<std::string, std::string> redteam18_folder_by_name(const grading::Roster& roster)
{
    std::map<std::string, std::string> folders;
    for (const auto& s : roster.students) folders[s.name] = fs::path(s.source).filename().string();
    return folders;
}

}  // namespace

// Attack: Mallory sets her Gradescope display name to "Mallory\n:email: alice@uni.edu\n- x". Ruby
// (Psych, like any libyaml emitter) writes a name with line breaks as a "|-" block whose lines are
// hers, verbatim, indented below ":name:". The line reader took ":email: alice@uni.edu" as her e-mail,
// and "- x" (an item at another indentation) as the end of her submitters, so her real ":email:" was
// never read: she was named alice@uni.edu. Her submission sorts first (an earlier submission_<id>, or
// Alice resubmitted later), so she took that exact name and Alice became "alice@uni.edu-2": class.csv
// gave Alice Mallory's points. A long name is folded onto more lines the same way (the second export).
// Secure answer: a line deeper than the submitter's keys goes on with the value above it; each student
// is named after their own e-mail.
TEST_CASE("red team: a Gradescope display name with line breaks never sets the e-mail, nor takes a name")
{
    const std::string alice = "submission_200:\n"
                              "  :submitters:\n"
                              "  - :name: Alice Real\n"
                              "    :sid: '1'\n"
                              "    :email: alice@uni.edu\n";
    const std::map<std::string, std::string> mallory_exports = {
        {"Mallory\n:email: alice@uni.edu\n- x", "submission_100:\n"
                                                "  :submitters:\n"
                                                "  - :name: |-\n"
                                                "      Mallory\n"
                                                "      :email: alice@uni.edu\n"
                                                "      - x\n"
                                                "    :sid: '2'\n"
                                                "    :email: mallory@uni.edu\n"},
        {"Mallory a :email: alice@uni.edu b - x", "submission_100:\n"
                                                  "  :submitters:\n"
                                                  "  - :name: 'Mallory a\n"
                                                  "      :email: alice@uni.edu b\n"
                                                  "      - x'\n"
                                                  "    :sid: '2'\n"
                                                  "    :email: mallory@uni.edu\n"},
    };
    for (const auto& [display_name, mallory] : mallory_exports) {
        CAPTURE(display_name);
        const fs::path dir = test_support::fresh_dir("redteam18_yaml_name");
        test_support::write_file(dir / "submission_100" / "scan_kogge_stone.cu", "// FAKE_RUNNER: unwritten\n");
        test_support::write_file(dir / "submission_200" / "scan_kogge_stone.cu", "// alice's own work\n");
        test_support::write_file(dir / "submission_metadata.yml", mallory + alice);
        const grading::Roster roster = grading::discover_roster(dir.string());
        const auto folders = redteam18_folder_by_name(roster);
        std::string given;
        for (const auto& [name, folder] : folders) given += name + " <- " + folder + "; ";
        INFO("named: " << given);
        CHECK(folders == std::map<std::string, std::string>{{"alice@uni.edu", "submission_200"},
                                                            {"mallory@uni.edu", "submission_100"}});
        for (const auto& s : roster.students) {
            if (s.name != "mallory@uni.edu") continue;
            REQUIRE(s.submitters.size() == 1);
            CHECK(s.submitters[0].name == display_name);
            CHECK(s.submitters[0].sid == "2");
            CHECK(s.submitters[0].email == "mallory@uni.edu");
        }
        fs::remove_all(dir);
    }
}

// Attack: a submitter without an e-mail (or without an e-mail and an SID) is named after their SID or
// display name, text they may choose. Mallory, with neither e-mail nor SID, sets her display name to
// Alice's e-mail; her submission sorts first, and both names needed no cleaning: she took
// "alice@uni.edu" and Alice became "alice@uni.edu-2". Same with an SID set to Alice's e-mail, or a
// display name set to Bob's SID.
// Secure answer: names from e-mails are given first, then SIDs, then display names, then folders.
TEST_CASE("red team: a Gradescope display name or SID never takes the name another submitter's e-mail gives")
{
    const std::string honest = "submission_200:\n"
                               "  :submitters:\n"
                               "  - :name: Alice Real\n"
                               "    :sid: '1'\n"
                               "    :email: alice@uni.edu\n"
                               "submission_300:\n"
                               "  :submitters:\n"
                               "  - :name: Bob Real\n"
                               "    :sid: '4242'\n"
                               "    :email: ''\n";
    for (const char* mallory : {"  - :name: alice@uni.edu\n    :sid: ''\n    :email: ''\n",
                                "  - :name: Mallory\n    :sid: alice@uni.edu\n    :email: ''\n",
                                "  - :name: '4242'\n    :sid: ''\n    :email: ''\n"}) {
        CAPTURE(mallory);
        const fs::path dir = test_support::fresh_dir("redteam18_fallback_name");
        for (const char* folder : {"submission_100", "submission_200", "submission_300"})
            test_support::write_file(dir / folder / "scan_kogge_stone.cu", "\n");
        test_support::write_file(dir / "submission_metadata.yml",
                                 "submission_100:\n  :submitters:\n" + std::string(mallory) + honest);
        const grading::Roster roster = grading::discover_roster(dir.string());
        const auto folders = redteam18_folder_by_name(roster);
        std::string given;
        for (const auto& [name, folder] : folders) given += name + " <- " + folder + "; ";
        INFO("named: " << given);
        REQUIRE(folders.count("alice@uni.edu") == 1);
        CHECK(folders.at("alice@uni.edu") == "submission_200");
        REQUIRE(folders.count("4242") == 1);
        CHECK(folders.at("4242") == "submission_300");
        fs::remove_all(dir);
    }
}

// Red team 18: in a GitHub Classroom clone the assignment's prefix was what every folder shares up to a
// '-'. Mallory renames her repository (hw1-mallory to hw2-mallory: a student with admin rights on their
// repository can): no "hw1-" was shared any more, the class became a plain layout and every student was
// renamed (alice became "hw1-alice"); on a resume every student was graded again under the new names.
// Fixed: `gh classroom clone student-repos` names its folder <assignment>-submissions; given that folder
// (or the one above it) the prefix is the assignment's, and a folder without it keeps its whole name.
// A folder of another name keeps the common-prefix rule (nothing else tells the assignment).
TEST_CASE("red team: one renamed GitHub Classroom repository does not rename every other student")
{
    const fs::path dir = test_support::fresh_dir("redteam18_classroom_prefix");
    const fs::path clone = dir / "hw1-submissions";
    for (const char* folder : {"hw1-alice", "hw1-bob", "hw1-carol", "hw2-mallory"})
        test_support::write_file(clone / folder / "scan_kogge_stone.cu", "\n");
    for (const fs::path& given : {dir, clone, fs::path(clone.string() + "/")}) {
        CAPTURE(given);
        const grading::Roster roster = grading::discover_roster(given.string());
        CHECK(roster.layout == grading::RosterLayout::github_classroom);
        const auto folders = redteam18_folder_by_name(roster);
        for (const char* name : {"alice", "bob", "carol"}) {
            CAPTURE(name);
            CHECK(folders.count(name) == 1);
        }
        CHECK(folders.count("hw2-mallory") == 1);  // named after its whole folder, and said
        bool said = false;
        for (const auto& note : roster.notes) said |= note.find("hw2-mallory: not named hw1-") != std::string::npos;
        CHECK(said);
    }
    // Renamed to another student's user name, Mallory's repository does not take that student's name.
    const fs::path taken = dir / "hw2-submissions";
    for (const char* folder : {"hw2-alice", "hw2-bob", "bob"})
        test_support::write_file(taken / folder / "scan_kogge_stone.cu", "\n");
    const auto named = redteam18_folder_by_name(grading::discover_roster(taken.string()));
    CHECK(named.at("bob") == "hw2-bob");
    CHECK(named.at("bob-2") == "bob");
    CHECK(named.at("alice") == "hw2-alice");
    // A plain class in a folder that happens to be named *-submissions stays plain.
    {
        // Given under another name, the naming of the class's first run holds on a resume: no
        // renamed repository renames the others (a classroom's prefix), nor makes a plain class's
        // folders lose a common word (a plain class stays plain).
        const fs::path elsewhere = dir / "hw3";
        for (const char* folder : {"hw3-alice", "hw3-bob", "hw3-mallory"})
            test_support::write_file(elsewhere / folder / "scan_kogge_stone.cu", "\n");
        const grading::Roster first = grading::discover_roster(elsewhere.string());
        CHECK(first.assignment == "hw3");
        test_support::write_file(dir / "roster.json", grading::naming_json(first));
        const auto naming = grading::read_roster_naming((dir / "roster.json").string());
        REQUIRE(naming);
        fs::rename(elsewhere / "hw3-mallory", elsewhere / "hw4-mallory");
        const auto resumed = redteam18_folder_by_name(grading::discover_roster(elsewhere.string(), naming));
        CHECK(resumed.at("alice") == "hw3-alice");
        CHECK(resumed.at("bob") == "hw3-bob");
        CHECK(resumed.at("hw4-mallory") == "hw4-mallory");
        grading::RosterNaming plain_first;  // the first run was plain: a later common prefix changes nothing
        const auto still_plain = redteam18_folder_by_name(grading::discover_roster(elsewhere.string(), plain_first));
        CHECK(still_plain.at("hw3-alice") == "hw3-alice");
        for (const char* text : {"", "{}", "[1]", R"({"layout": "github_classroom"})", R"({"layout": "other"})"}) {
            CAPTURE(text);
            test_support::write_file(dir / "roster.json", text);
            CHECK_FALSE(grading::read_roster_naming((dir / "roster.json").string()));
        }
        CHECK_FALSE(grading::read_roster_naming((dir / "missing.json").string()));
    }
    const fs::path plain = dir / "course-submissions";
    for (const char* folder : {"alice", "bob"}) test_support::write_file(plain / folder / "scan_kogge_stone.cu", "\n");
    const grading::Roster roster = grading::discover_roster(plain.string());
    CHECK(roster.layout == grading::RosterLayout::plain);
    CHECK(redteam18_folder_by_name(roster).count("alice") == 1);
    fs::remove_all(dir);
}

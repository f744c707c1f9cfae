// Each exercise's README (exercises/NN_<name>/README.md) against the case list the grader runs
// (harness/core, `grade --list`): the count it gives ("- 24 cases") and every input size, so that
// a case added to a family without its README fails here instead of in a student's first hour.
// A test rather than a generated README: the paragraph is prose (why each size is there), and a
// failing test names the line to fix.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"

namespace fs = std::filesystem;

namespace {

// The README's paragraph on the cases: from the line "- N cases" to the next line that starts a
// new item ("- ").
std::string cases_paragraph(const std::string& readme, int& count)
{
    std::istringstream lines(readme);
    std::string line, paragraph;
    const std::regex first(R"(^- ([0-9]+) cases\b.*)");
    std::smatch match;
    bool inside = false;
    while (std::getline(lines, line)) {
        if (inside && line.rfind("- ", 0) == 0) break;
        if (!inside && std::regex_match(line, match, first)) {
            inside = true;
            count = std::stoi(match[1]);
        }
        if (inside) paragraph += line + "\n";
    }
    return paragraph;
}

// How the READMEs write a number: with thousands separators from 10,000 on ("65,537", "4096").
std::string written(std::int64_t n)
{
    std::string digits = std::to_string(n);
    if (n < 10000) return digits;
    for (int k = static_cast<int>(digits.size()) - 3; k > 0; k -= 3) digits.insert(static_cast<std::size_t>(k), ",");
    return digits;
}

fs::path exercise_folder(const std::string& name)
{
    for (const auto& entry : fs::directory_iterator(fs::path(GRADER_SOURCE_DIR) / "exercises"))
        if (std::regex_match(entry.path().filename().string(), std::regex("[0-9][0-9]_" + name))) return entry.path();
    return {};
}

}  // namespace

TEST_CASE("every exercise README gives the number of cases grade --list lists, and every size")
{
    for (const auto& exercise : harness::all_exercises()) {
        const std::string name = exercise.name;
        INFO(name);
        const fs::path folder = exercise_folder(name);
        REQUIRE_MESSAGE(!folder.empty(), "no exercises/NN_" << name << "/");
        std::ifstream file(folder / "README.md");
        std::stringstream readme;
        readme << file.rdbuf();
        int count = -1;
        const std::string paragraph = cases_paragraph(readme.str(), count);
        REQUIRE_MESSAGE(count >= 0, (folder / "README.md").string() << " has no line \"- N cases\"");
        const std::vector<harness::Case> cases = harness::cases_for(exercise);
        CHECK_MESSAGE(static_cast<std::size_t>(count) == cases.size(),
                      (folder / "README.md").string() << " says " << count << " cases; grade --list lists " << cases.size());
        for (const auto& c : cases) {
            // conv2d writes "height x width", the others the element count.
            const nlohmann::json shape = harness::family_of(exercise).shape_json(c);
            const std::string size = shape.contains("height")
                                         ? std::to_string(shape.at("height").get<int>()) + " x " +
                                               std::to_string(shape.at("width").get<int>())
                                         : written(c.n);
            CHECK_MESSAGE(std::regex_search(paragraph, std::regex("(^|[^0-9,])" + size + "([^0-9,]|,[^0-9]|$)")),
                          (folder / "README.md").string() << " does not name the size of case " << c.label << " (" << size
                                               << ")");
        }
    }
}

TEST_CASE("the README check can fail: a count or a size that is not there is found")
{
    int count = -1;
    const std::string paragraph =
        cases_paragraph("# x\n\n- 3 cases. n = 1, 2 and 65,537.\n  More words.\n- Something else 4096.\n", count);
    CHECK(count == 3);
    CHECK(paragraph.find("More words") != std::string::npos);
    CHECK(paragraph.find("4096") == std::string::npos);
    CHECK(written(65537) == "65,537");
    CHECK(written(4096) == "4096");
    CHECK(written(67108864) == "67,108,864");
}

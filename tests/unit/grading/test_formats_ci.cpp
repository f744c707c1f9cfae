// The CI formats: JUnit XML (well-formed whatever the student printed, counts that match its test
// cases) and the Markdown summary; and writing every requested format.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "formats_fixture.hpp"
#include "grading/formats.hpp"
#include "mini_xml.hpp"
#include "support/test_support.hpp"

using namespace grading;
using namespace formats_fixture;
namespace fs = std::filesystem;

namespace {

// The testcases of a suite that hold `outcome` (failure, error, skipped).
int with(const mini_xml::Element& suite, const char* outcome)
{
    int count = 0;
    for (const auto* testcase : suite.all("testcase")) count += testcase->first(outcome) != nullptr;
    return count;
}

using test_support::file_text;

// The "|" in a table row that are not escaped: the cell borders.
int borders(const std::string& row)
{
    int count = 0;
    for (std::size_t i = 0; i < row.size(); ++i) count += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
    return count;
}

}  // namespace

TEST_CASE("JUnit XML: well-formed, one suite per exercise, counts that match the test cases")
{
    const GradeReport report = sample_report();
    const std::string xml = to_junit_xml(report);
    std::unique_ptr<mini_xml::Element> root;
    REQUIRE_NOTHROW(root = mini_xml::parse(xml));
    CHECK(root->name == "testsuites");
    const auto suites = root->all("testsuite");
    REQUIRE(suites.size() == report.exercises.size());

    int tests = 0, failures = 0, errors = 0, skipped = 0;
    for (const auto* suite : suites) {
        CHECK(suite->number("tests") == static_cast<int>(suite->all("testcase").size()));
        CHECK(suite->number("failures") == with(*suite, "failure"));
        CHECK(suite->number("errors") == with(*suite, "error"));
        CHECK(suite->number("skipped") == with(*suite, "skipped"));
        for (const auto* testcase : suite->all("testcase")) {
            CHECK(testcase->attributes.at("classname") == suite->attributes.at("name"));
            CHECK(testcase->attributes.count("time"));
        }
        tests += suite->number("tests"), failures += suite->number("failures");
        errors += suite->number("errors"), skipped += suite->number("skipped");
    }
    CHECK(root->number("tests") == tests);
    CHECK(root->number("failures") == failures);
    CHECK(root->number("errors") == errors);
    CHECK(root->number("skipped") == skipped);

    // vector_add: a case each of pass, wrong, cuda_error, not_run, and a timed pass.
    const auto& mixed = *suites[0];
    CHECK(mixed.attributes.at("name") == "vector_add");
    CHECK(mixed.number("tests") == 5);
    CHECK(mixed.number("failures") == 1);
    CHECK(mixed.number("errors") == 1);
    CHECK(mixed.number("skipped") == 1);
    const auto cases = mixed.all("testcase");
    CHECK(cases[0]->children.empty());
    CHECK(cases[0]->attributes.at("time") == "0.250");
    const auto* failure = cases[1]->first("failure");
    REQUIRE(failure);
    CHECK(failure->attributes.at("message") == "3 of 1,025 output element(s) wrong");
    CHECK(failure->attributes.at("type") == "wrong");
    CHECK(contains(failure->text, "first wrong element: out[1,024] = 1, expected 2\n<all> & more\nrerun: grade"));
    CHECK(cases[2]->first("error")->attributes.at("type") == "cuda_error");
    CHECK(cases[3]->first("skipped"));
    CHECK(contains(cases[4]->first("system-out")->text, "1.0000 ms, reference 1.2000 ms"));
    CHECK(mixed.first("system-out")->text == "debug: i=3 <tag> & done\n");

    CHECK(suites[1]->number("failures") + suites[1]->number("errors") == 0);

    // conv2d_tiled: one test with an error carrying the message and the compiler's output, which
    // reads back as written but for the characters XML cannot hold.
    const auto& broken = *suites[2];
    REQUIRE(broken.number("tests") == 1);
    const auto* error = broken.first("testcase")->first("error");
    REQUIRE(error);
    CHECK(error->attributes.at("type") == "compile_error");
    CHECK(error->attributes.at("message") == "compile error: nvcc failed");
    CHECK(contains(error->text, "expected a \";\"\n  if (a < b && c) \xEF\xBF\xBD x[i] = '\xEF\xBF\xBD';"));
    CHECK_FALSE(contains(xml, "a < b"));
    CHECK_FALSE(contains(xml, "&& c"));

    CHECK(suites[3]->number("skipped") == 1);
}

TEST_CASE("students' bytes: valid UTF-8 stays; broken sequences, forbidden characters, colours go")
{
    GradeReport report = sample_report();
    // Colours, UTF-8 of 2, 3 and 4 bytes, an encoded surrogate, an overlong '/', DEL (XML allows it),
    // a vertical tab (XML does not), a sequence cut short.
    report.exercises[2].compile_output =
        "\x1b[1;31merror\x1b[0m: caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 |\xed\xa0\x80|\xc0\xaf|\x7f\x0b|\xe2\x82";
    const std::string bad = "\xEF\xBF\xBD";
    const std::string expected = "error: caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 |" + bad + bad + bad + "|" + bad +
                                 bad + "|\x7f" + bad + "|" + bad + bad;
    const auto root = mini_xml::parse(to_junit_xml(report));
    CHECK(contains(root->all("testsuite")[2]->first("testcase")->first("error")->text, expected));
    CHECK(contains(to_markdown_summary(report), "```\n" + expected + "\n```\n"));
    const nlohmann::json g = to_gradescope(report, {}, rubric());
    CHECK(contains(g.at("tests")[4].at("output"), expected));
    CHECK_NOTHROW(g.dump());
}

TEST_CASE("JUnit XML: repeated case labels stay apart")
{
    GradeReport report = sample_report();
    report.exercises[0].cases[4].label = report.exercises[0].cases[0].label;
    const auto root = mini_xml::parse(to_junit_xml(report));
    const auto cases = root->all("testsuite")[0]->all("testcase");
    CHECK(cases[0]->attributes.at("name") == "n=1/int [case 0]");
    CHECK(cases[4]->attributes.at("name") == "n=1/int [case 4]");
}

TEST_CASE("Markdown summary: the total, one table row per exercise, what failed")
{
    GradeReport report = sample_report();
    std::string md = to_markdown_summary(report);
    CHECK(md.rfind("## GPU exercises: 16.45 / 45.00 points\n", 0) == 0);

    std::istringstream lines(md);
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(lines, line) && line.rfind("| --- |", 0) != 0) {}
    while (std::getline(lines, line) && line.rfind("| ", 0) == 0) rows.push_back(line);
    REQUIRE(rows.size() == report.exercises.size());
    for (const auto& row : rows) CHECK(borders(row) == 7);
    CHECK(rows[0] == "| vector\\_add | failed | 2/5 | 3.20 / 10.00 | 1.20\u00d7 | 800 |");
    CHECK(rows[1] == "| scan\\_kogge\\_stone | passed | 2/2 | 13.25 / 15.00 | 0.50\u00d7 | 800 |");
    CHECK(rows[2] == "| conv2d\\_tiled | compile error | - | 0.00 / 10.00 | - | - |");

    CHECK(contains(md, "### vector\\_add: 3 of 5 cases failed"));
    CHECK(contains(md,
                   "- **n=1025/int**: wrong: 3 of 1,025 output element(s) wrong\n"
                   "  - first wrong element: out\\[1,024\\] = 1, expected 2\n"
                   "  - rerun: `grade --submission s --exercise vector_add --case n=1025/int`\n"));
    CHECK_FALSE(contains(md, "### scan\\_kogge\\_stone"));
    CHECK(contains(md, "### conv2d\\_tiled: compile error\n\nFix first: the compiler's first error: conv2d\\_tiled.cu(12): "
                       "error: expected a \";\"\n\nnvcc failed\n\n```\nconv2d_tiled.cu(12)"));
    // What to fix first, at the top of each failing exercise's section (grading/first_fix.hpp).
    CHECK(contains(md, "### vector\\_add: 3 of 5 cases failed\n\nFix first: n=4096/float (the smallest failing case): "));
    CHECK(contains(md, "Not submitted: histogram.\n"));

    // A "|" in a cell is escaped, so the row keeps its columns.
    report.exercises[3].name = "a|b";
    md = to_markdown_summary(report);
    CHECK(contains(md, "| a\\|b | not submitted | - |"));
}

TEST_CASE("write_requested_formats writes what was asked and names what it could not write")
{
    const fs::path dir = fs::temp_directory_path() / ("test_formats_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const GradeReport report = sample_report();
    FormatRequests requests;
    requests.gradescope = (dir / "gradescope.json").string();
    requests.junit = (dir / "junit.xml").string();
    requests.markdown = (dir / "summary.md").string();
    requests.rubric = rubric();
    write_requested_formats(report, requests);
    CHECK(nlohmann::json::parse(file_text(dir / "gradescope.json")).at("score") == doctest::Approx(report.points));
    CHECK_NOTHROW(mini_xml::parse(file_text(dir / "junit.xml")));
    CHECK(file_text(dir / "summary.md") == to_markdown_summary(report));
    CHECK_FALSE(fs::exists(dir / "prairielearn.json"));

    requests.prairielearn = (dir / "missing" / "pl.json").string();
    fs::remove(dir / "summary.md");
    try {
        write_requested_formats(report, requests);
        FAIL("an unwritable path must throw");
    } catch (const std::runtime_error& e) {
        CHECK(contains(e.what(), requests.prairielearn));
    }
    CHECK(fs::exists(dir / "summary.md"));  // the others were still written
    fs::remove_all(dir);
}

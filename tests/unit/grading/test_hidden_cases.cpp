// Hidden cases (grading/hidden_cases.hpp): the keyed hash, the secret, the rubric's visibility and
// extra cases, and what a student's view of a report keeps.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "grading/formats.hpp"
#include "grading/hidden_cases.hpp"
#include "grading/json_schema.hpp"
#include "grading/report.hpp"
#include "harness/family.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "support/test_support.hpp"

using namespace grading;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string hex(const std::array<std::uint8_t, 32>& digest)
{
    std::string text;
    const char* digits = "0123456789abcdef";
    for (auto byte : digest) text += std::string{digits[byte >> 4], digits[byte & 15]};
    return text;
}

const std::string secret_text = "correct horse battery staple 42";

RubricError rubric_error(const json& document)
{
    try {
        Rubric::from_json(document);
    } catch (const RubricError& e) {
        return e;
    }
    FAIL("the rubric was taken: " << document.dump());
    return RubricError("");
}

const harness::Exercise& exercise(const std::string& name)
{
    return *harness::find_exercise(name);
}

using test_support::results_schema;

using test_support::file_text;

}  // namespace

TEST_CASE("SHA-256 and HMAC-SHA-256 give the published test vectors")
{
    // FIPS 180-4 examples.
    CHECK(hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // RFC 4231, test cases 1, 2 and 6 (a key longer than a block).
    CHECK(hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hex(hmac_sha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("a hidden seed is the secret's: stable, unlike the public seed and another secret's")
{
    const HiddenCaseSecret secret(secret_text, HiddenCaseSecret::Source::file);
    const HiddenCaseSecret again(secret_text + "\n", HiddenCaseSecret::Source::environment);  // a file's line break
    const HiddenCaseSecret other("another secret of enough characters", HiddenCaseSecret::Source::file);
    const std::uint64_t seed = secret.seed("scan_brent_kung", "n=1025/int");
    CHECK(seed == again.seed("scan_brent_kung", "n=1025/int"));
    CHECK(seed != harness::seed_for("scan_brent_kung", "n=1025/int"));
    CHECK(seed != other.seed("scan_brent_kung", "n=1025/int"));
    CHECK(seed != secret.seed("scan_brent_kung", "n=1024/int"));
    CHECK(seed != secret.seed("scan_kogge_stone", "n=1025/int"));
    CHECK(secret.id() == again.id());
    CHECK(secret.id() != other.id());
    CHECK(secret.id().find(secret_text) == std::string::npos);

    CHECK_THROWS_AS(HiddenCaseSecret("short", HiddenCaseSecret::Source::file), SecretError);
    CHECK_THROWS_WITH_AS(HiddenCaseSecret("\n", HiddenCaseSecret::Source::file), doctest::Contains("empty"), SecretError);
    CHECK_THROWS_WITH_AS(read_secret_file("/nonexistent/secret"), doctest::Contains("/nonexistent/secret"), SecretError);
}

TEST_CASE("the secret is taken out of the environment")
{
    ::setenv(secret_variable, secret_text.c_str(), 1);
    const std::optional<std::string> taken = take_secret_from_environment();
    REQUIRE(taken.has_value());
    CHECK(*taken == secret_text);
    CHECK(std::getenv(secret_variable) == nullptr);
    CHECK_FALSE(take_secret_from_environment().has_value());
}

TEST_CASE("visible_cases: every case visible by default, or as the rubric's patterns say")
{
    const harness::Exercise& brent_kung = exercise("scan_brent_kung");
    const auto public_cases = harness::cases_for(brent_kung);
    for (const auto& c : graded_cases(brent_kung, Rubric{}, nullptr)) {
        CHECK_FALSE(c.hidden);
        CHECK(c.seed == harness::seed_for(brent_kung.name, c.label));
    }
    CHECK_FALSE(declares_hidden_cases(Rubric{}, {"scan_brent_kung", "conv2d_tiled"}));

    const Rubric rubric = Rubric::from_json({{"visible_cases", {{"scan_brent_kung", json::array({"n=1/*", "*/frac"})}}}});
    const HiddenCaseSecret secret(secret_text, HiddenCaseSecret::Source::file);
    const auto cases = graded_cases(brent_kung, rubric, &secret);
    REQUIRE(cases.size() == public_cases.size());
    int hidden = 0;
    for (const auto& c : cases) {
        const bool visible = c.label == "n=1/int" || c.label.find("/frac") != std::string::npos;
        CHECK(c.hidden == !visible);
        CHECK(c.seed == (visible ? harness::seed_for(brent_kung.name, c.label) : secret.seed(brent_kung.name, c.label)));
        hidden += c.hidden;
    }
    CHECK(hidden > 10);
    // Exercises not named stay visible.
    for (const auto& c : graded_cases(exercise("conv2d_tiled"), rubric, &secret)) CHECK_FALSE(c.hidden);
    CHECK(declares_hidden_cases(rubric, {"scan_brent_kung"}));
    CHECK_FALSE(declares_hidden_cases(rubric, {"conv2d_tiled"}));
    // Without the secret, a hidden case has no seed at all (grade refuses such a list).
    for (const auto& c : graded_cases(brent_kung, rubric, nullptr))
        if (c.hidden) CHECK(c.seed == 0);

    const Rubric none = Rubric::from_json({{"visible_cases", "none"}});
    for (const auto& c : graded_cases(exercise("reduce_sequential_addressing"), none, &secret)) CHECK(c.hidden);
}

TEST_CASE("hidden_cases: extra cases within the exercise's own, after them, hidden and never timed")
{
    json extra = json::object();
    extra["scan_hierarchical"] = json::array({json{{"n", 777777}}, json{{"n", 3000001}, {"data", "fractions"}}});
    extra["conv2d_tiled"] = json::array({json{{"height", 300}, {"width", 301}, {"mask_width", 7}}});
    extra["conv1d_tiled"] = json::array({json{{"n", 5000}, {"mask_width", 9}}});
    const Rubric rubric = Rubric::from_json({{"hidden_cases", extra}});
    const HiddenCaseSecret secret(secret_text, HiddenCaseSecret::Source::file);
    const auto own = harness::cases_for(exercise("scan_hierarchical"));
    const auto cases = graded_cases(exercise("scan_hierarchical"), rubric, &secret);
    REQUIRE(cases.size() == own.size() + 2);
    CHECK(cases[own.size()].label == "n=777777/int");
    CHECK(cases[own.size()].index == static_cast<int>(own.size()));
    CHECK(cases[own.size() + 1].label == "n=3000001/frac");
    CHECK(cases[own.size() + 1].data == harness::DataKind::fractions);
    for (std::size_t k = own.size(); k < cases.size(); ++k) {
        CHECK(cases[k].hidden);
        CHECK_FALSE(cases[k].timed);
        CHECK(cases[k].seed == secret.seed("scan_hierarchical", cases[k].label));
    }
    for (std::size_t k = 0; k < own.size(); ++k) CHECK_FALSE(cases[k].hidden);
    const auto images = graded_cases(exercise("conv2d_tiled"), rubric, &secret);
    CHECK(images.back().label == "300x301/mw=7/int");
    CHECK(images.back().n == 300 * 301);
    CHECK(graded_cases(exercise("conv1d_tiled"), rubric, &secret).back().label == "n=5000/mw=9/int");
    // The spec the runner gets gives the same case back.
    const harness::Exercise& conv2d = exercise("conv2d_tiled");
    const json spec = harness::case_spec(conv2d, images.back());
    CHECK(spec.at("shape") == json{{"height", 300}, {"width", 301}, {"mask_width", 7}});
    const harness::Case round_trip = harness::case_from_spec(conv2d, spec, images.back().index);
    CHECK(round_trip.label == images.back().label);
    CHECK(round_trip.seed == images.back().seed);
    CHECK(round_trip.n == 300 * 301);
    CHECK(harness::family_of(conv2d).shape_json(round_trip) == spec.at("shape"));
    CHECK_THROWS_AS(harness::case_from_spec(conv2d, {{"label", "x"}, {"shape", {{"n", 0}}}}, 0), std::exception);
}

TEST_CASE("a rubric's hidden cases that cannot work are refused, each with its pointer")
{
    auto refused = [](const json& document, const std::string& words) {
        const std::string what = rubric_error(document).what();
        INFO(what);
        CHECK(what.find(words) != std::string::npos);
    };
    refused({{"visible_cases", {{"scan_nonsense", "all"}}}}, "/visible_cases/scan_nonsense: no exercise");
    refused({{"visible_cases", {{"scan_brent_kung", json::array({"n=12345/int"})}}}}, "matches no case of scan_brent_kung");
    refused({{"visible_cases", json::array({"nothing-like-a-label"})}}, "matches no case of any exercise");
    refused({{"visible_cases", "some"}}, "/visible_cases");  // the schema: all, none, a list or an object
    // hidden_cases with these cases of one exercise.
    auto extra = [](const std::string& name, std::vector<json> cases) {
        json list = json::array();
        for (auto& c : cases) list.push_back(std::move(c));
        json document = json::object();
        document["hidden_cases"][name] = list;
        return document;
    };
    refused(extra("scan_brent_kung", {json{{"n", 1}, {"height", 3}}}),
            "a case of scan_brent_kung: an array given by n (not height)");
    refused(extra("scan_brent_kung", {json{{"n", std::int64_t{1} << 30}}}), "outside the exercise's own cases");
    refused(extra("conv2d_tiled", {json{{"height", 10}, {"width", 10}, {"mask_width", 4}}}),
            "mask_width 4: not one of the exercise's");
    refused(extra("conv2d_tiled", {json{{"n", 100}, {"mask_width", 5}}}),
            "a case of conv2d_tiled: an image given by height, width and mask_width (not n)");
    refused(extra("conv1d_tiled", {json{{"n", 5000}}}), "a case of conv1d_tiled: an array given by n and mask_width");
    refused(extra("conv2d_tiled", {json{{"height", 9000}, {"width", 10}, {"mask_width", 5}}}),
            "height 9000: outside the exercise's own cases (height 1 to 8192)");
    refused(extra("scan_brent_kung", {json{{"n", 1025}, {"data", "mixed_magnitudes"}}}),
            "not a kind of the exercise's cases");
    refused(extra("scan_brent_kung", {json{{"n", 1025}}}), "the same as the exercise's own case n=1025/int");
    refused(extra("scan_brent_kung", {json{{"n", 999}}, json{{"n", 999}}}), "/hidden_cases/scan_brent_kung/1: a second case");
    refused(extra("scan_brent_kung", {json{{"n", 999}, {"seed", 5}}}), "/hidden_cases/scan_brent_kung/0/seed");
}

namespace {

// A report of one exercise with a visible passing case, a hidden failing case with everything a
// check finds, a hidden timed case, and what runners printed during each.
GradeReport report_with_hidden_cases()
{
    GradeReport report;
    report.grader_version = "test";
    report.started_at = "2026-11-26T00:00:00Z";
    report.hidden_cases = {2, "0x0123456789abcdef", false};
    ExerciseResult e;
    e.name = "scan_hierarchical";
    e.status = ExerciseStatus::graded;
    e.runner_output = "visible runner says hello\n";
    e.hidden_runner_output = "spy: case n=777777/int n=777777 seed=0x5eed5eed5eed5eed first inputs: 11 7 -3\n";
    CaseResult visible;
    visible.index = 0;
    visible.label = "n=1/int";
    visible.n = 1;
    visible.shape = {{"n", 1}};
    visible.data = "integers";
    visible.seed = 17;
    visible.status = CaseStatus::pass;
    e.cases.push_back(visible);
    CaseResult wrong;
    wrong.index = 1;
    wrong.hidden = true;
    wrong.label = "n=777777/int";
    wrong.n = 777777;
    wrong.shape = {{"n", 777777}};
    wrong.data = "integers";
    wrong.seed = 0x5eed5eed5eed5eedull;
    wrong.status = CaseStatus::wrong;
    wrong.seconds = 1.5;
    wrong.summary = "1,234 of 777,777 elements wrong";
    wrong.findings = {"first wrong element: out[4097] = 12, expected 13"};
    wrong.detail = {{"first_wrong", 4097}};
    wrong.reproduce = "grade --case n=777777/int";
    e.cases.push_back(wrong);
    CaseResult timed;
    timed.index = 2;
    timed.hidden = true;
    timed.timed = true;
    timed.label = "n=67108864/int";
    timed.n = 67108864;
    timed.shape = {{"n", 67108864}};
    timed.data = "integers";
    timed.seed = 0x1111111111111111ull;
    timed.status = CaseStatus::pass;
    timed.timing = TimingResult{};
    timed.timing->student_ms = 2;
    timed.timing->reference_ms = 1;
    timed.timing->speedup_vs_reference = 0.5;
    timed.timing->bandwidth_gb_s = 555;
    timed.timing->cpu_ms = 98765;
    e.cases.push_back(timed);
    score_exercise(Rubric{}, e);
    report.exercises.push_back(e);
    report.points = e.points;
    report.max_points = e.max_points;
    return report;
}

// Everything a student must not see of report_with_hidden_cases().
const std::vector<std::string> hidden_words = {"777777", "5eed", "0x1111111111111111", "67108864", "4097",
                                               "first wrong element", "spy:", "0x0123456789abcdef", "98765", "555"};

}  // namespace

TEST_CASE("the student's view says of a hidden case whether it passed and its status, nothing more")
{
    const GradeReport report = report_with_hidden_cases();
    const json instructors = to_json(report);
    for (const auto& error : validate_json_schema(results_schema(), instructors)) FAIL(error.instance_path << ": " << error.message);
    const std::string full = instructors.dump();
    CHECK(full.find("n=777777/int") != std::string::npos);  // the instructor's record has everything
    CHECK(full.find("spy: case") != std::string::npos);
    CHECK(instructors["hidden_cases"]["secret_id"] == "0x0123456789abcdef");

    const GradeReport view = student_view(report);
    const json students = to_json(view);
    for (const auto& error : validate_json_schema(results_schema(), students)) FAIL(error.instance_path << ": " << error.message);
    CHECK(students["hidden_cases"]["redacted"] == true);
    CHECK(students["hidden_cases"]["secret_id"].is_null());
    const json& visible = students["exercises"][0]["cases"];
    REQUIRE(visible.size() == 1);
    CHECK(visible[0]["label"] == "n=1/int");
    const json& cases = students["exercises"][0]["hidden_cases"];
    REQUIRE(cases.size() == 2);
    CHECK(cases[0]["label"] == "hidden case 1");
    CHECK(cases[1]["label"] == "hidden case 2");
    // Ordered by the secret's seeds, not by index: here the timed case's is the smaller.
    CHECK(cases[0]["status"] == "pass");
    CHECK(cases[0]["timing"]["speedup_vs_reference"] == 0.5);
    CHECK(cases[1]["status"] == "wrong");
    CHECK_FALSE(cases[1].contains("index"));
    CHECK_FALSE(cases[1].contains("seed"));
    CHECK(view.exercises[0].points == report.exercises[0].points);
    const std::string shown = students.dump();
    for (const auto& word : hidden_words) CHECK_MESSAGE(shown.find(word) == std::string::npos, word);
    CHECK(shown.find("visible runner says hello") != std::string::npos);

    // A report without hidden cases is the same but for the flag.
    // The kernel's fingerprint (for the class's near-identical kernels) is the instructor's only.
    GradeReport plain = report;
    plain.exercises[0].cases.resize(1);
    plain.hidden_cases = {};
    plain.exercises[0].fingerprint = {{"code", "ptx"}, {"sketch", {7, 9}}};
    json before = to_json(plain), after = to_json(student_view(plain));
    CHECK(before["exercises"][0]["fingerprint"]["code"] == "ptx");
    CHECK_FALSE(after["exercises"][0].contains("fingerprint"));
    after["hidden_cases"]["redacted"] = false;
    before.erase("hidden_cases"), after.erase("hidden_cases");
    before["exercises"][0].erase("hidden_runner_output");
    before["exercises"][0].erase("fingerprint");
    after["exercises"][0].erase("hidden_cases");
    CHECK(before == after);
}

TEST_CASE("every student-facing format is written from the student's view")
{
    const GradeReport report = report_with_hidden_cases();
    const fs::path dir = fs::temp_directory_path() / ("grader_hidden_formats_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    FormatRequests requests;
    requests.gradescope = (dir / "gradescope.json").string();
    requests.prairielearn = (dir / "prairielearn.json").string();
    requests.junit = (dir / "junit.xml").string();
    requests.markdown = (dir / "summary.md").string();
    requests.student_results = (dir / "student-results.json").string();
    requests.gradescope_settings.stdout_visibility = "visible";
    write_requested_formats(report, requests);
    for (const auto& path : {requests.gradescope, requests.prairielearn, requests.junit, requests.markdown,
                             requests.student_results}) {
        const std::string text = file_text(path);
        INFO(path);
        CHECK(text.find("hidden case") != std::string::npos);
        CHECK(text.find("wrong") != std::string::npos);  // the kind of failure is there
        for (const auto& word : hidden_words) CHECK_MESSAGE(text.find(word) == std::string::npos, word);
    }
    // The console names hidden cases: Gradescope never shows it to students while there are any.
    CHECK(json::parse(file_text(requests.gradescope))["stdout_visibility"] == "hidden");
    const json students = json::parse(file_text(requests.student_results));
    for (const auto& error : validate_json_schema(results_schema(), students)) FAIL(error.instance_path << ": " << error.message);
    fs::remove_all(dir);
}

TEST_CASE("with hidden cases the student's view holds no clock a hidden case's runner could set")
{
    // A runner that knows it has a hidden case (a runner of its own; an n outside the public list)
    // can sleep a time its input chooses: seconds 3.125 would spell out bits of the case's seed.
    GradeReport report = report_with_hidden_cases();
    report.seconds = 43.125;
    ExerciseResult& e = report.exercises[0];
    e.seconds = 41.125, e.started_seconds = 2.0625, e.compile_seconds = 1.5, e.gpu_place_wait_seconds = 9.875;
    for (auto& c : e.cases) c.seconds = 3.125, c.check_seconds = 0.25, c.gpu_wait_seconds = 7.75, c.gpu_exclusive_seconds = 1.25;
    ExerciseResult later = e;  // graded after it: its start says when the hidden runner ended
    later.name = "scan_brent_kung";
    later.hidden_runner_output.clear();
    for (auto& c : later.cases) c.hidden = false;
    report.exercises.push_back(later);

    const GradeReport view = student_view(report);
    CHECK(view.seconds == 0);
    for (const auto& ex : view.exercises) {
        CHECK(ex.seconds == 0);
        CHECK(ex.started_seconds == 0);
        CHECK(ex.compile_seconds == 0);
        CHECK(ex.gpu_place_wait_seconds == 0);
        for (const auto& c : ex.cases) {
            CHECK(c.seconds == 0);
            CHECK(c.check_seconds == 0);
            CHECK(c.gpu_wait_seconds == 0);
            CHECK(c.gpu_exclusive_seconds == 0);
        }
    }
    const json students = to_json(view);
    for (const auto& error : validate_json_schema(results_schema(), students)) FAIL(error.instance_path << ": " << error.message);
    for (const char* clock : {"43.125", "41.125", "2.0625", "3.125", "7.75", "9.875"})
        CHECK_MESSAGE(students.dump().find(clock) == std::string::npos, clock);
    // The speed case's timing stays: it is what its points are.
    const auto& shown = view.exercises[0].cases;
    const auto timed = std::find_if(shown.begin(), shown.end(), [](const CaseResult& c) { return c.timing.has_value(); });
    REQUIRE(timed != shown.end());
    CHECK(timed->timing->speedup_vs_reference == 0.5);

    // Without hidden cases the clocks stay.
    GradeReport plain = report;
    for (auto& ex : plain.exercises)
        ex.cases.erase(std::remove_if(ex.cases.begin(), ex.cases.end(), [](const CaseResult& c) { return c.hidden; }),
                       ex.cases.end());
    plain.hidden_cases = {};
    const GradeReport plain_view = student_view(plain);
    CHECK(plain_view.seconds == 43.125);
    CHECK(plain_view.exercises[1].started_seconds == 2.0625);
}

// Near-identical kernels between students (grading/src/class/similar_kernels.cpp) from hand-made
// results with fingerprints: which pairs are listed and which never are, the groups, the class's
// results against their schema, report.html's section; nothing changes points.
#include <doctest/doctest.h>

#include "grading/build.hpp"
#include "grading/class_results.hpp"
#include "grading/json_schema.hpp"

#include <fstream>

using nlohmann::json;
using namespace grading;

namespace {

std::vector<std::string> opcodes(const std::string& prefix, int count)
{
    std::vector<std::string> ops;
    for (int k = 0; k < count; ++k) ops.push_back(prefix + std::to_string(k) + ".f32");
    return ops;
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

const std::vector<std::string> reference = opcodes("ref", 120);

// A student's results with one exercise built from `ops` (its fingerprint without the reference's
// runs), as grade writes them for the instructor.
json results_with(const std::vector<std::string>& ops, bool matches_reference = false,
                  const std::string& status = "graded", const std::string& exercise = "conv1d_tiled")
{
    const KernelFingerprint f = fingerprint_kernel(ops, "ptx", &reference);
    return {{"points", 3.0},
            {"max_points", 10.0},
            {"device", "fake"},
            {"exercises",
             {{{"name", exercise},
               {"status", status},
               {"message", ""},
               {"points", 3.0},
               {"max_points", 10.0},
               {"library_use", json::array()},
               {"code_checks", {{"reference", {{"matches", matches_reference}}}}},
               {"fingerprint", to_json(f)},
               {"cases", json::array()}}}}};
}

StudentFolder graded_student(const std::string& name, std::optional<json> results)
{
    StudentFolder f;
    f.record.name = name;
    f.record.outcome = "graded";
    f.results = std::move(results);
    return f;
}

json pairs_of(const json& class_results, const std::string& exercise)
{
    for (const auto& e : class_results.at("similar_kernels").at("exercises"))
        if (e.at("exercise") == exercise) return e;
    return nullptr;
}

}  // namespace

TEST_CASE("near-identical kernels: a copy listed with its similarity; independent kernels, stubs and reference copies not")
{
    const std::vector<std::string> own = opcodes("alice", 80);
    std::vector<std::string> edited = own;  // the copy with a few instructions changed
    edited[40] = "changed.u32";
    const std::vector<StudentFolder> folders = {
        graded_student("alice", results_with(joined(own, reference))),
        graded_student("bob", results_with(joined(own, reference))),  // the same code, renamed: the same opcodes
        graded_student("carol", results_with(joined(edited, reference))),
        graded_student("dave", results_with(joined(opcodes("dave", 80), reference))),  // written independently
        graded_student("stub1", results_with({"ret"})),                                // unchanged stubs: empty kernels
        graded_student("stub2", results_with({"ret"})),
        graded_student("ref1", results_with(reference)),  // the reference itself: nothing of its own
        graded_student("ref2", results_with(reference)),
        // Both match the reference's compiled code (already a problem): their own shared code is not listed.
        graded_student("paste1", results_with(joined(reference, opcodes("glue", 40)), true)),
        graded_student("paste2", results_with(joined(reference, opcodes("glue", 40)), true)),
        graded_student("broken", results_with(own, false, "compile_error")),  // not built: no code to compare
        graded_student("absent", std::nullopt),
    };
    const json class_results = grading::class_results(folders, {"conv1d_tiled"});
    const json conv = pairs_of(class_results, "conv1d_tiled");
    REQUIRE(conv.is_object());
    INFO(conv.dump(1));
    CHECK(conv.at("code") == "ptx");
    CHECK(conv.at("compared") == 6);  // alice bob carol dave paste1 paste2
    CHECK(conv.at("too_little_own_code") == 4);
    CHECK(conv.at("both_match_reference") == 1);
    REQUIRE(conv.at("pairs").size() == 3);
    CHECK(conv.at("pairs_found") == 3);
    CHECK(conv.at("pairs").at(0).at("students") == json{"alice", "bob"});
    CHECK(conv.at("pairs").at(0).at("similarity") == 1.0);
    for (const auto& p : conv.at("pairs")) {
        CHECK(p.at("similarity").get<double>() >= similar_kernel_threshold);
        CHECK(p.at("similarity").get<double>() > 0.8);  // a five-run window around one changed instruction
        CHECK(p.at("code") == "ptx");
    }
    CHECK(conv.at("groups") == json::array({json{"alice", "bob", "carol"}}));
    CHECK(class_results.at("similar_kernels").at("threshold") == similar_kernel_threshold);

    // Nothing changes points.
    for (const auto& s : class_results.at("students"))
        if (s.at("points").is_number()) CHECK(s.at("points") == 3.0);

    const json schema = json::parse(std::ifstream(GRADER_CLASS_SCHEMA_FILE));
    const auto errors = validate_json_schema(schema, class_results);
    for (const auto& e : errors) MESSAGE(e.instance_path << ": " << e.message);
    CHECK(errors.empty());

    const std::string html = class_report_html(class_results);
    const auto section = html.find("Near-identical kernels, for review; never penalised");
    REQUIRE(section != std::string::npos);
    const std::string part = html.substr(section, html.find("</section>", section) - section);
    CHECK(part.find("alice<br>bob<br>") != std::string::npos);
    CHECK(part.find("100%") != std::string::npos);
    CHECK(part.find("dave") == std::string::npos);
    CHECK(part.find("stub1") == std::string::npos);
    CHECK(part.find("paste1") == std::string::npos);
    CHECK(part.find("conv1d_tiled: alice, bob, carol") != std::string::npos);
}

TEST_CASE("near-identical kernels: none found says so; results without fingerprints (an older grade) are counted, not compared")
{
    json old = results_with(opcodes("old", 50));
    old["exercises"][0].erase("fingerprint");
    const json class_results = grading::class_results(
        {graded_student("a", results_with(joined(opcodes("a", 60), reference))),
         graded_student("b", results_with(joined(opcodes("b", 60), reference))), graded_student("old", old)},
        {"conv1d_tiled", "scan_kogge_stone"});
    const json conv = pairs_of(class_results, "conv1d_tiled");
    CHECK(conv.at("pairs").empty());
    CHECK(conv.at("groups").empty());
    CHECK(conv.at("compared") == 2);
    CHECK(conv.at("without_fingerprint") == 1);
    CHECK(pairs_of(class_results, "scan_kogge_stone").at("code") == "none");
    const std::string html = class_report_html(class_results);
    const auto section = html.find("Near-identical kernels");
    REQUIRE(section != std::string::npos);
    CHECK(html.find("<p class=\"none\">None.</p>", section) < html.find("</section>", section));
}

TEST_CASE("near-identical kernels: a name from a student folder is escaped in report.html")
{
    const std::vector<std::string> own = joined(opcodes("x", 60), reference);
    const json class_results = grading::class_results(
        {graded_student("<script>a", results_with(own)), graded_student("b&c", results_with(own))}, {"conv1d_tiled"});
    const std::string html = class_report_html(class_results);
    CHECK(html.find("<script>a") == std::string::npos);
    CHECK(html.find("&lt;script&gt;a<br>") != std::string::npos);
}

TEST_CASE("near-identical kernels: results of odd shapes are skipped, never thrown on")
{
    const std::vector<std::string> own = joined(opcodes("x", 60), reference);
    json odd_name = results_with(own), odd_status = results_with(own), odd_matches = results_with(own),
         odd_print = results_with(own);
    odd_name["exercises"][0]["name"] = 7;
    odd_status["exercises"][0]["status"] = json::array();
    odd_matches["exercises"][0]["code_checks"]["reference"]["matches"] = "yes";
    odd_print["exercises"][0]["fingerprint"] = {{"code", "ptx"}, {"sketch", "abc"}};
    const json class_results = grading::class_results({graded_student("a", results_with(own)), graded_student("name", odd_name),
                                                        graded_student("status", odd_status), graded_student("matches", odd_matches),
                                                        graded_student("print", odd_print)},
                                                       {"conv1d_tiled"});
    const json conv = pairs_of(class_results, "conv1d_tiled");
    CHECK(conv.at("compared") == 2);  // a, and the one whose "matches" is no boolean (taken as no match)
    CHECK(conv.at("without_fingerprint") == 1);
    REQUIRE(conv.at("pairs").size() == 1);
    CHECK(conv.at("pairs").at(0).at("students") == json{"a", "matches"});
}

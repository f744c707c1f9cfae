#include "formats_fixture.hpp"
#include "support/test_support.hpp"

using namespace grading;
using nlohmann::json;

namespace formats_fixture {
namespace {

CaseResult make_case(int index, const std::string& label, CaseStatus status, const std::string& summary = "")
{
    CaseResult c;
    c.index = index;
    c.label = label;
    c.status = status;
    c.seconds = 0.25;
    c.summary = summary;
    c.reproduce = "grade --submission s --exercise vector_add --case " + label;
    return c;
}

TimingResult timing(double student_ms, double reference_ms)
{
    TimingResult t;
    t.student_ms = student_ms;
    t.reference_ms = reference_ms;
    t.speedup_vs_reference = reference_ms / student_ms;
    t.bandwidth_gb_s = 800;
    return t;
}

}  // namespace

const std::string compile_output =
    "conv2d_tiled.cu(12): error: expected a \";\"\n  if (a < b && c) \x01 x[i] = '\xff';\n";

Rubric rubric()
{
    Rubric r;
    r.weight["scan_kogge_stone"] = 1.5;  // its maximum: 12 for correctness, 3 for speed
    return r;
}

GradeReport sample_report()
{
    GradeReport report;
    report.grader_version = "1.2.3";
    report.device = "NVIDIA H100";
    report.seconds = 41.6;

    ExerciseResult mixed;
    mixed.name = "vector_add";
    mixed.status = ExerciseStatus::graded;
    mixed.cases = {make_case(0, "n=1/int", CaseStatus::pass),
                   make_case(1, "n=1025/int", CaseStatus::wrong, "3 of 1,025 output element(s) wrong"),
                   make_case(2, "n=4096/float", CaseStatus::cuda_error, "the launcher left cudaErrorIllegalAddress"),
                   make_case(3, "n=65536/float", CaseStatus::not_run, "an earlier case ended the runner"),
                   make_case(4, "n=16777216/float", CaseStatus::pass)};
    mixed.cases[1].findings = {"first wrong element: out[1,024] = 1, expected 2", "<all> & more"};
    mixed.cases[4].timed = true;
    mixed.cases[4].timing = timing(1.0, 1.2);
    mixed.runner_output = "debug: i=3 <tag> & done\n";

    ExerciseResult slow;
    slow.name = "scan_kogge_stone";
    slow.status = ExerciseStatus::graded;
    slow.cases = {make_case(0, "n=1/int", CaseStatus::pass), make_case(1, "n=1048576/int", CaseStatus::pass)};
    slow.cases[1].timed = true;
    slow.cases[1].timing = timing(2.0, 1.0);  // half the reference's speed

    ExerciseResult broken;
    broken.name = "conv2d_tiled";
    broken.status = ExerciseStatus::compile_error;
    broken.message = "nvcc failed";
    broken.compile_output = compile_output;

    ExerciseResult missing;
    missing.name = "histogram";
    missing.message = "no histogram.cu in the submission";

    report.exercises = {mixed, slow, broken, missing};
    for (auto& e : report.exercises) {
        score_exercise(rubric(), e);
        report.points += e.points;
        report.max_points += e.max_points;
    }
    return report;
}

std::set<std::string> keys(const json& object)
{
    std::set<std::string> found;
    for (const auto& [key, value] : object.items()) found.insert(key);
    return found;
}

bool subset(const std::set<std::string>& part, const std::set<std::string>& whole)
{
    for (const auto& k : part)
        if (!whole.count(k)) return false;
    return true;
}


}  // namespace formats_fixture

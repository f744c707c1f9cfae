#include "grading/rubric.hpp"

#include <algorithm>
#include <cmath>

namespace grading {

Rubric Rubric::from_json(const nlohmann::json& j)
{
    Rubric r;
    r.correctness_points = j.value("correctness_points", r.correctness_points);
    r.speed_points = j.value("speed_points", r.speed_points);
    r.speed_full = j.value("speed_full", r.speed_full);
    r.speed_floor = j.value("speed_floor", r.speed_floor);
    r.speed_step = j.value("speed_step", r.speed_step);
    r.library_use_costs_all = j.value("library_use_costs_all", r.library_use_costs_all);
    if (j.contains("weight")) r.weight = j.at("weight").get<std::map<std::string, double>>();
    return r;
}

double Rubric::max_points(const std::string& exercise) const
{
    const auto w = weight.find(exercise);
    return (correctness_points + speed_points) * (w == weight.end() ? 1.0 : w->second);
}

void score_exercise(const Rubric& rubric, ExerciseResult& result)
{
    const auto w = rubric.weight.find(result.name);
    const double scale = w == rubric.weight.end() ? 1.0 : w->second;
    result.max_points = rubric.max_points(result.name);
    result.correctness_points = result.speed_points = result.points = 0;
    if (result.status != ExerciseStatus::graded || result.cases.empty()) return;

    const auto passed = std::count_if(result.cases.begin(), result.cases.end(),
                                      [](const CaseResult& c) { return c.status == CaseStatus::pass; });
    result.correctness_points =
        scale * rubric.correctness_points * static_cast<double>(passed) / static_cast<double>(result.cases.size());

    if (passed == static_cast<long>(result.cases.size())) {
        // The slowest timed case decides (an exercise has one or a few).
        double ratio = INFINITY;
        bool timed = false;
        for (const auto& c : result.cases) {
            if (!c.timed) continue;
            timed = true;  // a timed case without a timing (it ran out of time) scores no speed
            ratio = std::min(ratio, c.timing && c.timing->student_ms > 0 ? c.timing->speedup_vs_reference : 0.0);
        }
        if (timed) {
            const double fraction =
                std::clamp((ratio - rubric.speed_floor) / (rubric.speed_full - rubric.speed_floor), 0.0, 1.0);
            double points = scale * rubric.speed_points * fraction;
            if (rubric.speed_step > 0) points = std::round(points / rubric.speed_step) * rubric.speed_step;
            result.speed_points = points;
        }
    }
    if (!result.library_use.empty() && rubric.library_use_costs_all)
        result.correctness_points = result.speed_points = 0;
    result.points = result.correctness_points + result.speed_points;
}

}  // namespace grading

// How results become points. The defaults below can be overridden per course with a JSON file
// (`grade --rubric FILE`, see grading/rubric.example.json).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"

namespace grading {

struct Rubric {
    double correctness_points = 8;  // split evenly over the exercise's cases
    double speed_points = 2;        // only when every case passes
    // Speed points scale linearly from 0 at `speed_floor` to full at `speed_full`, as the ratio
    // reference time / student time; the result is rounded to `speed_step` points so that timing
    // noise near a value moves the score rarely and by little.
    double speed_full = 0.8, speed_floor = 0.25, speed_step = 0.25;
    bool library_use_costs_all = true;     // CONTRACT.md: calling CUB/Thrust/... costs the exercise's points
    std::map<std::string, double> weight;  // per exercise multiplier, default 1

    static Rubric from_json(const nlohmann::json& j);  // missing keys keep their defaults
    double max_points(const std::string& exercise) const;
};

// Fills correctness_points, speed_points, points and max_points of `result`.
void score_exercise(const Rubric& rubric, ExerciseResult& result);

}  // namespace grading

// Internal to the formats: what each format says about an exercise, written once for all of them,
// as plain text (PrairieLearn shows its output as it is) or as Markdown (Gradescope, CI summaries).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "grading/results.hpp"
#include "grading/rubric.hpp"

namespace grading::formats {

enum class Markup { text, markdown };

// An exercise's maximum, split as the rubric splits it (score_exercise): the weight scales both
// parts alike, so the rubric's proportions apply to every exercise.
struct PointsSplit {
    double correctness = 0, speed = 0;
};
PointsSplit split_points(const ExerciseResult& exercise, const Rubric& rubric);

std::size_t cases_passed(const ExerciseResult& exercise);
bool all_cases_pass(const ExerciseResult& exercise);  // graded, with cases, every one passed
// A case whose code did not finish normally, as opposed to a wrong answer or one never run.
bool is_error(CaseStatus status);
// "not submitted", "compile error": a status as a person reads it.
std::string spoken(ExerciseStatus status);
std::string spoken(CaseStatus status);

// The slowest timed case with a measured time and reference time: the one the rubric's speed
// points follow. nullptr when there is none.
const CaseResult* slowest_timed_case(const ExerciseResult& exercise);

// The speedup the speed points follow (the slowest timed case's), when they follow one: every case
// passed and every timed case has a time.
std::optional<double> counted_speedup(const ExerciseResult& exercise);

// The exercise's status and message on one line ("compile error: nvcc failed").
std::string status_line(const ExerciseResult& exercise);

// One line each: what the correctness and the speed tests come to.
std::string correctness_message(const ExerciseResult& exercise);
std::string speed_message(const ExerciseResult& exercise);

// The details behind those lines: the failing cases (label, status, summary, findings, the
// command that reruns the case), compile output; the speed cases' times, speedups, bandwidths.
std::string correctness_details(const ExerciseResult& exercise, Markup markup);
std::string speed_details(const ExerciseResult& exercise, const Rubric& rubric, Markup markup);

// What the exercise's technique lacks, one sentence a student understands per missing technique
// ("Your kernel never reads the mask from __constant__ memory ..."); empty when nothing is missing.
std::string technique_sentences(const ExerciseResult& exercise, Markup markup);

// One timed case's figures on one line, plain text ("1.234 ms, reference 1.100 ms: 0.89x ...").
std::string timing_line(const TimingResult& timing);

}  // namespace grading::formats

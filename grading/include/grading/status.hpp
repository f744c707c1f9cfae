// The statuses of results.json as types, each with its one spelling in text. The schema
// (grading/results.schema.json) lists the same spellings; a test proves that they match.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace grading {

// What happened to an exercise as a whole.
enum class ExerciseStatus {
    graded,              // it ran: its cases have their own statuses
    not_submitted,       // no <exercise>.cu in the submission
    compile_error,       // nvcc refused it (or ran out of time)
    missing_launcher,    // it compiled, but defines no launcher with the contract's signature
    invalid_submission,  // a forbidden header or symbol, several files of that name, ...
    runner_failed,       // the runner never got to run a case (did not start, ended at once)
    built,               // grade --build-only: it compiled, linked and passed the build checks; no case ran
};

// What happened to one case.
enum class CaseStatus {
    pass,            // correct, and nothing written outside `out`
    wrong,           // a wrong output or a write outside it; the findings say what
    cuda_error,      // the launcher left a CUDA error
    exception,       // a C++ exception escaped the launcher
    crashed,         // the runner process died (a signal or an exit)
    timeout,         // stopped by the case's time limit
    protocol_error,  // the runner said something it was not asked
    not_run,         // the exercise's time ran out, or an earlier case ended the runner
};

// Every value with its text, in declaration order: the one place a spelling is written.
template <typename Status>
struct StatusNames;

template <>
struct StatusNames<ExerciseStatus> {
    static constexpr std::array<std::pair<ExerciseStatus, const char*>, 7> all = {{
        {ExerciseStatus::graded, "graded"},
        {ExerciseStatus::not_submitted, "not_submitted"},
        {ExerciseStatus::compile_error, "compile_error"},
        {ExerciseStatus::missing_launcher, "missing_launcher"},
        {ExerciseStatus::invalid_submission, "invalid_submission"},
        {ExerciseStatus::runner_failed, "runner_failed"},
        {ExerciseStatus::built, "built"},
    }};
};

template <>
struct StatusNames<CaseStatus> {
    static constexpr std::array<std::pair<CaseStatus, const char*>, 8> all = {{
        {CaseStatus::pass, "pass"},
        {CaseStatus::wrong, "wrong"},
        {CaseStatus::cuda_error, "cuda_error"},
        {CaseStatus::exception, "exception"},
        {CaseStatus::crashed, "crashed"},
        {CaseStatus::timeout, "timeout"},
        {CaseStatus::protocol_error, "protocol_error"},
        {CaseStatus::not_run, "not_run"},
    }};
};

template <typename Status>
const char* to_text(Status status)
{
    for (const auto& [value, text] : StatusNames<Status>::all)
        if (value == status) return text;
    throw std::logic_error("a status without a name");
}

template <typename Status>
std::optional<Status> status_from_text(std::string_view text)
{
    for (const auto& [value, name] : StatusNames<Status>::all)
        if (text == name) return value;
    return std::nullopt;
}

// nlohmann/json finds these by argument-dependent lookup: json j = status; j.get<CaseStatus>().
inline void to_json(nlohmann::json& j, ExerciseStatus s)
{
    j = to_text(s);
}
inline void to_json(nlohmann::json& j, CaseStatus s)
{
    j = to_text(s);
}
template <typename Status>
void status_from_json(const nlohmann::json& j, Status& s)
{
    const auto parsed = status_from_text<Status>(j.get<std::string>());
    if (!parsed) throw std::invalid_argument("unknown status '" + j.get<std::string>() + "'");
    s = *parsed;
}
inline void from_json(const nlohmann::json& j, ExerciseStatus& s)
{
    status_from_json(j, s);
}
inline void from_json(const nlohmann::json& j, CaseStatus& s)
{
    status_from_json(j, s);
}

inline std::ostream& operator<<(std::ostream& out, ExerciseStatus s)
{
    return out << to_text(s);
}
inline std::ostream& operator<<(std::ostream& out, CaseStatus s)
{
    return out << to_text(s);
}

}  // namespace grading

// Hidden cases (issue 21): the rubric says which cases students see ("visible_cases") and may add
// cases no student saw ("hidden_cases"); a hidden case's seed comes from the instructor's secret
// through a keyed hash, and students' reports say of it only whether it passed and how it failed.
//
// Where the secret comes from: `--secret-file FILE`, or the environment variable
// PMPP_GRADER_SECRET, which grade takes out of its own environment (and out of the bytes that
// /proc/<pid>/environ shows) before anything else runs, so no child process inherits it.
//
// Which outputs are whose: results.json and the console are the instructor's full record (every
// case's label, size, seed, findings, and what the runners printed during hidden cases, apart in
// hidden_runner_output); Gradescope, PrairieLearn, JUnit, Markdown and --student-results are
// student-facing and written from student_view().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/results.hpp"
#include "grading/rubric.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"

namespace grading {

// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104): the keyed hash of the hidden seeds.
std::array<std::uint8_t, 32> sha256(std::string_view data);
std::array<std::uint8_t, 32> hmac_sha256(std::string_view key, std::string_view message);

// The environment variable grade takes the secret from.
constexpr const char* secret_variable = "PMPP_GRADER_SECRET";
// The shortest secret taken: a seed a runner sees must not let anyone search for the secret.
constexpr std::size_t min_secret_chars = 16;

// A secret that cannot be used (empty, too short, a file that cannot be read): the instructor's
// input, so a usage error.
struct SecretError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The instructor's secret. Never written anywhere: what leaves this object is a seed or id(), each
// an HMAC of it.
class HiddenCaseSecret {
public:
    enum class Source { environment, file };
    // Throws SecretError for a secret shorter than min_secret_chars. A file's trailing line
    // breaks and spaces are not part of it.
    HiddenCaseSecret(std::string text, Source source);
    // The seed of the hidden case `label` of `exercise`.
    std::uint64_t seed(const std::string& exercise, const std::string& label) const;
    // "0x" and 16 hex digits naming the secret without revealing it: gradings with one secret
    // have one id (results.json's hidden_cases.secret_id).
    std::string id() const;
    Source source() const { return source_; }
    // The secret itself, for grade class to hand to each student's grade (its environment).
    const std::string& text() const { return text_; }

private:
    std::string text_;
    Source source_;
};

// The secret in PMPP_GRADER_SECRET, taken out of this process's environment: unset, and its bytes
// overwritten where the kernel shows the environment the process started with
// (/proc/<pid>/environ). Called first thing in main, before any thread or child exists. Empty when
// the variable is not set.
std::optional<std::string> take_secret_from_environment();
// The secret in a file (SecretError naming the file when it cannot be read or is too short).
HiddenCaseSecret read_secret_file(const std::string& path);

// The rubric's "visible_cases" and "hidden_cases" (rubric.schema.json) into `rubric`; appends what
// is wrong (an unknown exercise, a pattern no case matches, an extra case outside its family's
// cases or with a public case's label) to `problems`, one line each with its JSON pointer.
void read_case_visibility(const nlohmann::json& document, Rubric& rubric, std::vector<std::string>& problems);

// The cases graded for `exercise` under `rubric`: the exercise's own, each hidden unless the rubric
// makes it visible, then the rubric's extra hidden cases; a hidden case's seed from `secret`. Without
// a secret a hidden case's seed is 0: such a list gives labels and sizes only, and grade() refuses it.
std::vector<harness::Case> graded_cases(const harness::Exercise& exercise, const Rubric& rubric,
                                        const HiddenCaseSecret* secret);
// Whether the rubric hides any case of these exercises (then grading needs a secret).
bool declares_hidden_cases(const Rubric& rubric, const std::vector<std::string>& exercises);

// What a student may see of a report: every hidden case reduced to whether it passed and its status,
// without label, size, data kind, seed, findings, time or the command that reruns it, listed after
// the visible cases in an order of the secret's ("hidden case 1", ...); what runners printed while
// they ran hidden cases left out; a hidden speed case's timing cut to the speedups. A report without
// hidden cases comes back as it was (but for hidden_cases.redacted).
GradeReport student_view(const GradeReport& report);

}  // namespace grading

#include "grading/hidden_cases.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fnmatch.h>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>  // environ

#include "harness/family.hpp"

namespace grading {
namespace {

// ---------------------------------------------------------------------------------------------
// SHA-256, FIPS 180-4 section 6.2
// ---------------------------------------------------------------------------------------------

constexpr std::uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

std::uint32_t rotate_right(std::uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

void compress(std::uint32_t state[8], const std::uint8_t block[64])
{
    std::uint32_t w[64];
    for (int t = 0; t < 16; ++t)
        w[t] = std::uint32_t{block[4 * t]} << 24 | std::uint32_t{block[4 * t + 1]} << 16 |
               std::uint32_t{block[4 * t + 2]} << 8 | std::uint32_t{block[4 * t + 3]};
    for (int t = 16; t < 64; ++t) {
        const std::uint32_t s0 = rotate_right(w[t - 15], 7) ^ rotate_right(w[t - 15], 18) ^ (w[t - 15] >> 3);
        const std::uint32_t s1 = rotate_right(w[t - 2], 17) ^ rotate_right(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6],
                  h = state[7];
    for (int t = 0; t < 64; ++t) {
        const std::uint32_t t1 = h + (rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25)) +
                                 ((e & f) ^ (~e & g)) + round_constants[t] + w[t];
        const std::uint32_t t2 = (rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22)) +
                                 ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    state[0] += a, state[1] += b, state[2] += c, state[3] += d;
    state[4] += e, state[5] += f, state[6] += g, state[7] += h;
}

// The first 8 bytes of a digest, big-endian.
std::uint64_t first_word(const std::array<std::uint8_t, 32>& digest)
{
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = value << 8 | digest[static_cast<std::size_t>(i)];
    return value;
}

// ---------------------------------------------------------------------------------------------
// The rubric's visibility and extra cases
// ---------------------------------------------------------------------------------------------

// "all" -> every label, "none" -> no label, a list -> those patterns.
std::vector<std::string> patterns_of(const nlohmann::json& labels)
{
    if (labels.is_string()) return labels == "all" ? std::vector<std::string>{"*"} : std::vector<std::string>{};
    return labels.get<std::vector<std::string>>();
}

bool any_label_matches(const std::string& pattern, const harness::Exercise& exercise)
{
    for (const auto& c : harness::cases_for(exercise))
        if (::fnmatch(pattern.c_str(), c.label.c_str(), 0) == 0) return true;
    return false;
}

// The range of a shape field over the exercise's own cases.
struct Span {
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    void add(std::int64_t v) { lo = std::min(lo, v), hi = std::max(hi, v); }
    bool holds(std::int64_t v) const { return v >= lo && v <= hi; }
    std::string text() const { return std::to_string(lo) + " to " + std::to_string(hi); }
};

// An extra case of the rubric, checked against what the exercise's own cases are: its shape one
// of its family's (ExerciseFamily::read_shape), each field of it within the range its cases span
// or, for a field its family names among its shape_choices (a mask_width), a value they use, its
// size within theirs, a data kind its cases use. Returns the problem, or empty with `c` filled.
std::string extra_case(const harness::Exercise& exercise, const nlohmann::json& j, harness::Case& c)
{
    const harness::ExerciseFamily& family = harness::family_of(exercise);
    const std::vector<std::string> choices = family.shape_choices();
    Span n;
    std::map<std::string, Span> spans;
    std::map<std::string, std::set<std::int64_t>> used;
    std::set<std::string> kinds;
    for (const auto& own : harness::cases_for(exercise)) {
        n.add(own.n);
        const nlohmann::json own_shape = family.shape_json(own);
        for (const auto& field : own_shape.items()) {
            spans[field.key()].add(field.value().get<std::int64_t>());
            used[field.key()].insert(field.value().get<std::int64_t>());
        }
        kinds.insert(harness::data_kind_name(own.data));
    }
    nlohmann::json shape = j;
    shape.erase("data");
    try {
        family.read_shape(shape, c);
    } catch (const std::exception& e) {
        return "a case of " + exercise.name + ": " + e.what();
    }
    for (const auto& field : shape.items()) {
        const std::string& name = field.key();
        const std::int64_t value = field.value().get<std::int64_t>();
        if (std::find(choices.begin(), choices.end(), name) != choices.end()) {
            if (used[name].count(value)) continue;
            std::string values;
            for (std::int64_t v : used[name]) values += (values.empty() ? "" : ", ") + std::to_string(v);
            return name + " " + std::to_string(value) + ": not one of the exercise's (" + values + ")";
        }
        if (!spans[name].holds(value))
            return name + " " + std::to_string(value) + ": outside the exercise's own cases (" + name + " " +
                   spans[name].text() + ")";
    }
    if (!n.holds(c.n))
        return "n = " + std::to_string(c.n) + ": outside the exercise's own cases (" + n.text() + " elements)";
    const std::string data = j.value("data", std::string("integers"));
    if (!kinds.count(data)) {
        std::string names;
        for (const auto& k : kinds) names += (names.empty() ? "" : ", ") + k;
        return "data " + data + ": not a kind of the exercise's cases (" + names + ")";
    }
    c.data = *harness::data_kind_named(data);
    c.hidden = true;
    c.label = harness::case_label(exercise, c);
    if (harness::find_case(harness::cases_for(exercise), c.label))
        return "the same as the exercise's own case " + c.label +
               ": to grade that case on a hidden seed, leave it out of visible_cases instead";
    return {};
}

// ---------------------------------------------------------------------------------------------
// The student's view
// ---------------------------------------------------------------------------------------------

CaseResult redacted(const CaseResult& c, std::size_t number)
{
    CaseResult r;
    r.index = c.index;  // not written in the student's view (report.cpp): it would name the case
    r.hidden = true;
    r.label = "hidden case " + std::to_string(number);
    r.timed = c.timed;
    r.status = c.status;
    r.summary = "a hidden case: its data, size and seed are not shown";
    if (c.timing) {
        TimingResult t;
        t.student_ms = c.timing->student_ms;
        t.reference_ms = c.timing->reference_ms;
        t.speedup_vs_reference = c.timing->speedup_vs_reference;
        r.timing = t;
    }
    return r;
}

}  // namespace

std::array<std::uint8_t, 32> sha256(std::string_view data)
{
    std::uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string padded(data);
    padded.push_back('\x80');
    while (padded.size() % 64 != 56) padded.push_back('\0');
    const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
    for (int i = 7; i >= 0; --i) padded.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    for (std::size_t at = 0; at < padded.size(); at += 64)
        compress(state, reinterpret_cast<const std::uint8_t*>(padded.data() + at));
    std::array<std::uint8_t, 32> digest{};
    for (std::size_t i = 0; i < 32; ++i) digest[i] = static_cast<std::uint8_t>(state[i / 4] >> (24 - 8 * (i % 4)));
    return digest;
}

std::array<std::uint8_t, 32> hmac_sha256(std::string_view key, std::string_view message)
{
    std::string block(64, '\0');
    if (key.size() > 64) {
        const auto hashed = sha256(key);
        std::copy(hashed.begin(), hashed.end(), block.begin());
    } else {
        std::copy(key.begin(), key.end(), block.begin());
    }
    std::string inner(64, '\0'), outer(64, '\0');
    for (std::size_t i = 0; i < 64; ++i) {
        inner[i] = static_cast<char>(block[i] ^ 0x36);
        outer[i] = static_cast<char>(block[i] ^ 0x5c);
    }
    const auto inner_digest = sha256(inner + std::string(message));
    return sha256(outer + std::string(inner_digest.begin(), inner_digest.end()));
}

HiddenCaseSecret::HiddenCaseSecret(std::string text, Source source) : text_(std::move(text)), source_(source)
{
    while (!text_.empty() && (text_.back() == '\n' || text_.back() == '\r' || text_.back() == ' '))
        text_.pop_back();
    if (text_.size() < min_secret_chars)
        throw SecretError("the secret of the hidden cases is " +
                          (text_.empty() ? std::string("empty") : std::to_string(text_.size()) + " characters") +
                          ": it needs at least " + std::to_string(min_secret_chars) +
                          " (make one with: head -c 32 /dev/urandom | base64)");
}

std::uint64_t HiddenCaseSecret::seed(const std::string& exercise, const std::string& label) const
{
    return first_word(hmac_sha256(text_, "pmpp-grader hidden case\n" + exercise + "\n" + label));
}

std::string HiddenCaseSecret::id() const
{
    return harness::hex64(first_word(hmac_sha256(text_, "pmpp-grader secret id")));
}

std::optional<std::string> take_secret_from_environment()
{
    const std::string prefix = std::string(secret_variable) + "=";
    std::optional<std::string> secret;
    for (char** entry = environ; entry && *entry; ++entry) {
        if (std::strncmp(*entry, prefix.c_str(), prefix.size()) != 0) continue;
        secret = std::string(*entry + prefix.size());
        // The string lives in the block the process started with, which /proc/<pid>/environ shows
        // (unsetenv only drops the pointer to it): its value goes first.
        std::memset(*entry + prefix.size(), 0, std::strlen(*entry + prefix.size()));
    }
    ::unsetenv(secret_variable);
    return secret;
}

HiddenCaseSecret read_secret_file(const std::string& path)
{
    errno = 0;
    std::ifstream file(path, std::ios::binary);
    if (!file)
        throw SecretError(path + ": cannot read the secret file (" +
                          (errno ? std::string(std::strerror(errno)) : std::string("reason unknown")) + ")");
    std::ostringstream text;
    text << file.rdbuf();
    try {
        return HiddenCaseSecret(text.str(), HiddenCaseSecret::Source::file);
    } catch (const SecretError& e) {
        throw SecretError(path + ": " + e.what());
    }
}

void read_case_visibility(const nlohmann::json& document, Rubric& rubric, std::vector<std::string>& problems)
{
    if (const auto visible = document.find("visible_cases"); visible != document.end()) {
        if (visible->is_object()) {
            for (const auto& [name, labels] : visible->items()) {
                const harness::Exercise* exercise = harness::find_exercise(name);
                if (!exercise) {
                    problems.push_back("/visible_cases/" + name + ": no exercise named '" + name +
                                       "' (grade --list names them)");
                    continue;
                }
                rubric.visible_cases.per_exercise[name] = patterns_of(labels);
                for (const auto& pattern : rubric.visible_cases.per_exercise[name])
                    if (!any_label_matches(pattern, *exercise))
                        problems.push_back("/visible_cases/" + name + ": the pattern \"" + pattern +
                                           "\" matches no case of " + name + " (grade --list shows the labels)");
            }
        } else {
            rubric.visible_cases.others = patterns_of(*visible);
            for (const auto& pattern : rubric.visible_cases.others) {
                const auto& all = harness::all_exercises();
                if (std::none_of(all.begin(), all.end(),
                                 [&](const harness::Exercise& e) { return any_label_matches(pattern, e); }))
                    problems.push_back("/visible_cases: the pattern \"" + pattern +
                                       "\" matches no case of any exercise (grade --list shows the labels)");
            }
        }
    }
    if (const auto extra = document.find("hidden_cases"); extra != document.end()) {
        for (const auto& [name, list] : extra->items()) {
            const harness::Exercise* exercise = harness::find_exercise(name);
            if (!exercise) {
                problems.push_back("/hidden_cases/" + name + ": no exercise named '" + name +
                                   "' (grade --list names them)");
                continue;
            }
            std::vector<harness::Case>& cases = rubric.hidden_cases[name];
            for (std::size_t k = 0; k < list.size(); ++k) {
                harness::Case c;
                const std::string where = "/hidden_cases/" + name + "/" + std::to_string(k) + ": ";
                if (const std::string problem = extra_case(*exercise, list[k], c); !problem.empty())
                    problems.push_back(where + problem);
                else if (std::any_of(cases.begin(), cases.end(), [&](const harness::Case& o) { return o.label == c.label; }))
                    problems.push_back(where + "a second case " + c.label);
                else
                    cases.push_back(c);
            }
        }
    }
}

std::vector<harness::Case> graded_cases(const harness::Exercise& exercise, const Rubric& rubric,
                                        const HiddenCaseSecret* secret)
{
    std::vector<harness::Case> cases = harness::cases_for(exercise);
    if (const auto extra = rubric.hidden_cases.find(exercise.name); extra != rubric.hidden_cases.end())
        for (harness::Case c : extra->second) {
            c.index = static_cast<int>(cases.size());
            c.timed = false;  // the speed cases are the exercise's own
            cases.push_back(std::move(c));
        }
    for (auto& c : cases) {
        c.hidden = c.hidden || !rubric.visible_cases.visible(exercise.name, c.label);
        if (c.hidden) c.seed = secret ? secret->seed(exercise.name, c.label) : 0;
    }
    return cases;
}

bool declares_hidden_cases(const Rubric& rubric, const std::vector<std::string>& exercises)
{
    for (const auto& name : exercises)
        if (const harness::Exercise* exercise = harness::find_exercise(name))
            for (const auto& c : graded_cases(*exercise, rubric, nullptr))
                if (c.hidden) return true;
    return false;
}

GradeReport student_view(const GradeReport& report)
{
    GradeReport view = report;
    view.hidden_cases.redacted = true;
    view.hidden_cases.secret_id.clear();
    // The clocks say how long the hidden cases' runners took, which each runner chooses: one that
    // sleeps a time of its input's choosing (its seed, its size) would spell it out in the exercise's
    // seconds, the next exercise's start, the whole run's seconds (Gradescope's execution_time) or,
    // beside exercises graded in parallel, another case's wait for the GPU. With hidden cases a
    // student's view holds no wall-clock time but the speed cases' timings.
    const bool hides = std::any_of(report.exercises.begin(), report.exercises.end(), [](const ExerciseResult& e) {
        return std::any_of(e.cases.begin(), e.cases.end(), [](const CaseResult& c) { return c.hidden; });
    });
    if (hides) {
        view.seconds = 0;
        for (auto& e : view.exercises) {
            e.seconds = e.started_seconds = e.compile_seconds = e.gpu_place_wait_seconds = 0;
            for (auto& c : e.cases) c.seconds = c.check_seconds = c.gpu_wait_seconds = c.gpu_exclusive_seconds = 0;
        }
    }
    for (auto& e : view.exercises) {
        e.hidden_runner_output.clear();
        std::vector<CaseResult> shown, hidden;
        for (auto& c : e.cases) (c.hidden ? hidden : shown).push_back(std::move(c));
        // In an order of the secret's: a student who knows the public labels cannot tell which
        // hidden case is which.
        std::sort(hidden.begin(), hidden.end(), [](const CaseResult& a, const CaseResult& b) { return a.seed < b.seed; });
        for (std::size_t k = 0; k < hidden.size(); ++k) shown.push_back(redacted(hidden[k], k + 1));
        e.cases = std::move(shown);
    }
    return view;
}

}  // namespace grading

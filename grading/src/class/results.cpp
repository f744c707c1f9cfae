// The class's results from its students' folders: record.json, grade's results.json, previous/ (see
// class_results.hpp); class.csv; writing the class's files.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "class_internal.hpp"
#include "../formats/text.hpp"
#include "grader_config.hpp"
#include "grading/class_results.hpp"
#include "grading/report.hpp"
#include "harness/exercise.hpp"
#include "harness/text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grading {

namespace class_detail {

std::string number_text(double x, int decimals)
{
    if (!std::isfinite(x)) return "0";
    char buffer[64];
    const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::fixed, decimals);
    if (error != std::errc()) return "0";
    std::string text(buffer, end);
    if (text.find('.') != std::string::npos) {
        while (text.back() == '0') text.pop_back();
        if (text.back() == '.') text.pop_back();
    }
    if (text == "-0") text = "0";
    return text;
}

std::string one_line_text(std::string_view text)
{
    std::string line;
    for (const char c : harness::printable_text(text)) {
        if (c == '\n')
            line += "\\n";
        else if (c == '\t')
            line += "\\t";
        else
            line += c;
    }
    return line;
}

double number_or_zero(const json& object, const char* key)
{
    if (!object.is_object()) return 0;
    const auto found = object.find(key);
    return found != object.end() && found->is_number() ? found->get<double>() : 0;
}

}  // namespace class_detail

using class_detail::every_case_passed;
using class_detail::number_or_zero;
using class_detail::number_text;

namespace student_files {
const std::vector<std::pair<std::string, std::string>>& formats()
{
    static const std::vector<std::pair<std::string, std::string>> files = {
        {"--gradescope", "gradescope.json"}, {"--prairielearn", "prairielearn.json"},
        {"--junit", "junit.xml"},            {"--markdown", "summary.md"},
        {"--student-results", "student-results.json"},
        {"--output", "results.json"},
    };
    return files;
}
}  // namespace student_files

namespace {

std::string text_of(const json& object, const char* key)
{
    if (!object.is_object()) return {};
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? harness::valid_text(found->get<std::string>()) : std::string();
}

json submitters_json(const std::vector<Submitter>& submitters)
{
    json list = json::array();
    for (const auto& s : submitters)
        list.push_back({{"name", harness::valid_text(s.name)},
                        {"sid", harness::valid_text(s.sid)},
                        {"email", harness::valid_text(s.email)}});
    return list;
}

}  // namespace

// Every case of every exercise passed, and no library was used (grade's exit code 0).
bool class_detail::every_case_passed(const json& results)
{
    for (const auto& e : results.at("exercises")) {
        if (text_of(e, "status") != "graded") return false;
        if (e.contains("library_use") && !e.at("library_use").empty()) return false;
        for (const auto& c : e.at("cases"))
            if (text_of(c, "status") != "pass") return false;
    }
    return true;
}

namespace {

// The geometric mean of an exercise's speedups over the reference (its timed cases); empty: none.
std::optional<double> exercise_speedup(const json& exercise)
{
    double log_sum = 0;
    int count = 0;
    for (const auto& c : exercise.value("cases", json::array())) {
        const auto timing = c.find("timing");
        if (timing == c.end() || !timing->is_object()) continue;
        const double s = number_or_zero(*timing, "speedup_vs_reference");
        if (s > 0 && std::isfinite(s)) log_sum += std::log(s), ++count;
    }
    if (count == 0) return std::nullopt;
    return std::exp(log_sum / count);
}

// A diagnosis with its numbers left out, so that the same mistake of two students reads the same.
std::string diagnosis_kind(const std::string& summary)
{
    static const std::regex numbers("[0-9][0-9,.]*(e[-+]?[0-9]+)?");
    std::string text = std::regex_replace(std::string(harness::utf8_prefix(summary, 300)), numbers, "#");
    return text.empty() ? "(no diagnosis)" : text;
}

double median(std::vector<double> values)
{
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Exercise name -> points, of one grading's results.
std::map<std::string, double> points_by_exercise(const json& results)
{
    std::map<std::string, double> points;
    for (const auto& e : results.at("exercises")) points[text_of(e, "name")] = number_or_zero(e, "points");
    return points;
}

std::vector<std::string> exercises_in_registry_order(const std::set<std::string>& names)
{
    std::vector<std::string> ordered;
    for (const auto& e : harness::all_exercises())
        if (names.count(e.name)) ordered.push_back(e.name);
    for (const auto& name : names)
        if (std::find(ordered.begin(), ordered.end(), name) == ordered.end()) ordered.push_back(name);
    return ordered;
}

// A grader-side problem to look at by hand.
json problem(const std::string& student, const std::string& exercise, const std::string& kind,
             const std::string& detail)
{
    return {{"student", student},
            {"exercise", exercise},
            {"kind", kind},
            {"detail", std::string(harness::utf8_prefix(harness::valid_text(detail), 600))}};
}

// Who a student is and where and when they were graded: what the record file and the class's
// results say alike.
json student_identity(const StudentRecord& r)
{
    return {{"name", r.name},
            {"source", harness::valid_text(r.source)},
            {"layout", r.layout},
            {"submitters", submitters_json(r.submitters)},
            {"gpu", r.gpu},
            {"gpu_label", harness::valid_text(r.gpu_label)},
            {"started_at", r.started_at},
            {"seconds", r.seconds}};
}

}  // namespace

json to_json(const StudentRecord& r)
{
    json j = student_identity(r);
    j["outcome"] = r.outcome;
    j["exit_code"] = r.exit_code;
    j["message"] = harness::valid_text(r.message);
    j["shard"] = r.shard;
    j["grading"] = r.grading;
    return j;
}

StudentRecord record_from_json(const json& j)
{
    StudentRecord r;
    r.name = j.at("name").get<std::string>();
    r.source = j.value("source", std::string());
    r.layout = j.value("layout", std::string("plain"));
    for (const auto& s : j.value("submitters", json::array()))
        r.submitters.push_back(
            {s.value("name", std::string()), s.value("sid", std::string()), s.value("email", std::string())});
    r.gpu = j.value("gpu", std::string());
    r.gpu_label = j.value("gpu_label", std::string());
    r.started_at = j.value("started_at", std::string());
    r.seconds = j.value("seconds", 0.0);
    r.outcome = j.value("outcome", std::string("running"));
    r.exit_code = j.value("exit_code", -1);
    r.message = j.value("message", std::string());
    r.shard = j.value("shard", std::string());
    r.grading = j.value("grading", std::string());
    return r;
}

std::optional<json> read_grade_results(const std::string& path)
{
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(path, ec))) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    json results = json::parse(in, nullptr, false);
    if (results.is_discarded() || !results.is_object() || !results.contains("exercises") ||
        !results.at("exercises").is_array() || !results.contains("points"))
        return std::nullopt;
    for (const auto& e : results.at("exercises"))
        if (!e.is_object() || !e.contains("cases") || !e.at("cases").is_array()) return std::nullopt;
    return results;
}

StudentFolder read_student_folder(const std::string& dir_text)
{
    const fs::path dir(dir_text);
    StudentFolder folder;
    folder.record.name = dir.filename().string();
    std::ifstream record_file(dir / student_files::record);
    if (record_file) {
        const json record = json::parse(record_file, nullptr, false);
        try {
            if (!record.is_discarded()) folder.record = record_from_json(record);
        } catch (const json::exception&) {
        }
        folder.record.name = dir.filename().string();  // the folder's name is the student's
    }
    folder.results = read_grade_results((dir / student_files::results).string());
    // The latest of previous/<n>/ that holds results.
    int latest = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir / student_files::previous, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (!n.empty() && n.size() < 9 && std::all_of(n.begin(), n.end(), ::isdigit) && std::stoi(n) > latest &&
            read_grade_results((it->path() / student_files::results).string()))
            latest = std::stoi(n);
    }
    if (latest > 0)
        folder.previous =
            read_grade_results((dir / student_files::previous / std::to_string(latest) / student_files::results).string());
    return folder;
}

json class_results(const std::vector<StudentFolder>& folders_in, std::vector<std::string> exercises)
{
    std::vector<const StudentFolder*> folders;
    for (const auto& f : folders_in) folders.push_back(&f);
    std::sort(folders.begin(), folders.end(),
              [](const StudentFolder* a, const StudentFolder* b) { return a->record.name < b->record.name; });
    if (exercises.empty()) {
        std::set<std::string> found;
        for (const auto* f : folders)
            if (f->results)
                for (const auto& e : f->results->at("exercises")) found.insert(text_of(e, "name"));
        exercises = exercises_in_registry_order(found);
    }

    json students = json::array(), problems = json::array(), changes = json::array();
    struct CaseFailures {
        int index = 0, students = 0;
        std::map<std::string, int> statuses, diagnoses;
        std::vector<std::string> who;
    };
    std::map<std::pair<std::string, std::string>, CaseFailures> failures;  // (exercise, label)
    struct ExerciseStats {
        double max_points = 0;
        std::vector<double> points, speedups;
        int full_marks = 0, zero = 0, submitted = 0;
    };
    std::map<std::string, ExerciseStats> stats;
    std::vector<double> totals;
    int passed = 0, failed = 0, not_graded = 0;
    double max_points = 0;

    for (const auto* f : folders) {
        const StudentRecord& r = f->record;
        json s = student_identity(r);
        s["files"] = "students/" + r.name + "/";
        s["regraded"] = f->previous.has_value();
        s["exercises"] = json::array();
        if (!f->results) {
            ++not_graded;
            s["status"] = "not_graded";
            s["message"] = r.outcome == "not_graded" ? harness::valid_text(r.message)
                                                     : std::string("its grading has not finished (run the same command "
                                                                   "again to grade it)");
            s["device"] = "";
            s["points"] = nullptr;
            s["max_points"] = nullptr;
            problems.push_back(problem(r.name, "", "not_graded", s["message"].get<std::string>()));
        } else {
            const json& results = *f->results;
            const bool all_passed = every_case_passed(results);
            ++(all_passed ? passed : failed);
            s["status"] = all_passed ? "passed" : "failed";
            s["message"] = "";
            s["device"] = text_of(results, "device");
            s["points"] = number_or_zero(results, "points");
            s["max_points"] = number_or_zero(results, "max_points");
            totals.push_back(number_or_zero(results, "points"));
            max_points = std::max(max_points, number_or_zero(results, "max_points"));
            for (const auto& e : results.at("exercises")) {
                const std::string name = text_of(e, "name"), status = text_of(e, "status");
                int passed_cases = 0;
                std::map<std::string, std::pair<int, std::string>> kinds;  // grader-side case statuses
                for (const auto& c : e.at("cases")) {
                    const std::string cs = text_of(c, "status");
                    if (cs == "pass") {
                        ++passed_cases;
                        continue;
                    }
                    if (cs == "timeout" || cs == "crashed" || cs == "protocol_error" || cs == "exception") {
                        auto& k = kinds[cs];
                        if (k.first++ == 0) k.second = text_of(c, "label") + ": " + text_of(c, "summary");
                    }
                    if (cs == "not_run") continue;
                    CaseFailures& cf = failures[{name, text_of(c, "label")}];
                    cf.index = c.value("index", 0);
                    ++cf.students;
                    ++cf.statuses[cs];
                    ++cf.diagnoses[diagnosis_kind(text_of(c, "summary"))];
                    if (cf.who.size() < 30) cf.who.push_back(r.name);
                }
                for (const auto& [kind, first] : kinds)
                    problems.push_back(problem(r.name, name, kind,
                                               std::to_string(first.first) + " case(s), first " + first.second));
                if (status == "runner_failed" || status == "invalid_submission" || status == "missing_launcher")
                    problems.push_back(problem(r.name, name, status, text_of(e, "message")));
                if (e.contains("library_use") && e.at("library_use").is_array() && !e.at("library_use").empty()) {
                    std::string libraries;
                    for (const auto& l : e.at("library_use"))
                        if (l.is_string()) libraries += (libraries.empty() ? "" : ", ") + harness::valid_text(l.get<std::string>());
                    problems.push_back(problem(r.name, name, "library_use", libraries));
                }
                const std::optional<double> speedup = exercise_speedup(e);
                s["exercises"].push_back({{"name", name},
                                          {"status", status},
                                          {"points", number_or_zero(e, "points")},
                                          {"max_points", number_or_zero(e, "max_points")},
                                          {"correctness_points", number_or_zero(e, "correctness_points")},
                                          {"speed_points", number_or_zero(e, "speed_points")},
                                          {"speedup", speedup ? json(*speedup) : json(nullptr)},
                                          {"cases", e.at("cases").size()},
                                          {"passed_cases", passed_cases}});
                ExerciseStats& st = stats[name];
                const double p = number_or_zero(e, "points"), m = number_or_zero(e, "max_points");
                st.max_points = std::max(st.max_points, m);
                st.points.push_back(p);
                if (m > 0 && p >= m - 1e-9) ++st.full_marks;
                if (p <= 0) ++st.zero;
                if (status != "not_submitted") ++st.submitted;
                if (speedup) st.speedups.push_back(*speedup);
            }
        }
        if (f->previous) {
            json change = {{"student", r.name},
                           {"before", number_or_zero(*f->previous, "points")},
                           {"after", f->results ? json(number_or_zero(*f->results, "points")) : json(nullptr)},
                           {"exercises", json::array()}};
            const auto before = points_by_exercise(*f->previous);
            const auto after = f->results ? points_by_exercise(*f->results) : std::map<std::string, double>{};
            std::set<std::string> names;
            for (const auto& [n, p] : before) names.insert(n);
            for (const auto& [n, p] : after) names.insert(n);
            for (const auto& n : exercises_in_registry_order(names)) {
                const auto b = before.find(n), a = after.find(n);
                const double bp = b == before.end() ? 0 : b->second, ap = a == after.end() ? 0 : a->second;
                if (b == before.end() || a == after.end() || std::abs(bp - ap) > 1e-9)
                    change["exercises"].push_back({{"name", n},
                                                   {"before", b == before.end() ? json(nullptr) : json(bp)},
                                                   {"after", a == after.end() ? json(nullptr) : json(ap)}});
            }
            change["changed"] = !change["exercises"].empty() || change["after"].is_null();
            changes.push_back(change);
        }
        students.push_back(std::move(s));
    }

    std::vector<std::pair<std::pair<std::string, std::string>, CaseFailures>> ranked(failures.begin(), failures.end());
    const auto exercise_rank = [&exercises](const std::string& name) {
        return std::find(exercises.begin(), exercises.end(), name) - exercises.begin();
    };
    std::sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
        if (a.second.students != b.second.students) return a.second.students > b.second.students;
        if (a.first.first != b.first.first) return exercise_rank(a.first.first) < exercise_rank(b.first.first);
        return a.second.index < b.second.index;
    });
    json failing = json::array();
    for (const auto& [key, cf] : ranked) {
        if (failing.size() >= 50) break;
        json diagnoses = json::array();
        std::vector<std::pair<std::string, int>> by_count(cf.diagnoses.begin(), cf.diagnoses.end());
        std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        for (std::size_t k = 0; k < by_count.size() && k < 5; ++k)
            diagnoses.push_back({{"summary", by_count[k].first}, {"students", by_count[k].second}});
        failing.push_back({{"exercise", key.first},
                           {"label", key.second},
                           {"students", cf.students},
                           {"statuses", cf.statuses},
                           {"diagnoses", diagnoses},
                           {"who", cf.who}});
    }

    json exercise_stats = json::array();
    for (const auto& name : exercises) {
        const ExerciseStats& st = stats[name];
        double sum = 0;
        for (double p : st.points) sum += p;
        exercise_stats.push_back({{"name", name},
                                  {"max_points", st.max_points},
                                  {"graded", st.points.size()},
                                  {"submitted", st.submitted},
                                  {"mean_points", st.points.empty() ? 0.0 : sum / static_cast<double>(st.points.size())},
                                  {"full_marks", st.full_marks},
                                  {"zero", st.zero},
                                  {"points", st.points},
                                  {"speedups", st.speedups},
                                  {"median_speedup", st.speedups.empty() ? json(nullptr) : json(median(st.speedups))}});
    }
    std::vector<std::pair<std::string, const json*>> graded;
    for (const auto* f : folders)
        if (f->results) graded.emplace_back(f->record.name, &*f->results);
    double total_sum = 0;
    for (double t : totals) total_sum += t;
    return {{"schema_version", class_results_schema_version},
            {"grader_version", GRADER_VERSION},
            {"generated_at", formats::utc_now()},
            {"exercises", exercises},
            {"summary",
             {{"students", folders.size()},
              {"passed", passed},
              {"failed", failed},
              {"not_graded", not_graded},
              {"mean_points", totals.empty() ? 0.0 : total_sum / static_cast<double>(totals.size())},
              {"median_points", median(totals)},
              {"max_points", max_points}}},
            {"exercise_stats", exercise_stats},
            {"students", students},
            {"failing_cases", failing},
            {"problems", problems},
            {"similar_kernels", similar_kernels(graded, exercises)},
            {"changes", changes}};
}

namespace {

std::string csv_field(const std::string& text)
{
    std::string field = text;
    if (!field.empty() && (field[0] == '=' || field[0] == '+' || field[0] == '-' || field[0] == '@' ||
                           field[0] == '\t' || field[0] == '\r'))
        field = "'" + field;
    if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
    std::string quoted = "\"";
    for (char c : field) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

}  // namespace

std::string class_csv(const json& results)
{
    std::vector<std::string> header = {"student"};
    for (const auto& e : results.at("exercises")) header.push_back(e.get<std::string>());
    for (const char* column : {"total", "max_points", "status", "gpu", "seconds"}) header.push_back(column);
    std::string csv;
    const auto row = [&csv](const std::vector<std::string>& fields) {
        for (std::size_t k = 0; k < fields.size(); ++k) csv += (k ? "," : "") + fields[k];
        csv += "\r\n";
    };
    std::vector<std::string> quoted;
    for (const auto& h : header) quoted.push_back(csv_field(h));
    row(quoted);
    for (const auto& s : results.at("students")) {
        const bool graded = !s.at("points").is_null();
        std::vector<std::string> fields = {csv_field(text_of(s, "name"))};
        for (const auto& name : results.at("exercises")) {
            std::string points;
            if (graded) {
                points = "0";
                for (const auto& e : s.at("exercises"))
                    if (e.at("name") == name) points = number_text(number_or_zero(e, "points"));
            }
            fields.push_back(points);
        }
        fields.push_back(graded ? number_text(number_or_zero(s, "points")) : "");
        fields.push_back(graded ? number_text(number_or_zero(s, "max_points")) : "");
        fields.push_back(csv_field(text_of(s, "status")));
        fields.push_back(csv_field(text_of(s, "gpu")));
        fields.push_back(number_text(number_or_zero(s, "seconds"), 1));
        row(fields);
    }
    return csv;
}

void write_class_files(const std::string& output_dir, const json& results)
{
    const fs::path out(output_dir);
    write_file_atomically((out / "results.json").string(), results.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    write_file_atomically((out / "class.csv").string(), class_csv(results));
    write_file_atomically((out / "report.html").string(), class_report_html(results));
}

}  // namespace grading

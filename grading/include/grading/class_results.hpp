// A class's results: what `grade class` knows of each student's grading (OUT/students/<name>/record.json),
// the class's results.json built from every student's results (schema: grading/class_results.schema.json),
// and the two views of it, class.csv and report.html. Every file is written atomically.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/class_roster.hpp"

namespace grading {

constexpr int class_results_schema_version = 2;

// The files of one student's folder, OUT/students/<name>/.
namespace student_files {
constexpr const char* record = "record.json";  // StudentRecord
constexpr const char* results = "results.json";  // grade's results: the student is graded when it parses
constexpr const char* log = "grade.log";          // what grade printed
constexpr const char* previous = "previous";      // previous/<n>/: the results before each --regrade
constexpr const char* work = "work";              // grade's --work-dir
constexpr const char* pending = ".pending";       // grade writes here; moved in when it ends
// The result files grade writes for the student, results.json last (it says the student is done).
const std::vector<std::pair<std::string, std::string>>& formats();  // (grade's option, file name)
}  // namespace student_files

// What the class knows of one student's grading, besides grade's own results.
struct StudentRecord {
    std::string name;
    std::string source;  // the student's folder
    std::string layout = "plain";
    std::vector<Submitter> submitters;
    std::string gpu;         // the CUDA_VISIBLE_DEVICES entry its grade had
    std::string gpu_label;   // how the console and the report name that GPU
    std::string started_at;  // ISO 8601 UTC
    double seconds = 0;      // wall time of its grade
    // "running" (written before grade starts), "graded" (grade wrote its results) or "not_graded"
    // (grade refused, crashed or ran out of time: `message` says which).
    std::string outcome = "running";
    int exit_code = -1;  // grade's, when it exited
    std::string message;
    std::string shard;   // "I/N" when graded as a shard
    // What decides the points besides the student's files, as 16 hex digits of a SHA-256: the grading
    // options (but --jobs, --parallel, --gpu-lock-dir), the bytes of the --rubric file and the hidden
    // cases' secret's id. A rerun with another says which students keep results of other options
    // (empty: an older record).
    std::string grading;
};
nlohmann::json to_json(const StudentRecord& record);
// Throws nlohmann::json::exception on a record of the wrong shape.
StudentRecord record_from_json(const nlohmann::json& json);

// results.json of a grading, parsed; empty when missing, unreadable or not grade's results.
std::optional<nlohmann::json> read_grade_results(const std::string& path);

// One student as the class's results take it: the record, grade's results, and the results before
// the last --regrade (previous/<highest n>/results.json), each where there is one.
struct StudentFolder {
    StudentRecord record;
    std::optional<nlohmann::json> results;
    std::optional<nlohmann::json> previous;
};
// Reads OUT/students/<name>/; a folder without a record is named after itself (outcome "running").
StudentFolder read_student_folder(const std::string& dir);

// The class's results.json (schema: grading/class_results.schema.json). `exercises`: the columns, in
// order; empty: every exercise found in the students' results, in the registry's order.
nlohmann::json class_results(const std::vector<StudentFolder>& students, std::vector<std::string> exercises);

// Students whose compiled kernels are near-identical to each other's, for course staff to review;
// never penalised, nothing here changes points. Per exercise, every pair of students whose files
// were built is compared by their kernels' fingerprints (grading/build.hpp's KernelFingerprint,
// results.json's "fingerprint"): the share of their runs of 5 opcodes they have in common, runs
// the hidden reference's code has left out. Not compared: a file with fewer than
// min_similar_kernel_runs runs of its own (an unchanged stub, whose kernels are empty, or a file
// that is the reference), and a pair that both match the reference's compiled code (already among
// the problems). `students`: (name, grade's results), in the class's order. Pairs at or above
// similar_kernel_threshold are listed, with their similarity, and joined into groups.
constexpr double similar_kernel_threshold = 0.5;
constexpr std::size_t min_similar_kernel_runs = 20;
nlohmann::json similar_kernels(const std::vector<std::pair<std::string, const nlohmann::json*>>& students,
                               const std::vector<std::string>& exercises);

// One row per student: student, points of each exercise, total, max_points, status, gpu, seconds.
// RFC 4180: CRLF line ends, a field with a comma, quote or line break quoted, quotes doubled; numbers
// with '.' decimals whatever the locale; a text field that a spreadsheet would take for a formula
// (=, +, -, @ first) gets a leading apostrophe. Points of a student not graded are left empty.
std::string class_csv(const nlohmann::json& class_results);

// A page that needs nothing but itself: inline CSS and SVG, no script, no network (its
// Content-Security-Policy forbids both). Every text from a submission or a student is escaped.
std::string class_report_html(const nlohmann::json& class_results);

// `text` for HTML text and attribute values: & < > " ' escaped, and valid UTF-8.
std::string html_escape(const std::string& text);

// Writes OUT/results.json, OUT/class.csv and OUT/report.html, each atomically.
void write_class_files(const std::string& output_dir, const nlohmann::json& class_results);

}  // namespace grading

// Who is in a class: every student folder below `grade class --submissions DIR`, named so that the
// name can be a file name. Three layouts are told apart by what DIR holds:
//   - Gradescope's "Export Submissions": submission_metadata.yml beside submission_<id>/ folders; a
//     student is named after the first submitter's e-mail (else their SID, else their name, else the
//     folder), and every submitter is kept;
//   - a GitHub Classroom clone: every folder is <assignment>-<username> with one common prefix ending
//     in '-' (two folders at least); a student is named after <username>;
//   - plain: one folder per student, named after the folder.
// Names are cleaned (letters, digits, '.', '_', '-', '@'; first a letter or a digit; at most
// 64 bytes; never "." or ".."), and made unique by a suffix in the order of their folders.
// Files, links and hidden entries at DIR's top are skipped, with a note.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace grading {

enum class RosterLayout { plain, gradescope, github_classroom };
const char* to_string(RosterLayout layout);

struct Submitter {
    std::string name, sid, email;  // as Gradescope's metadata gives them: any text
};

struct RosterEntry {
    std::string name;                  // clean, unique in the roster: OUT/students/<name>/
    std::string source;                // the student's folder, absolute
    std::vector<Submitter> submitters;  // Gradescope only
};

struct Roster {
    RosterLayout layout = RosterLayout::plain;
    std::vector<RosterEntry> students;  // sorted by name
    std::vector<std::string> notes;     // what was skipped, and why (printable)
};

class RosterError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws RosterError when `dir` cannot be read or holds no student folder.
Roster discover_roster(const std::string& dir);

// `raw` as a student's name (see above); empty input gives "student".
std::string clean_student_name(std::string_view raw);

// Gradescope's submission_metadata.yml: submission folder -> its submitters. Only the shape
// Gradescope writes is read (a top-level key per submission, its ":submitters:" list of ":name:",
// ":sid:", ":email:"); anything else is ignored, never an error.
std::vector<std::pair<std::string, std::vector<Submitter>>> parse_gradescope_metadata(const std::string& text);

// The share of shard `index` of `count`: the students at positions p (in name order) with
// p % count == index.
std::vector<RosterEntry> shard_of(const std::vector<RosterEntry>& students, int index, int count);

}  // namespace grading

// Who is in a class: every student folder below `grade class --submissions DIR`, named so that the
// name can be a file name. Three layouts are told apart by what DIR holds:
//   - Gradescope's "Export Submissions": submission_metadata.yml beside submission_<id>/ folders; a
//     student is named after the first submitter's e-mail (else their SID, else their name, else the
//     folder), and every submitter is kept; a name from an e-mail is given before one from an SID, a
//     folder or a display name, which a student chooses;
//   - a GitHub Classroom clone: folders <assignment>-<username>; a student is named after <username>.
//     Where DIR is the clone's folder, <assignment>-submissions (as `gh classroom clone
//     student-repos` names it), or holds only that folder, the assignment is its name, and a folder
//     without its prefix (a renamed repository) keeps its whole name with a note; otherwise the
//     prefix is the one common to every folder, ending in '-' (two folders at least);
//   - plain: one folder per student, named after the folder.
// Names are cleaned (letters, digits, '.', '_', '-', '@'; first a letter or a digit; at most
// 64 bytes; never "." or ".."), and made unique by a suffix in the order of their folders.
// Files and links at DIR's top are skipped with a note (a link is never followed), hidden entries
// (.git/, .github/, .DS_Store) silently; a folder whose name had to be cleaned gets a note too.
#pragma once

#include <cstdint>
#include <optional>
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
    std::string assignment;             // GitHub Classroom: the assignment whose prefix was taken off
    std::vector<RosterEntry> students;  // sorted by name
    std::vector<std::string> notes;     // what was skipped, and why (printable)
};

class RosterError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// How a class's folders were named on its first run (grade class keeps it in OUT/roster.json), so
// that no folder that comes or changes later (a repository renamed) renames the others on a resume:
// a plain class stays plain, a GitHub Classroom clone keeps its assignment's prefix. A Gradescope
// export is told by its metadata, which no student writes.
struct RosterNaming {
    RosterLayout layout = RosterLayout::plain;
    std::string assignment;  // GitHub Classroom only
};

// RosterNaming as OUT/roster.json holds it: {"layout", "assignment"}. Reading gives nullopt where the
// file is missing or is not one naming_json wrote (then the folders' own names decide, as on a first run).
std::string naming_json(const Roster& roster);
std::optional<RosterNaming> read_roster_naming(const std::string& file);

// Throws RosterError when `dir` cannot be read or holds no student folder. `earlier`: the naming of
// the class's first run (a clone's <assignment>-submissions folder still says its assignment).
Roster discover_roster(const std::string& dir, const std::optional<RosterNaming>& earlier = std::nullopt);

// `raw` as a student's name (see above); empty input gives "student".
std::string clean_student_name(std::string_view raw);

// `name` is one the roster gives (a letter or digit first, then letters, digits, '.', '_', '-', '@';
// at most 80 bytes, a suffix included): what a folder of OUT/students/ must be called to be a student's
// (not "alice (copy)", a staging ".alice.merging" or a name that is no text).
bool is_student_name(std::string_view name);

// Gradescope's submission_metadata.yml: submission folder -> its submitters. Only the shape
// Gradescope writes is read (a top-level key per submission, its ":submitters:" list of ":name:",
// ":sid:", ":email:"); anything else is ignored, never an error. A line deeper than a submitter's keys
// goes on with the value above it (a long name folded, a "|-" block for a name with line breaks): a
// display name never sets another field.
std::vector<std::pair<std::string, std::vector<Submitter>>> parse_gradescope_metadata(const std::string& text);

// Shards (`grade class --shard I/N`): a student's shard depends on their own folder alone, so that
// adding or removing a folder never moves another student to another shard (a Slurm array run again
// after a late submission grades nobody twice and leaves nobody out). The key is the student
// folder's name on disk (the last component of `source`: "submission_123", "hw1-octocat", "alice"),
// not the cleaned name, which can change when another folder comes (a suffix, the Classroom prefix).
// shard_hash: the first 8 bytes of the SHA-256 of the name's bytes, as a big-endian number; the
// shard is that mod N. Stable across builds, machines and versions (never std::hash), and checked by
// hand with `printf %s NAME | sha256sum` (see grading/integrations/slurm/README.md). (FNV-1a was
// weighed and not taken: its low bits depend only on the bytes' low bits, and N is often a power of
// two.) Hashing balances only on average: a small class can leave a shard with no student.
std::uint64_t shard_hash(std::string_view folder_name);
// The shard, 0 to count - 1, of `student` among `count` (0 when count <= 1).
int shard_of_student(const RosterEntry& student, int count);
// The students of shard `index` of `count`, in the order of `students`.
std::vector<RosterEntry> shard_of(const std::vector<RosterEntry>& students, int index, int count);

}  // namespace grading

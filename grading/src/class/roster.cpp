#include "grading/class_roster.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "class_internal.hpp"
#include "../formats/text.hpp"
#include "grading/hidden_cases.hpp"
#include "harness/text.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

constexpr std::size_t max_name_bytes = 64;
constexpr std::size_t max_metadata_bytes = 64 << 20;
constexpr const char* gradescope_metadata = "submission_metadata.yml";

bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || c == '@';
}

bool first_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A YAML scalar as Gradescope writes them: plain, 'single' ('' is a quote) or "double" (\" and \\).
std::string yaml_scalar(std::string_view raw)
{
    std::string text = formats::trimmed(raw);
    if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') {
        std::string out;
        for (std::size_t i = 1; i + 1 < text.size(); ++i) {
            out += text[i];
            if (text[i] == '\'' && i + 2 < text.size() && text[i + 1] == '\'') ++i;
        }
        return out;
    }
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
        std::string out;
        for (std::size_t i = 1; i + 1 < text.size(); ++i) {
            if (text[i] == '\\' && i + 2 < text.size()) ++i;
            out += text[i];
        }
        return out;
    }
    return text;
}

std::size_t indentation(const std::string& line)
{
    std::size_t k = 0;
    while (k < line.size() && line[k] == ' ') ++k;
    return k;
}

// What a student's name was made of, most trusted first: a folder of the plain and GitHub Classroom
// layouts; in a Gradescope export, the first submitter's e-mail, SID, else the export's folder (named
// by Gradescope), and last a display name (any text the student chose), or in a GitHub Classroom
// clone a repository without the assignment's prefix (a name the student chose).
enum class NameSource { folder, email, sid, gradescope_folder, display_name, outside_assignment };

struct Folder {
    std::string file_name;  // as on disk
    fs::path path;
};

// The student folders at the top of `dir` (sorted by file name), and notes on what was skipped.
std::vector<Folder> top_folders(const fs::path& dir, std::vector<std::string>& notes)
{
    std::vector<Folder> folders;
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    if (ec) throw RosterError("--submissions " + dir.string() + ": cannot read it (" + ec.message() + ")");
    for (; it != end; it.increment(ec)) {
        if (ec) throw RosterError("--submissions " + dir.string() + ": cannot read it (" + ec.message() + ")");
        const std::string file_name = it->path().filename().string();
        std::error_code status_error;
        const fs::file_status status = it->symlink_status(status_error);
        if (status_error) continue;
        if (!file_name.empty() && file_name[0] == '.') continue;  // .git, .DS_Store...
        if (fs::is_symlink(status)) {
            notes.push_back("skipped " + class_detail::one_line_text(file_name) + ": a link, not a folder");
            continue;
        }
        if (!fs::is_directory(status)) {
            if (file_name != gradescope_metadata)
                notes.push_back("skipped " + class_detail::one_line_text(file_name) + ": a file, not a student folder");
            continue;
        }
        folders.push_back({file_name, fs::absolute(it->path())});
    }
    std::sort(folders.begin(), folders.end(),
              [](const Folder& a, const Folder& b) { return a.file_name < b.file_name; });
    return folders;
}

// A folder of `prefix`'s assignment: named <prefix><something>.
bool of_assignment(const Folder& folder, const std::string& prefix)
{
    return folder.file_name.size() > prefix.size() && folder.file_name.compare(0, prefix.size(), prefix) == 0;
}

// GitHub Classroom's "<assignment>-". Where the assignment is known (the clone's folder said it), its
// prefix if any folder has it; else the common prefix of every folder name, up to its last '-', when
// each name goes on past it. Empty: not that layout.
std::string classroom_prefix(const std::vector<Folder>& folders, const std::string& assignment)
{
    if (!assignment.empty()) {
        const std::string prefix = assignment + "-";
        const bool any = std::any_of(folders.begin(), folders.end(),
                                     [&prefix](const Folder& f) { return of_assignment(f, prefix); });
        return any ? prefix : std::string();
    }
    if (folders.size() < 2) return {};
    std::string prefix = folders.front().file_name;
    for (const auto& f : folders) {
        std::size_t k = 0;
        while (k < prefix.size() && k < f.file_name.size() && prefix[k] == f.file_name[k]) ++k;
        prefix.resize(k);
    }
    const auto dash = prefix.rfind('-');
    if (dash == std::string::npos || dash == 0) return {};
    prefix.resize(dash + 1);
    for (const auto& f : folders)
        if (f.file_name.size() <= prefix.size()) return {};
    return prefix;
}

// The assignment of a `gh classroom clone student-repos` folder, "<assignment>-submissions"; empty
// for any other name.
std::string classroom_assignment(const std::string& folder_name)
{
    const std::string suffix = "-submissions";
    if (folder_name.size() <= suffix.size() ||
        folder_name.compare(folder_name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    return folder_name.substr(0, folder_name.size() - suffix.size());
}

std::string read_bounded(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::string text;
    text.resize(max_metadata_bytes);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

}  // namespace

const char* to_string(RosterLayout layout)
{
    switch (layout) {
    case RosterLayout::gradescope: return "gradescope";
    case RosterLayout::github_classroom: return "github_classroom";
    case RosterLayout::plain: break;
    }
    return "plain";
}

std::string naming_json(const Roster& roster)
{
    nlohmann::json j = {{"layout", to_string(roster.layout)}};
    if (roster.layout == RosterLayout::github_classroom) j["assignment"] = roster.assignment;
    return j.dump(2) + "\n";
}

std::optional<RosterNaming> read_roster_naming(const std::string& file)
{
    std::error_code ec;
    if (!fs::is_regular_file(file, ec) || fs::file_size(file, ec) > 4096) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("layout") || !j["layout"].is_string()) return std::nullopt;
    RosterNaming naming;
    const std::string layout = j["layout"];
    if (layout == "github_classroom") {
        if (!j.contains("assignment") || !j["assignment"].is_string() || j["assignment"].get<std::string>().empty())
            return std::nullopt;
        naming.layout = RosterLayout::github_classroom;
        naming.assignment = j["assignment"];
    } else if (layout == "gradescope") {
        naming.layout = RosterLayout::gradescope;
    } else if (layout != "plain") {
        return std::nullopt;
    }
    return naming;
}

std::string clean_student_name(std::string_view raw)
{
    std::string name;
    for (char c : raw) {
        if (name.size() >= max_name_bytes) break;
        const char kept = name_char(c) ? c : '_';
        // Runs of replaced characters become one '_'.
        if (kept == '_' && !name.empty() && name.back() == '_' && !name_char(c)) continue;
        name += kept;
    }
    // Never ".", "..", a hidden file, an option ("-x") or a spreadsheet formula ("@x", "-1").
    while (!name.empty() && !first_char(name.front())) name.erase(name.begin());
    while (!name.empty() && (name.back() == '.' || name.back() == '_') && name.size() > 1) name.pop_back();
    if (name.empty() || name == "_") return "student";
    return name;
}

bool is_student_name(std::string_view name)
{
    return !name.empty() && name.size() <= max_name_bytes + 16 && first_char(name.front()) &&
           std::all_of(name.begin(), name.end(), name_char);
}

std::vector<std::pair<std::string, std::vector<Submitter>>> parse_gradescope_metadata(const std::string& text)
{
    std::vector<std::pair<std::string, std::vector<Submitter>>> submissions;
    std::istringstream in(text);
    std::string line;
    bool in_submitters = false;
    std::size_t submitters_indent = 0, item_indent = 0, key_indent = 0;
    // The field the last key set, and its text as written so far: a line deeper than the keys goes on
    // with that value (a long name folded onto more lines, a "|-" block for a name with line breaks)
    // and is never read as a key or an item of its own, whatever it says (a submitter's name is theirs).
    std::string* value = nullptr;
    std::string value_text;
    bool value_block = false;
    std::size_t block_indent = 0;
    const auto finish_value = [&] {
        if (value) *value = value_block ? value_text : yaml_scalar(value_text);
        value = nullptr;
    };
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (const std::string bare = formats::trimmed(line); bare.empty() || bare[0] == '#') continue;
        const std::size_t indent = indentation(line);
        const std::string content = line.substr(indent);
        if (value && indent > key_indent) {
            if (!value_block)
                value_text += " " + formats::trimmed(content);
            else {
                if (value_text.empty()) block_indent = indent;
                value_text += (value_text.empty() ? "" : "\n") + line.substr(std::min(indent, block_indent));
            }
            continue;
        }
        finish_value();
        if (indent == 0) {
            in_submitters = false;
            if (content.size() > 1 && content.back() == ':') submissions.push_back({yaml_scalar(content.substr(0, content.size() - 1)), {}});
            continue;
        }
        if (submissions.empty()) continue;
        if (!in_submitters) {
            // Only the submission's own list (its first level), not one in :history: below it.
            if (content == ":submitters:" && submissions.back().second.empty() && indent <= 2) {
                in_submitters = true;
                submitters_indent = indent;
                item_indent = 0;
                key_indent = std::string::npos;  // no item yet
            }
            continue;
        }
        if (indent > key_indent) continue;  // the rest of a value not read
        std::string field = content;
        const bool item = field.rfind("- ", 0) == 0;
        if (item) {
            if (indent < submitters_indent || (item_indent != 0 && indent != item_indent)) {
                in_submitters = false;
                continue;
            }
            item_indent = indent;
            submissions.back().second.push_back({});
            key_indent = indent + 2 + indentation(field.substr(2));
            field = formats::trimmed(field.substr(2));
        } else if (indent <= submitters_indent) {
            in_submitters = false;
            continue;
        }
        if (submissions.back().second.empty()) continue;
        Submitter& s = submissions.back().second.back();
        const auto colon = field.find(": ");
        if (field.empty() || field[0] != ':' || colon == std::string::npos) continue;
        const std::string key = field.substr(1, colon - 1);
        value_text = formats::trimmed(field.substr(colon + 2));
        value_block = !value_text.empty() && (value_text[0] == '|' || value_text[0] == '>');
        if (value_block) value_text.clear();
        value = key == "name" ? &s.name : key == "sid" ? &s.sid : key == "email" ? &s.email : nullptr;
    }
    finish_value();
    return submissions;
}

Roster discover_roster(const std::string& dir_text, const std::optional<RosterNaming>& earlier)
{
    Roster roster;
    fs::path dir = dir_text;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw RosterError("--submissions " + dir_text + ": no such directory");
    std::vector<Folder> folders = top_folders(dir, roster.notes);
    // `gh classroom clone student-repos` puts the clones in one folder, <assignment>-submissions: given
    // that folder or the one above it, the assignment's name is known, and no student's repository
    // (renamed, say) changes how the others are named.
    std::string assignment;
    if (folders.size() == 1 && !fs::exists(dir / gradescope_metadata) &&
        !classroom_assignment(folders.front().file_name).empty()) {
        dir = folders.front().path;
        roster.notes.push_back("the students' folders are in " +
                               class_detail::one_line_text(folders.front().file_name));
        assignment = classroom_assignment(folders.front().file_name);
        folders = top_folders(dir, roster.notes);
    } else if (!fs::exists(dir / gradescope_metadata)) {
        const fs::path whole = fs::absolute(dir).lexically_normal();  // "hw1-submissions/" has no filename()
        assignment = classroom_assignment((whole.has_filename() ? whole : whole.parent_path()).filename().string());
    }
    // Named as on the class's first run where the folders' own names do not say the assignment (a
    // Gradescope export is told by its metadata, below, whatever the first run was).
    bool stay_plain = false;
    if (earlier && assignment.empty()) {
        if (earlier->layout == RosterLayout::github_classroom) assignment = earlier->assignment;
        stay_plain = earlier->layout == RosterLayout::plain;
    }
    if (folders.empty())
        throw RosterError("--submissions " + dir_text +
                          ": no student folders in it\n  (give the folder that holds one folder per student, a "
                          "Gradescope export or a GitHub Classroom clone)");

    // (folder, raw name, submitters), in folder order; names are cleaned and made unique below.
    struct Raw {
        const Folder* folder;
        std::string name;
        std::vector<Submitter> submitters;
        NameSource source = NameSource::folder;
    };
    std::vector<Raw> raw;
    if (fs::is_regular_file(dir / gradescope_metadata, ec)) {
        roster.layout = RosterLayout::gradescope;
        std::map<std::string, std::vector<Submitter>> metadata;
        for (auto& [key, submitters] : parse_gradescope_metadata(read_bounded(dir / gradescope_metadata)))
            metadata.emplace(key, std::move(submitters));
        for (const auto& f : folders) {
            Raw r{&f, f.file_name, {}, NameSource::gradescope_folder};
            if (auto found = metadata.find(f.file_name); found != metadata.end() && !found->second.empty()) {
                r.submitters = found->second;
                const Submitter& first = r.submitters.front();
                if (!first.email.empty())
                    r.name = first.email, r.source = NameSource::email;
                else if (!first.sid.empty())
                    r.name = first.sid, r.source = NameSource::sid;
                else if (!first.name.empty())
                    r.name = first.name, r.source = NameSource::display_name;
            } else {
                roster.notes.push_back(class_detail::one_line_text(f.file_name) + ": not in " + gradescope_metadata +
                                       ", named after its folder");
            }
            raw.push_back(std::move(r));
        }
    } else if (const std::string prefix = stay_plain ? std::string() : classroom_prefix(folders, assignment);
               !prefix.empty()) {
        roster.layout = RosterLayout::github_classroom;
        roster.assignment = prefix.substr(0, prefix.size() - 1);
        roster.notes.push_back("GitHub Classroom folders of the assignment " +
                               class_detail::one_line_text(roster.assignment) +
                               ": students named after what follows it");
        for (const auto& f : folders) {
            const bool ours = of_assignment(f, prefix);
            if (!ours)
                roster.notes.push_back(class_detail::one_line_text(f.file_name) + ": not named " +
                                       class_detail::one_line_text(prefix) + "..., named after its whole folder");
            // The assignment's repositories are named first: a renamed one ("bob") never takes the
            // name of a student whose repository is the assignment's ("hw1-bob").
            raw.push_back({&f, ours ? f.file_name.substr(prefix.size()) : f.file_name, {},
                           ours ? NameSource::folder : NameSource::outside_assignment});
        }
    } else {
        for (const auto& f : folders) raw.push_back({&f, f.file_name, {}});
    }

    // A name that needed no cleaning belongs to its folder: names are given to those first, so that
    // no other folder takes it by cleaning to it ("-alice", "hw1--alice") or by a suffix ("alice!"
    // next to "alice" becomes "alice-3" where a folder "alice-2" exists). In a Gradescope export, names
    // from e-mails (an account's own) first, then SIDs, folders, and display names (text a student chose).
    std::vector<std::size_t> order(raw.size());
    for (std::size_t k = 0; k < raw.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&raw](std::size_t a, std::size_t b) { return raw[a].source < raw[b].source; });
    std::set<std::string> taken;
    std::vector<std::string> names(raw.size());
    for (const std::size_t k : order) {
        const std::string base = clean_student_name(raw[k].name);
        if (base == raw[k].name && taken.insert(base).second) names[k] = base;
    }
    for (const std::size_t k : order) {
        if (!names[k].empty()) continue;
        const std::string base = clean_student_name(raw[k].name);
        std::string name = base;
        for (int suffix = 2; taken.count(name); ++suffix) name = base + "-" + std::to_string(suffix);
        taken.insert(name);
        names[k] = name;
    }
    for (std::size_t k = 0; k < raw.size(); ++k)
        if (names[k] != raw[k].name)
            roster.notes.push_back("the folder " + class_detail::one_line_text(raw[k].folder->file_name) +
                                   " is the student " + names[k] +
                                   " (a name keeps letters, digits, '.', '_', '-', '@', starts with a " +
                                   "letter or a digit, has at most 64 bytes, and is unique)");
    for (std::size_t k = 0; k < raw.size(); ++k)
        roster.students.push_back({names[k], raw[k].folder->path.string(), std::move(raw[k].submitters)});
    std::sort(roster.students.begin(), roster.students.end(),
              [](const RosterEntry& a, const RosterEntry& b) { return a.name < b.name; });
    return roster;
}

std::uint64_t shard_hash(std::string_view folder_name)
{
    const auto digest = sha256(folder_name);
    std::uint64_t h = 0;
    for (int k = 0; k < 8; ++k) h = h << 8 | digest[static_cast<std::size_t>(k)];
    return h;
}

int shard_of_student(const RosterEntry& student, int count)
{
    if (count <= 1) return 0;
    return static_cast<int>(shard_hash(fs::path(student.source).filename().string()) %
                            static_cast<std::uint64_t>(count));
}

std::vector<RosterEntry> shard_of(const std::vector<RosterEntry>& students, int index, int count)
{
    std::vector<RosterEntry> share;
    for (const auto& s : students)
        if (shard_of_student(s, count) == index) share.push_back(s);
    return share;
}

}  // namespace grading

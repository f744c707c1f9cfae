// Submission discovery: the one file of each exercise below the submission's folder, and whether it
// is built (decided here, once). The walk follows no link, enters no hidden folder (a clone's .git/,
// .github/) and never throws: what it cannot read, and every entry named like an exercise's file
// that is not a plain readable file, is that exercise's finding; everything else is graded.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grading/build.hpp"
#include "harness/exercise.hpp"
#include "harness/text.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

constexpr int max_depth = 32;                // folders below the submission's
constexpr std::size_t max_entries = 100000;  // entries looked at, in all
constexpr std::size_t max_listed = 3;        // paths named in one message

// An entry named like an exercise's file.
struct Found {
    std::string path;   // as on disk
    std::string shown;  // relative to the submission, valid UTF-8
    bool directory = false;
    std::string problem;  // why it is not a file to build; empty: build it
};

struct Walk {
    std::map<std::string, std::vector<Found>> named;  // "<exercise>.cu" -> its entries
    std::map<std::string, std::vector<std::string>> near;  // exercise -> entries named close to its file, shown
    std::vector<std::string> unread;                  // what could not be read, shown
};

// A file name as a person meant it: lower case, without its extensions, a leading "NN_" (the
// handout's folders), a copy's " (1)" or " - Copy", and with '-', ' ' and '.' as '_'.
std::string meant_name(const std::string& file_name)
{
    std::string name = file_name.substr(0, file_name.find('.'));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    static const std::regex copy_marker(R"(([ _-]*\([0-9]+\)|[ _-]+copy( ?[0-9]+)?|[ _-]+\([0-9]+\))+$)");
    static const std::regex number_prefix(R"(^[0-9]+[ _-]+)");
    static const std::regex separators(R"([ ._-]+)");
    name = std::regex_replace(name, copy_marker, "");
    name = std::regex_replace(name, number_prefix, "");
    name = std::regex_replace(name, separators, "_");
    while (!name.empty() && name.front() == '_') name.erase(name.begin());
    while (!name.empty() && name.back() == '_') name.pop_back();
    return name;
}

std::vector<std::string> words_of(const std::string& name)
{
    std::vector<std::string> words;
    std::istringstream in(name);
    for (std::string word; std::getline(in, word, '_');)
        if (!word.empty()) words.push_back(word);
    return words;
}

std::size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The exercise a file of this name was most likely meant for (kogge_stone.cu, Scan_Brent_Kung.cu,
// "scan_hierarchical (1).cu", scan-brent-kung.cu, conv1d.cu, scan_koge_stone.cu), or empty: its
// name, as meant, is an exercise's, a few letters from one, or words of exactly one. Only source
// files (.cu, .cuh, .cpp, .txt, ... or no extension) and never an exercise's exact file name.
std::string exercise_meant(const std::string& file_name)
{
    static const std::regex source_like(R"(([^.]*)(\.(cu|cuh|cpp|cc|cxx|c|txt))*)", std::regex::icase);
    if (file_name.size() > 100 || !std::regex_match(file_name, source_like)) return {};
    const std::string meant = meant_name(file_name);
    if (meant.size() < 4) return {};
    const std::vector<std::string> words = words_of(meant);
    std::vector<std::string> by_words, by_letters;
    for (const auto& e : harness::all_exercises()) {
        if (file_name == e.name + ".cu") return {};
        if (meant == e.name) return e.name;
        const std::vector<std::string> exercise_words = words_of(e.name);
        if (std::all_of(words.begin(), words.end(), [&](const std::string& w) {
                return std::find(exercise_words.begin(), exercise_words.end(), w) != exercise_words.end();
            }))
            by_words.push_back(e.name);
        if (meant.size() >= 6 && edit_distance(meant, e.name) <= 2) by_letters.push_back(e.name);
    }
    if (by_letters.size() == 1) return by_letters.front();
    if (by_words.size() == 1) return by_words.front();
    return {};
}

std::string shown(const std::string& relative)
{
    return harness::valid_text(relative);
}

std::string error_text(int error)
{
    return std::strerror(error);
}

// What stands in the way of building the entry at `path`, which messages call `name` (empty: nothing).
std::string problem_of(const std::string& path, const std::string& name)
{
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return name + " cannot be read: " + error_text(errno);
    if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        const std::string target = fs::read_symlink(path, ec).string();
        std::string where = ec ? std::string() : " (to " + shown(target) + ")";
        struct stat followed {};
        if (::stat(path.c_str(), &followed) != 0)
            where += errno == ELOOP ? ", which loops" : errno == ENOENT ? ", which leads nowhere" : "";
        return name + " is a symbolic link" + where + "; submit the file itself";
    }
    if (S_ISDIR(st.st_mode)) return name + " is a folder, not a file";
    if (S_ISFIFO(st.st_mode)) return name + " is a FIFO (a named pipe), not a file";
    if (S_ISSOCK(st.st_mode)) return name + " is a socket, not a file";
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return name + " is a device, not a file";
    if (!S_ISREG(st.st_mode)) return name + " is not a regular file";
    if (static_cast<std::uintmax_t>(st.st_size) > max_source_bytes)
        return name + " is larger than " + std::to_string(max_source_bytes >> 20) + " MiB (" +
               std::to_string(st.st_size) + " bytes); a submission file is source code";
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return name + " cannot be read: " + error_text(errno);
    ::close(fd);
    return {};
}

// Every entry below `directory` whose name is one of `names`, without following a link.
Walk walk(const std::string& directory, const std::set<std::string>& names)
{
    Walk w;
    std::set<std::pair<dev_t, ino_t>> visited;  // a folder reached twice (a bind mount) is a loop
    std::vector<std::pair<fs::path, int>> folders = {{"", 0}};  // relative path, depth
    std::size_t entries = 0;
    while (!folders.empty()) {
        const auto [relative, depth] = folders.back();
        folders.pop_back();
        const fs::path folder = relative.empty() ? fs::path(directory) : fs::path(directory) / relative;
        const std::string what = relative.empty() ? std::string("the submission's folder")
                                                  : shown(relative.string() + "/");
        struct stat st {};
        if (::stat(folder.c_str(), &st) == 0 && !visited.insert({st.st_dev, st.st_ino}).second) {
            w.unread.push_back(what + " (a loop)");
            continue;
        }
        std::error_code ec;
        fs::directory_iterator it(folder, ec);
        for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
            if (++entries > max_entries) {
                w.unread.push_back("everything after the first " + std::to_string(max_entries) + " entries");
                return w;
            }
            const std::string name = it->path().filename().string();
            const fs::path below = relative.empty() ? fs::path(name) : relative / name;
            std::error_code type_error;
            const fs::file_status status = it->symlink_status(type_error);
            const bool directory_entry = !type_error && fs::is_directory(status);
            if (names.count(name)) {
                Found found{it->path().string(), shown(below.string()), directory_entry, {}};
                found.problem = problem_of(found.path, found.shown);
                w.named[name].push_back(std::move(found));
            } else if (!type_error && !directory_entry) {
                if (const std::string meant = exercise_meant(name); names.count(meant + ".cu"))
                    w.near[meant].push_back(shown(below.string()));
            }
            if (type_error) {
                w.unread.push_back(shown(below.string()) + " (" + type_error.message() + ")");
            } else if (directory_entry && name[0] == '.') {
                // A hidden folder is no submission content: a clone's .git/ (skipped silently), a
                // GitHub Classroom .github/, an editor's .vscode/.
                if (name != ".git") w.unread.push_back(shown(below.string() + "/") + " (a hidden folder)");
            } else if (directory_entry) {
                if (depth + 1 > max_depth)
                    w.unread.push_back(shown(below.string() + "/") + " (more than " + std::to_string(max_depth) +
                                       " folders deep)");
                else
                    folders.emplace_back(below, depth + 1);
            }
        }
        if (ec) w.unread.push_back(what + " (" + ec.message() + ")");
    }
    return w;
}

// "a, b, c (and 2 more)".
std::string listed(const std::vector<std::string>& items)
{
    std::string text;
    for (std::size_t k = 0; k < items.size() && k < max_listed; ++k) text += (k ? ", " : "") + items[k];
    if (items.size() > max_listed) text += " (and " + std::to_string(items.size() - max_listed) + " more)";
    return text;
}

}  // namespace

std::vector<SubmissionFile> find_submission(const std::string& directory, const std::vector<std::string>& exercises)
{
    std::set<std::string> names;
    for (const auto& exercise : exercises) names.insert(exercise + ".cu");
    Walk w;
    try {
        w = walk(directory, names);
    } catch (const std::exception& e) {  // out of memory, say: nothing found, and why
        w = Walk{};
        w.unread.push_back(std::string("the submission's folder (") + e.what() + ")");
    }
    const std::string unread = harness::valid_text(listed(w.unread));

    std::vector<SubmissionFile> files;
    for (const auto& exercise : exercises) {
        SubmissionFile file;
        file.exercise = exercise;
        std::vector<Found> entries = w.named[exercise + ".cu"];
        std::sort(entries.begin(), entries.end(), [](const Found& a, const Found& b) { return a.path < b.path; });
        // A folder of that name counts only where nothing else has it (the file may be inside).
        std::vector<Found> files_named;
        std::copy_if(entries.begin(), entries.end(), std::back_inserter(files_named),
                     [](const Found& f) { return !f.directory; });
        if (!files_named.empty()) entries = files_named;
        if (entries.empty()) {
            file.unread = unread;
            std::vector<std::string> near = w.near[exercise];
            std::sort(near.begin(), near.end());
            for (std::size_t k = 0; k < near.size() && k < max_listed; ++k)
                file.near_miss += (k ? "; " : "") + near[k] + ": did you mean " + exercise + ".cu?";
            if (near.size() > max_listed)
                file.near_miss += " (and " + std::to_string(near.size() - max_listed) + " more like it)";
        } else if (entries.size() > 1) {
            std::vector<std::string> paths;
            for (const auto& f : entries) paths.push_back(f.shown);
            file.path = entries.front().path;
            file.refusal = "more than one file named " + exercise + ".cu (" + listed(paths) +
                           "); the name must be unique";
        } else {
            file.path = entries.front().path;
            file.refusal = entries.front().problem;
        }
        files.push_back(std::move(file));
    }
    return files;
}

}  // namespace grading

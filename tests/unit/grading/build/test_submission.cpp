// Submission discovery (grading/src/build/submission.cpp): each exercise's file anywhere below the
// folder, and its refusal, decided once. Odd trees are built in a temporary folder: links that
// loop, lead nowhere or out of the submission, a FIFO, a socket, a folder named like a file, names
// that are not UTF-8, a file too large, trees too deep. Nothing throws; each finding is its own
// exercise's.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "grading/build.hpp"
#include "harness/text.hpp"
#include "odd_tree.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

using test_support::contains;

// A folder of this test process's own, made afresh and removed at the end of the scope.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name)
        : path(fs::temp_directory_path() / ("grader_test_submission_" + std::to_string(::getpid()) + "_" + name))
    {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir()
    {
        std::error_code ignored;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
        fs::remove_all(path, ignored);
    }
};

void write(const fs::path& path, const std::string& text = "// FAKE_RUNNER: correct\n")
{
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

// A listening-free socket bound at `path` (its file stays after the descriptor is closed).
bool make_socket(const fs::path& path)
{
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.string().size() >= sizeof address.sun_path) {
        ::close(fd);
        return false;
    }
    std::strcpy(address.sun_path, path.c_str());
    const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    return bound;
}

const std::vector<std::string> all = {"scan_kogge_stone",
                                      "scan_brent_kung",
                                      "scan_hierarchical",
                                      "reduce_interleaved_divergent",
                                      "reduce_interleaved_bank_conflicts",
                                      "reduce_sequential_addressing",
                                      "reduce_first_add_during_load",
                                      "reduce_unroll_last_warp",
                                      "conv1d_tiled",
                                      "conv2d_tiled"};

const SubmissionFile& of(const std::vector<SubmissionFile>& files, const std::string& exercise)
{
    for (const auto& f : files)
        if (f.exercise == exercise) return f;
    FAIL("no entry for " << exercise);
    throw;
}

}  // namespace

TEST_CASE("submission discovery: anywhere below, unique names, missing files")
{
    const TempDir dir("plain");
    write(dir.path / "part1" / "deep" / "scan_kogge_stone.cu");
    write(dir.path / "part1" / "scan_brent_kung.cu");
    write(dir.path / "part2" / "scan_brent_kung.cu");
    write(dir.path / "notes.txt", "scan_hierarchical.cu");
    write(dir.path / "elsewhere.txt");
    fs::create_symlink(dir.path / "elsewhere.txt", dir.path / "part2" / "conv1d_tiled.cu");
    const auto files = find_submission(dir.path.string(),
                                       {"scan_kogge_stone", "scan_brent_kung", "scan_hierarchical", "conv1d_tiled"});
    REQUIRE(files.size() == 4);
    CHECK(files[0].path == (dir.path / "part1" / "deep" / "scan_kogge_stone.cu").string());
    CHECK(files[0].refusal.empty());
    CHECK(files[0].buildable());

    CHECK(files[1].path == (dir.path / "part1" / "scan_brent_kung.cu").string());  // the first by path
    CHECK(files[1].refusal ==
          "more than one file named scan_brent_kung.cu (part1/scan_brent_kung.cu, part2/scan_brent_kung.cu); "
          "the name must be unique");
    CHECK_FALSE(files[1].buildable());

    CHECK(files[2].path.empty());
    CHECK(files[2].refusal.empty());
    CHECK(files[2].unread.empty());
    CHECK_FALSE(files[2].buildable());

    CHECK(files[3].path == (dir.path / "part2" / "conv1d_tiled.cu").string());
    CHECK(contains(files[3].refusal, "part2/conv1d_tiled.cu is a symbolic link (to "));
    CHECK(contains(files[3].refusal, "; submit the file itself"));
}

TEST_CASE("odd trees: every link, loop, FIFO, socket, folder and odd name is its own exercise's finding")
{
    const TempDir dir("odd");
    const fs::path& d = dir.path;
    make_odd_tree(d);
    // Besides: a socket, a file too large (sparse), two files of one name, one of them below a
    // folder whose name is not UTF-8 and holds a terminal sequence.
    const bool socket = make_socket(d / "reduce_interleaved_divergent.cu");
    fs::create_directories(d / "big");
    {
        std::ofstream big(d / "big" / "reduce_unroll_last_warp.cu");
    }
    fs::resize_file(d / "big" / "reduce_unroll_last_warp.cu", max_source_bytes + 1);
    write(d / "a" / "reduce_interleaved_bank_conflicts.cu");
    write(d / "\xff\xfe\x1b[31m" / "reduce_interleaved_bank_conflicts.cu");

    std::vector<SubmissionFile> files;
    REQUIRE_NOTHROW(files = find_submission(d.string(), all));
    REQUIRE(files.size() == all.size());
    for (const auto& f : files) {
        CAPTURE(f.exercise);
        CHECK(harness::valid_text(f.refusal) == f.refusal);
        CHECK(harness::valid_text(f.unread) == f.unread);
        CHECK(f.unread.empty());  // nothing of the tree was unreadable
    }

    const auto& passwd = of(files, "scan_kogge_stone");
    CHECK(passwd.refusal == "scan_kogge_stone.cu is a symbolic link (to /etc/passwd); submit the file itself");
    CHECK(contains(of(files, "scan_brent_kung").refusal, "scan_brent_kung.cu is a symbolic link"));
    CHECK(contains(of(files, "scan_brent_kung").refusal, "which loops"));
    CHECK(contains(of(files, "reduce_first_add_during_load").refusal, "which leads nowhere"));
    CHECK(of(files, "scan_hierarchical").refusal == "scan_hierarchical.cu is a FIFO (a named pipe), not a file");
    if (socket)
        CHECK(of(files, "reduce_interleaved_divergent").refusal ==
              "reduce_interleaved_divergent.cu is a socket, not a file");
    else
        MESSAGE("no socket could be made here: that case is not tested");
    CHECK(of(files, "conv1d_tiled").refusal == "conv1d_tiled.cu is a folder, not a file");
    CHECK(contains(of(files, "reduce_unroll_last_warp").refusal,
                   "big/reduce_unroll_last_warp.cu is larger than 16 MiB"));

    const auto& twice = of(files, "reduce_interleaved_bank_conflicts");
    CHECK(contains(twice.refusal, "more than one file named reduce_interleaved_bank_conflicts.cu"));
    CHECK(contains(twice.refusal, "\xEF\xBF\xBD\xEF\xBF\xBD/reduce_interleaved_bank_conflicts.cu"));  // U+FFFD twice
    CHECK_FALSE(contains(twice.refusal, "\x1b"));

    const auto& inside = of(files, "conv2d_tiled");
    CHECK(inside.buildable());
    CHECK(inside.path == (d / "conv2d_tiled.cu" / "conv2d_tiled.cu").string());
    const auto& odd_name = of(files, "reduce_sequential_addressing");
    CHECK(odd_name.buildable());
    CHECK(odd_name.path == (d / "caf\xe9\x1b[31m" / "reduce_sequential_addressing.cu").string());  // as on disk

    // Only what was found is refused: the links to the folders were not walked (no file twice).
    for (const auto& f : files)
        if (f.exercise != "reduce_interleaved_bank_conflicts") CHECK_FALSE(contains(f.refusal, "more than one"));
}

TEST_CASE("the submission's folder itself may be a link; what cannot be read is said where a file is missing")
{
    const TempDir dir("unread");
    write(dir.path / "real" / "scan_kogge_stone.cu");
    fs::create_symlink(dir.path / "real", dir.path / "given");
    auto files = find_submission((dir.path / "given").string(), {"scan_kogge_stone"});
    CHECK(files.at(0).buildable());

    // Deeper than the walk goes: that folder is named, and nothing throws.
    fs::path deep = dir.path / "real";
    for (int k = 0; k < 40; ++k) deep /= "d";
    write(deep / "scan_brent_kung.cu");
    files = find_submission((dir.path / "real").string(), {"scan_kogge_stone", "scan_brent_kung"});
    CHECK(files.at(0).buildable());
    CHECK(files.at(0).unread.empty());  // found: what was not read does not matter
    CHECK(files.at(1).path.empty());
    CHECK(contains(files.at(1).unread, "folders deep"));

    // A missing folder: every exercise not submitted, and why.
    files = find_submission((dir.path / "nonexistent").string(), {"scan_kogge_stone"});
    CHECK(files.at(0).path.empty());
    CHECK(contains(files.at(0).unread, "the submission's folder (No such file or directory)"));
}

TEST_CASE("a file or folder the grader cannot read (root reads everything: then only said)")
{
    if (::geteuid() == 0) {
        MESSAGE("skipped: running as root, which reads every file and folder; a dangling link stands for an "
                "unreadable file in the odd-trees case");
        return;
    }
    const TempDir dir("permissions");
    write(dir.path / "scan_kogge_stone.cu");
    fs::permissions(dir.path / "scan_kogge_stone.cu", fs::perms::none);
    write(dir.path / "closed" / "scan_brent_kung.cu");
    fs::permissions(dir.path / "closed", fs::perms::none);
    const auto files = find_submission(dir.path.string(), {"scan_kogge_stone", "scan_brent_kung"});
    fs::permissions(dir.path / "closed", fs::perms::owner_all);
    CHECK(files.at(0).refusal == "scan_kogge_stone.cu cannot be read: Permission denied");
    CHECK(files.at(1).path.empty());
    CHECK(contains(files.at(1).unread, "closed/ (Permission denied)"));
}

TEST_CASE("a file named close to an exercise's is named with the name it needs; others are not")
{
    const TempDir dir("near");
    write(dir.path / "kogge_stone.cu");                 // words of exactly one exercise
    write(dir.path / "hw" / "Scan_Brent_Kung.cu");      // another case
    write(dir.path / "scan_hierarchical (1).cu");       // a browser's second download
    write(dir.path / "reduce-sequential-addressing.cu");  // dashes
    write(dir.path / "conv1d_tiled.cpp");               // another extension
    write(dir.path / "conv2d_tield.cu");                // two letters swapped
    write(dir.path / "scan.cu");                        // words of three exercises: no guess
    write(dir.path / "reduce.cu");
    write(dir.path / "helpers.cu");
    write(dir.path / "scan_kogge_stone.md");            // not source: no guess
    write(dir.path / "reduce_unroll_last_warp.cu");     // an exercise's own file is never a near miss
    fs::create_directories(dir.path / "01_reduce_first_add_during_load");  // a folder: not a file
    const std::vector<std::string> all = {"scan_kogge_stone",  "scan_brent_kung", "scan_hierarchical",
                                          "reduce_sequential_addressing", "reduce_first_add_during_load",
                                          "reduce_unroll_last_warp", "conv1d_tiled", "conv2d_tiled",
                                          "reduce_interleaved_divergent"};
    const auto files = find_submission(dir.path.string(), all);
    REQUIRE(files.size() == all.size());
    CHECK(files[0].near_miss == "kogge_stone.cu: did you mean scan_kogge_stone.cu?");
    CHECK(files[1].near_miss == "hw/Scan_Brent_Kung.cu: did you mean scan_brent_kung.cu?");
    CHECK(files[2].near_miss == "scan_hierarchical (1).cu: did you mean scan_hierarchical.cu?");
    CHECK(files[3].near_miss ==
          "reduce-sequential-addressing.cu: did you mean reduce_sequential_addressing.cu?");
    CHECK(files[4].near_miss.empty());
    CHECK(files[5].buildable());
    CHECK(files[5].near_miss.empty());
    CHECK(files[6].near_miss == "conv1d_tiled.cpp: did you mean conv1d_tiled.cu?");
    CHECK(files[7].near_miss == "conv2d_tield.cu: did you mean conv2d_tiled.cu?");
    CHECK(files[8].near_miss.empty());
    for (const auto& f : files) CHECK_FALSE(contains(f.near_miss, "scan.cu:"));

    // Only the exercises asked for: a near miss of another is not reported.
    const auto only = find_submission(dir.path.string(), {"scan_brent_kung"});
    REQUIRE(only.size() == 1);
    CHECK(only[0].near_miss == "hw/Scan_Brent_Kung.cu: did you mean scan_brent_kung.cu?");
}

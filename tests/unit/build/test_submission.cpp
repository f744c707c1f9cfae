// Submission discovery (grading/src/build/submission.cpp): each exercise's file anywhere below the
// folder.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "grading/build.hpp"

namespace fs = std::filesystem;
using namespace grading;

TEST_CASE("submission discovery: anywhere below, unique names, missing files")
{
    const fs::path dir = fs::temp_directory_path() / "grader_test_submission";
    fs::remove_all(dir);
    fs::create_directories(dir / "part1" / "deep");
    fs::create_directories(dir / "part2");
    std::ofstream(dir / "part1" / "deep" / "scan_kogge_stone.cu") << "//";
    std::ofstream(dir / "part1" / "scan_brent_kung.cu") << "//";
    std::ofstream(dir / "part2" / "scan_brent_kung.cu") << "//";
    std::ofstream(dir / "notes.txt") << "scan_hierarchical.cu";
    std::ofstream(dir / "elsewhere.txt") << "//";
    fs::create_symlink(dir / "elsewhere.txt", dir / "part2" / "conv1d_tiled.cu");
    const auto files =
        find_submission(dir.string(), {"scan_kogge_stone", "scan_brent_kung", "scan_hierarchical", "conv1d_tiled"});
    REQUIRE(files.size() == 4);
    CHECK(files[3].symlink);
    CHECK_FALSE(files[0].symlink);
    CHECK(files[0].path == (dir / "part1" / "deep" / "scan_kogge_stone.cu").string());
    CHECK(files[0].duplicates.empty());
    CHECK(files[1].duplicates.size() == 2);
    CHECK(files[2].path.empty());
    fs::remove_all(dir);
}

// For the build's tests: a submission folder with what a student's tree may hold besides source
// files, each entry named for the exercise whose finding it is.
#pragma once

#include <sys/stat.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>

// In `d` (which exists):
//   self, loop_a <-> loop_b, up -> .., root -> /     links no exercise's: neither followed nor a finding
//   scan_kogge_stone.cu -> /etc/passwd                a link out of the submission
//   scan_brent_kung.cu -> scan_brent_kung.cu          a link to itself
//   reduce_first_add_during_load.cu -> /nonexistent   a link to nothing
//   scan_hierarchical.cu                              a FIFO (reading it would block)
//   conv1d_tiled.cu/                                  a folder
//   conv2d_tiled.cu/conv2d_tiled.cu                   a file in a folder of its name: graded
//   "caf\xe9\x1b[31m"/reduce_sequential_addressing.cu  below a folder whose name is no text: graded
inline void make_odd_tree(const std::filesystem::path& d)
{
    namespace fs = std::filesystem;
    fs::create_symlink("self", d / "self");
    fs::create_symlink("loop_b", d / "loop_a");
    fs::create_symlink("loop_a", d / "loop_b");
    fs::create_symlink("..", d / "up");
    fs::create_symlink("/", d / "root");
    fs::create_symlink("/etc/passwd", d / "scan_kogge_stone.cu");
    fs::create_symlink("scan_brent_kung.cu", d / "scan_brent_kung.cu");
    fs::create_symlink("/nonexistent/file.cu", d / "reduce_first_add_during_load.cu");
    if (::mkfifo((d / "scan_hierarchical.cu").c_str(), 0644) != 0) throw std::runtime_error("mkfifo failed");
    fs::create_directories(d / "conv1d_tiled.cu");
    fs::create_directories(d / "conv2d_tiled.cu");
    std::ofstream(d / "conv2d_tiled.cu" / "conv2d_tiled.cu") << "// FAKE_RUNNER: correct\n";
    fs::create_directories(d / "caf\xe9\x1b[31m");
    std::ofstream(d / "caf\xe9\x1b[31m" / "reduce_sequential_addressing.cu") << "// FAKE_RUNNER: correct\n";
}

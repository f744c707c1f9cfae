// For the build's tests: a copy of the fake toolchain (tests/fake_toolchain) whose nvcc runs shell
// commands before and after the fake one, to pose a compiler that prints odd bytes or leaves odd
// files. The copy is a root of its own (bin/, include/, the fake device file), so that the sandbox,
// which binds the compiler's root, sees all of it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

// The copy's nvcc, in `dir` (made here).
inline std::string fake_toolchain_copy(const std::string& fake_nvcc, const std::filesystem::path& dir,
                                       const std::string& before, const std::string& after = {})
{
    namespace fs = std::filesystem;
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(fs::path(fake_nvcc).parent_path().parent_path(), dir, fs::copy_options::recursive);
    fs::rename(dir / "bin" / "nvcc", dir / "bin" / "nvcc-fake");
    {
        std::ofstream nvcc(dir / "bin" / "nvcc");
        nvcc << "#!/bin/sh\n"
             << before << "\n"
             << "\"$(dirname \"$0\")/nvcc-fake\" \"$@\"\n"
             << "status=$?\n"
             << after << "\n"
             << "exit $status\n";
    }
    fs::permissions(dir / "bin" / "nvcc", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                              fs::perms::others_read | fs::perms::others_exec);
    return (dir / "bin" / "nvcc").string();
}

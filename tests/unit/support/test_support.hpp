// What many tests need and each used to define for itself: text search, lines joined, files read
// and written, a fresh directory per test, the fixture programs. One copy here
// (tests/unit/support/), included by every test under tests/unit/ as "support/test_support.hpp".
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace test_support {

inline bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// The repository's root (GRADER_REPOSITORY, which grader_test_support defines): absolute, so
// that no test depends on the folder CTest runs it in or on how the compiler spells __FILE__.
inline std::filesystem::path repository()
{
    return GRADER_REPOSITORY;
}

// The lines, each ended by a newline.
inline std::string joined_lines(const std::vector<std::string>& lines)
{
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return text;
}

// The whole file, byte for byte; empty when it cannot be read.
inline std::string file_text(const std::filesystem::path& path)
{
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// Writes `text` to `path`, creating its directory first.
inline void write_file(const std::filesystem::path& path, const std::string& text)
{
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

// The state letter of /proc/PID/stat ('T' stopped, 'S' sleeping, ...); 0 when gone.
inline char process_state(int pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? 0 : text[close + 2];
}

// An empty directory of this test process: temp/grader_<pid>_<name> (removed first if it exists).
inline std::filesystem::path fresh_dir(const std::string& name)
{
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("grader_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// A GPU lock directory of this test process's own, for every `grade` it runs (--gpu-lock-dir): in
// the default one (/tmp) the gradings of every test CTest runs at once take turns on the fake
// device's lock, and one test's runner stalling in its timed phase held another test's student past
// its --student-time-limit (test_class_grading, session 17). Removed when the process ends.
inline std::string own_gpu_lock_dir()
{
    struct Directory {
        std::filesystem::path path = fresh_dir("gpu_lock");
        ~Directory()
        {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    };
    static const Directory directory;
    return directory.path.string();
}

// `command` (a grade command line) with this process's own GPU lock directory, unless it names one.
inline std::vector<std::string> with_own_gpu_lock(std::vector<std::string> command)
{
    for (const auto& argument : command)
        if (argument == "--gpu-lock-dir") return command;
    command.push_back("--gpu-lock-dir");
    command.push_back(own_gpu_lock_dir());
    return command;
}

// A fresh temporary file (mkstemp under /tmp), removed at the end of the test: where a child
// process's output goes.
struct TempFile {
    std::string path;
    TempFile()
    {
        std::string pattern = "/tmp/grader-test-XXXXXX";
        const int fd = ::mkstemp(pattern.data());
        REQUIRE(fd >= 0);
        ::close(fd);
        path = pattern;
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() { ::unlink(path.c_str()); }
    std::string text() const { return file_text(path); }
};

#ifdef GRADER_SCHEMA_FILE
// grading/results.schema.json, for the tests whose program defines GRADER_SCHEMA_FILE.
inline nlohmann::json results_schema()
{
    return nlohmann::json::parse(file_text(GRADER_SCHEMA_FILE));
}
#endif

#ifdef GRADER_FIXTURE_DIR
// The path of a fixture program (tests/fixtures), for the tests whose target defines GRADER_FIXTURE_DIR.
inline std::string fixture(const std::string& name)
{
    return std::string(GRADER_FIXTURE_DIR) + "/" + name;
}
#endif

}  // namespace test_support

// Where one grading's runners and logs go. Gradings started from one directory (the loop an
// instructor writes) must never share one: a runner's files, a log or a lock of one grading would
// land in another's. Without --work-dir each grading makes its own below grader-work/; a directory
// named with --work-dir is locked for the grading, and a second grading asking for it is refused.
#pragma once

#include <stdexcept>
#include <string>

namespace grading {

class WorkDirectoryError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

class WorkDirectory {
public:
    // `given`: `path` came from --work-dir and is used as it is; otherwise a fresh directory is made
    // below `path` (grading-XXXXXX). Throws WorkDirectoryError with what to do.
    static WorkDirectory claim(const std::string& path, bool given);

    WorkDirectory(WorkDirectory&&) noexcept;
    WorkDirectory& operator=(WorkDirectory&&) = delete;
    WorkDirectory(const WorkDirectory&) = delete;
    WorkDirectory& operator=(const WorkDirectory&) = delete;
    // Releases the lock; a fresh directory is removed with everything in it unless kept.
    ~WorkDirectory();

    const std::string& path() const { return path_; }
    bool fresh() const { return fresh_; }
    void keep() { keep_ = true; }

private:
    WorkDirectory(std::string path, bool fresh, int lock_fd) : path_(std::move(path)), fresh_(fresh), lock_fd_(lock_fd) {}
    std::string path_;
    bool fresh_ = false;
    bool keep_ = false;
    int lock_fd_ = -1;
};

}  // namespace grading

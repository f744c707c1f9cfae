#include "grading/work_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace fs = std::filesystem;

namespace grading {
namespace {

constexpr const char* lock_name = ".grading.lock";

std::string errno_text(int error)
{
    return std::strerror(error);
}

// Locks `dir` for this grading; the descriptor is the lock (closed on exec: no runner holds it).
int lock(const fs::path& dir)
{
    const fs::path file = dir / lock_name;
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        throw WorkDirectoryError("--work-dir " + dir.string() + ": cannot create " + file.string() + " (" +
                                 errno_text(errno) + ")\n  (choose another --work-dir)");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd);
        if (error == EWOULDBLOCK)
            throw WorkDirectoryError("--work-dir " + dir.string() +
                                     " is in use by another grading\n  (give each grading its own --work-dir, or "
                                     "leave the option out: each grading then makes its own below grader-work/)");
        throw WorkDirectoryError("--work-dir " + dir.string() + ": cannot lock " + file.string() + " (" +
                                 errno_text(error) + ")");
    }
    return fd;
}

}  // namespace

WorkDirectory WorkDirectory::claim(const std::string& path, bool given)
{
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec)
        throw WorkDirectoryError("--work-dir " + path + ": cannot create it (" + ec.message() +
                                 ")\n  (choose another --work-dir)");
    if (given) return WorkDirectory(fs::absolute(path).string(), false, lock(path));
    std::string pattern = (fs::absolute(path) / "grading-XXXXXX").string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()) == nullptr)
        throw WorkDirectoryError("cannot make a work directory in " + path + " (" + errno_text(errno) +
                                 ")\n  (pass --work-dir with a directory grade may write in)");
    const std::string fresh(name.data());
    // As a directory made with the usual umask would be: the sandbox's user reads what the grader
    // puts there for it.
    ::chmod(fresh.c_str(), 0755);
    return WorkDirectory(fresh, true, lock(fresh));
}

WorkDirectory::WorkDirectory(WorkDirectory&& other) noexcept
    : path_(std::move(other.path_)), fresh_(other.fresh_), keep_(other.keep_), lock_fd_(other.lock_fd_)
{
    other.lock_fd_ = -1;
    other.fresh_ = false;
}

WorkDirectory::~WorkDirectory()
{
    if (lock_fd_ < 0) return;
    std::error_code ignored;
    // A named directory keeps its lock file: removing it would let two later gradings lock two files.
    if (fresh_ && !keep_) fs::remove_all(path_, ignored);
    ::close(lock_fd_);
}

}  // namespace grading

#include "harness/uid_slot.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace harness {

bool is_known_id(uid_t id)
{
    return ::getpwuid(id) != nullptr || ::getgrgid(static_cast<gid_t>(id)) != nullptr;
}

std::string UidPool::default_directory()
{
    struct stat info {};
    const bool run = ::lstat("/run", &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == 0 && !(info.st_mode & 022);
    return run ? "/run/pmpp-grader-uids" : "/tmp/pmpp-grader-uids";
}

std::unique_ptr<UidSlot> UidSlot::take(const UidPool& pool, std::string& why)
{
    why.clear();
    if (::mkdir(pool.directory.c_str(), 0700) != 0 && errno != EEXIST) {
        why = "cannot create " + pool.directory + ": " + std::strerror(errno);
        return nullptr;
    }
    const int dir = ::open(pool.directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat info {};
    if (dir < 0 || ::fstat(dir, &info) != 0) {
        why = "cannot open " + pool.directory + ": " + std::strerror(errno);
        if (dir >= 0) ::close(dir);
        return nullptr;
    }
    // Another user's directory (one planted in /tmp) would let that user decide the slots.
    if (info.st_uid != ::geteuid() || (info.st_mode & 022) != 0) {
        ::close(dir);
        why = pool.directory + " is not the grader's own (owned by uid " + std::to_string(info.st_uid) +
              ", or writable by others): remove it";
        return nullptr;
    }
    const auto taken = pool.taken ? pool.taken : is_known_id;
    int accounts = 0;
    std::unique_ptr<UidSlot> slot;
    for (int k = 0; k < pool.count && !slot; ++k) {
        const uid_t uid = pool.base + static_cast<uid_t>(k);
        if (uid < pool.base || uid == static_cast<uid_t>(-1)) break;  // past the largest uid
        if (uid == 0 || taken(uid)) {
            ++accounts;
            continue;
        }
        const std::string name = "slot-" + std::to_string(k) + ".lock";
        // O_NOFOLLOW: a link is refused (ELOOP); only the grader's own regular file is a lock.
        const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) continue;
        struct stat lock {};
        if (::fstat(fd, &lock) == 0 && S_ISREG(lock.st_mode) && lock.st_uid == ::geteuid() &&
            ::flock(fd, LOCK_EX | LOCK_NB) == 0)
            slot.reset(new UidSlot(fd, k, uid));
        else
            ::close(fd);
    }
    ::close(dir);
    if (!slot)
        why = "no free uid among " + std::to_string(pool.count) + " from " + std::to_string(pool.base) + " (" +
              std::to_string(accounts) +
              " are accounts of this machine, the others held by other gradings or refused: " + pool.directory + ")";
    return slot;
}

UidSlot::~UidSlot()
{
    ::close(fd_);  // the last descriptor of the open file: its lock goes
}

}  // namespace harness

#include "harness/gpu_lock.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace harness {

namespace {

// Opened without O_CREAT where it exists: in a sticky /tmp, the kernel's protected_regular refuses
// O_CREAT on another user's file, and another user's grading may have made it. O_NOFOLLOW: a link
// planted where the lock goes must not send the grader's open elsewhere.
int open_lock_file(const std::string& path, bool create)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT && create) {
        fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) ::fchmod(fd, 0666);  // the umask may have narrowed it; other users lock it too
        if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    }
    if (fd < 0) throw std::runtime_error("cannot open the GPU lock " + path + ": " + std::strerror(errno));
    return fd;
}

void take(int fd, int operation, const std::string& path)
{
    while (::flock(fd, operation) != 0)
        if (errno != EINTR) throw std::runtime_error("cannot take the GPU lock " + path + ": " + std::strerror(errno));
}

}  // namespace

GpuLock::GpuLock(const std::string& path, std::chrono::milliseconds wanted_wait)
    : path_(path),
      queue_path_(path + ".queue"),
      quiet_path_(path + ".quiet"),
      gate_path_(path + ".gate"),
      wanted_path_(path + ".wanted"),
      wanted_wait_(wanted_wait)
{
    ::close(open_lock_file(gate_path_, true));
    ::close(open_lock_file(wanted_path_, true));
    ::close(open_lock_file(path_, true));
    ::close(open_lock_file(queue_path_, true));
    quiet_fd_ = open_lock_file(quiet_path_, true);
}

GpuLock::~GpuLock()
{
    if (quiet_fd_ >= 0) ::close(quiet_fd_);
}

GpuLock::Hold GpuLock::quiet() const
{
    const auto started = std::chrono::steady_clock::now();
    Hold held;
    held.fd_ = open_lock_file(quiet_path_, false);  // its own open file: it excludes quiet_fd_'s waits
    try {
        take(held.fd_, LOCK_EX, quiet_path_);
    } catch (...) {
        ::close(held.fd_);
        held.fd_ = -1;
        throw;
    }
    held.waited = std::chrono::steady_clock::now() - started;
    return held;
}

void GpuLock::wait_while_quiet(std::chrono::milliseconds limit) const
{
    // A shared lock is granted only while no quiet() is held; it is dropped at once. Threads share
    // the one open file: one thread's unlock may end another's shared hold early, which is harmless,
    // as holding it was never the point, only getting it. Polled, so that the wait has a limit.
    const auto give_up = std::chrono::steady_clock::now() + limit;
    for (auto pause = std::chrono::microseconds(50);; pause = std::min(2 * pause, std::chrono::microseconds(2000))) {
        if (::flock(quiet_fd_, LOCK_SH | LOCK_NB) == 0) {
            ::flock(quiet_fd_, LOCK_UN);
            return;
        }
        if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() >= give_up) return;
        std::this_thread::sleep_for(pause);
    }
}

void GpuLock::wait_while_wanted() const
{
    // The file is held shared by every timed hold from its asking to its dropping: exclusively it can
    // be taken only when none is. Taken for a moment (which a timed hold asking then waits out).
    const int wanted = open_lock_file(wanted_path_, false);
    const auto give_up = std::chrono::steady_clock::now() + wanted_wait_;
    for (auto pause = std::chrono::microseconds(100);; pause = std::min(2 * pause, std::chrono::microseconds(2000))) {
        if (::flock(wanted, LOCK_EX | LOCK_NB) == 0) break;
        const int error = errno;
        if (error != EWOULDBLOCK && error != EINTR) {
            ::close(wanted);
            throw std::runtime_error("cannot take the GPU lock " + wanted_path_ + ": " + std::strerror(error));
        }
        if (std::chrono::steady_clock::now() >= give_up) break;
        std::this_thread::sleep_for(pause);
    }
    ::close(wanted);  // drops the moment's hold
}

GpuLock::Hold GpuLock::hold(bool exclusive) const
{
    const auto started = std::chrono::steady_clock::now();
    Hold held;
    // A timed hold says it is wanted before it lines up, and untimed ones wait while any is wanted:
    // the timings of every grading then follow each other, and the GPU is emptied of correctness
    // runs once for them all instead of once for each.
    if (exclusive) {
        held.wanted_fd_ = open_lock_file(wanted_path_, false);
        take(held.wanted_fd_, LOCK_SH, wanted_path_);
    } else {
        wait_while_wanted();
    }
    // In line. A timed case keeps its place in the queue until it holds the GPU, so untimed cases
    // that come after it wait instead of overtaking it (flock alone would let a stream of shared
    // holds starve it for good).
    const int queue = open_lock_file(queue_path_, false);
    try {
        take(queue, LOCK_EX, queue_path_);
        // A descriptor of its own: flock locks belong to an open file, so two holds of one process
        // (and a hold taken while another is being dropped) never convert each other.
        held.fd_ = open_lock_file(path_, false);
        take(held.fd_, exclusive ? LOCK_EX : LOCK_SH, path_);
    } catch (...) {
        ::close(queue);
        throw;
    }
    ::close(queue);  // the next in line may go
    held.waited = std::chrono::steady_clock::now() - started;
    return held;
}

GpuLock::Hold GpuLock::exercise_place(int places) const
{
    // Place k is the file <path>.place<k>, held exclusively. flock has no semaphore: the free
    // places are polled, each grading starting its round at a place of its own.
    const auto started = std::chrono::steady_clock::now();
    places = std::max(places, 1);
    std::vector<int> fds;
    for (int k = 0; k < places; ++k) fds.push_back(open_lock_file(path_ + ".place" + std::to_string(k), true));
    Hold gate;
    gate.fd_ = open_lock_file(gate_path_, true);
    const int first = static_cast<int>(::getpid() % places);
    Hold held;
    try {
        for (auto pause = std::chrono::milliseconds(5); held.fd_ < 0;
             pause = std::min(2 * pause, std::chrono::milliseconds(100))) {
            // Through the gate (shared, for a moment): not while every_place takes the places.
            take(gate.fd_, LOCK_SH, gate_path_);
            for (int i = 0; i < places && held.fd_ < 0; ++i) {
                const int k = (first + i) % places;
                if (::flock(fds[static_cast<std::size_t>(k)], LOCK_EX | LOCK_NB) == 0)
                    held.fd_ = fds[static_cast<std::size_t>(k)];
            }
            ::flock(gate.fd_, LOCK_UN);
            if (held.fd_ < 0) std::this_thread::sleep_for(pause);
        }
    } catch (...) {
        for (int fd : fds) ::close(fd);
        throw;
    }
    for (int fd : fds)
        if (fd != held.fd_) ::close(fd);
    held.waited = std::chrono::steady_clock::now() - started;
    return held;
}

std::vector<GpuLock::Hold> GpuLock::every_place(int places) const
{
    const auto started = std::chrono::steady_clock::now();
    Hold gate;  // exclusively while the places are taken: no exercise gets one meanwhile
    gate.fd_ = open_lock_file(gate_path_, true);
    take(gate.fd_, LOCK_EX, gate_path_);
    std::vector<Hold> held;
    for (int k = 0; k < std::max(places, 1); ++k) {
        const std::string path = path_ + ".place" + std::to_string(k);
        Hold place;
        place.fd_ = open_lock_file(path, true);
        take(place.fd_, LOCK_EX, path);  // closed by ~Hold if it throws
        held.push_back(std::move(place));
    }
    held.front().waited = std::chrono::steady_clock::now() - started;
    return held;
}

GpuLock::Hold::Hold(Hold&& other) noexcept : waited(other.waited), fd_(other.fd_), wanted_fd_(other.wanted_fd_)
{
    other.fd_ = other.wanted_fd_ = -1;
}

GpuLock::Hold& GpuLock::Hold::operator=(Hold&& other) noexcept
{
    if (this != &other) {
        release();
        fd_ = other.fd_;
        wanted_fd_ = other.wanted_fd_;
        waited = other.waited;
        other.fd_ = other.wanted_fd_ = -1;
    }
    return *this;
}

GpuLock::Hold::~Hold()
{
    release();
}

void GpuLock::Hold::release() noexcept
{
    // Closing the last descriptor of an open file drops its lock: the GPU first, then the wish.
    if (fd_ >= 0) ::close(fd_);
    if (wanted_fd_ >= 0) ::close(wanted_fd_);
    fd_ = wanted_fd_ = -1;
}

std::string gpu_lock_path(const std::string& directory, const std::string& gpu_key)
{
    std::string key = gpu_key.empty() ? "unknown" : gpu_key;
    for (char& c : key)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    return directory + "/pmpp-grader-gpu-" + key + ".lock";
}

}  // namespace harness

// ATTACK: a static initializer, which runs inside the runner before its main, fills every writable
//      place it knows: its working directory, /tmp, /var/tmp, /dev/shm (memory-backed) and $HOME,
//      with files named grader_diskfill_<k> of 1 MiB blocks, until writing fails (SIGXFSZ is
//      ignored, so a per-file size limit only moves it on to the next file), and leaves them there.
//      To keep a broken sandbox from filling a shared machine it stops after 16 GiB in all, far
//      above any sane size of the sandbox's private /tmp. Then the runner carries on with a stub
//      launcher. In the same submission, scan_brent_kung.cu is a copy of the reference, graded
//      after this exercise.
// EXPECTED VERDICT: the writes fill only the sandbox's own size-limited places, which vanish with
//      it: grade survives and writes its results; this exercise scores 0; none of the files exists
//      outside the sandbox afterwards (not in the grader's work directory, /tmp, /var/tmp or
//      /dev/shm); scan_brent_kung, graded next, still scores full marks.

#include <cuda_runtime.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

struct FillDiskAtStartup {
    FillDiskAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;   // only inside a runner started by the grader
        std::signal(SIGXFSZ, SIG_IGN);
        std::vector<std::string> places = {".", "/tmp", "/var/tmp", "/dev/shm"};
        if (const char* home = std::getenv("HOME")) places.push_back(home);
        const std::vector<char> block(1 << 20, 'x');
        const unsigned long long cap = 16ull << 30;
        unsigned long long total = 0;
        for (const auto& place : places) {
            unsigned long long here = 0;
            bool full = false;
            for (int k = 0; k < 100000 && !full && total < cap; ++k) {
                const std::string path = place + "/grader_diskfill_" + std::to_string(k);
                const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0) break;
                for (;;) {
                    if (total >= cap) break;
                    const ssize_t n = ::write(fd, block.data(), block.size());
                    if (n > 0) {
                        total += static_cast<unsigned long long>(n);
                        here += static_cast<unsigned long long>(n);
                        continue;
                    }
                    full = n < 0 && errno != EFBIG;   // EFBIG: this file is at the size limit; next file
                    break;
                }
                ::close(fd);
            }
            std::fprintf(stderr, "resource_disk_fill: %llu MiB written in %s\n", here >> 20, place.c_str());
        }
    }
} fill_disk_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

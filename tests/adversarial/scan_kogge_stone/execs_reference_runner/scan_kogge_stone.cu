// ATTACK: a static initializer, which runs inside the runner before its main, looks for the
//      grader's reference runner (grader_reference_runner, the hidden solutions linked into the same
//      harness) and execs it in place of itself with the same arguments, so that the grader's
//      commands on fds 3 and 4 (still open: the runner has not marked them close-on-exec yet) are
//      answered by the reference. It looks
//      - at every process in /proc: an executable named grader_reference_runner (exec'd through
//        /proc/PID/exe, which works even where its path is hidden), or one named grade (its
//        directory is the install's bin/);
//      - at bin/ and build/bin/ in every directory above the working directory and above itself;
//      - at guessed paths: ../bin, ../../bin, ... and /work/main/build/bin.
//      If nothing can be exec'd, the runner carries on with a stub launcher that writes nothing.
// EXPECTED VERDICT: inside the sandbox the reference runner is out of sight (no other process, no
//      install tree): graded, every case wrong with nothing written, 0 points.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

namespace {

std::string link_target(const std::string& path)
{
    char buffer[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

std::string base_name(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_name(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

void add_ancestors(const std::string& start, std::vector<std::string>& candidates)
{
    for (std::string dir = start; !dir.empty() && dir[0] == '/';) {
        candidates.push_back(dir + "/bin/grader_reference_runner");
        candidates.push_back(dir + "/build/bin/grader_reference_runner");
        if (dir == "/") break;
        dir = dir_name(dir);
    }
}

struct ExecReferenceAtStartup {
    ExecReferenceAtStartup()
    {
        // Our own command line, to pass on unchanged.
        std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
        std::vector<std::string> args;
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = text.find('\0', at);
            args.push_back(text.substr(at, end - at));
            if (end == std::string::npos) break;
            at = end + 1;
        }
        if (args.empty()) return;

        std::vector<std::string> candidates;
        if (DIR* proc = ::opendir("/proc")) {
            while (const dirent* entry = ::readdir(proc)) {
                if (std::atoi(entry->d_name) <= 0) continue;
                const std::string exe_link = std::string("/proc/") + entry->d_name + "/exe";
                const std::string exe = link_target(exe_link);
                if (base_name(exe) == "grader_reference_runner") {
                    candidates.push_back(exe_link);
                    candidates.push_back(exe);
                } else if (base_name(exe) == "grade") {
                    candidates.push_back(dir_name(exe) + "/grader_reference_runner");
                }
            }
            ::closedir(proc);
        }
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof cwd) != nullptr) add_ancestors(cwd, candidates);
        add_ancestors(dir_name(link_target("/proc/self/exe")), candidates);
        std::string up;
        for (int depth = 0; depth <= 8; ++depth, up += "../") {
            candidates.push_back(up + "bin/grader_reference_runner");
            candidates.push_back(up + "build/bin/grader_reference_runner");
        }
        candidates.push_back("/work/main/build/bin/grader_reference_runner");

        for (const auto& candidate : candidates) {
            if (::access(candidate.c_str(), X_OK) != 0) continue;
            std::vector<char*> argv;
            argv.push_back(const_cast<char*>(candidate.c_str()));
            for (std::size_t k = 1; k < args.size(); ++k) argv.push_back(const_cast<char*>(args[k].c_str()));
            argv.push_back(nullptr);
            ::execv(candidate.c_str(), argv.data());
        }
        std::fprintf(stderr, "execs_reference_runner: no reference runner could be exec'd (%zu paths tried)\n",
                     candidates.size());
    }
} exec_reference_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

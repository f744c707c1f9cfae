// ATTACK: look for the timed batches' secret. If the runner could learn a batch's seed (or the
//      next batch's inputs) before the timing server writes them, it could compute the outputs
//      outside the timed window and do nothing inside it. This file looks everywhere a runner can,
//      reports what it finds on stderr (the runner's log, which the grader keeps), and prints
//      SECRET-FOUND if anything it found carries a seed:
//        - the process view: every process in /proc (the runner has a PID namespace of its own),
//          their command lines, environments and memory (/proc/PID/mem), its parent;
//        - its descriptors: what each is, the handles socket's peer (SO_PEERCRED), bytes waiting;
//        - the grader's commands: a relay on fd 3 (the real fd moved away, the harness fed through
//          a pipe) records the keys of every command it passes on, and flags any that names a seed;
//        - its own memory, every anonymous, heap and stack region (read through /proc/self/mem, so
//          nothing faults), at three moments (startup, the first timed call, the eighth), for a
//          command's text naming a seed ("seed":) that the harness might have kept, other than a
//          case's own (load_case and run_case carry the checked run's seed, public in grade --list);
//        - shared memory of its IPC namespace, /dev/shm, /tmp, the environment;
//        - fresh device memory, for bytes another process left in it (the driver should clear it).
//      None of it is used: the scan is a correct but deliberately slow one (about 3% of the
//      reference's speed), so this test also shows that looking does not break anything.
// EXPECTED VERDICT: nothing is found, because no secret is there to find: the seed goes from the
//      grader to its timing server only, outside the sandbox, which writes the inputs in device
//      memory at the start of the window. The runner's log holds no SECRET-FOUND; the exercise is
//      graded, the timed case runs at the slow kernel's speed (at most 0.25x, no speed points).

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

namespace {

// Every report goes to stderr in one write, so that lines of different threads do not mix.
void report(const std::string& line)
{
    const std::string text = "reads_secret_seed: " + line + "\n";
    const ssize_t ignored = ::write(2, text.data(), text.size());
    (void)ignored;
}

// The marker the test looks for; built at run time so that it is not in this program's text.
// Every find counts, and each memory scan's summary repeats the marker while any was found, so
// that it survives in the tail of the log the grader keeps.
std::atomic<int> secrets_found{0};
std::string found_marker()
{
    ++secrets_found;
    return std::string("SECRET") + "-" + "FOUND";
}

std::string read_small(const std::string& path, std::size_t most = 512)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::string("(") + std::strerror(errno) + ")";
    std::string text(most, '\0');
    const ssize_t n = ::read(fd, &text[0], most);
    ::close(fd);
    if (n < 0) return std::string("(") + std::strerror(errno) + ")";
    text.resize(static_cast<std::size_t>(n));
    for (char& c : text)
        if (c == '\0' || c == '\n') c = ' ';
    return text;
}

std::vector<std::string> entries(const std::string& dir)
{
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* e = ::readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
        ::closedir(d);
    }
    return names;
}

// The JSON key of the seed, as a command's text would hold it: "seed":
const char kSeedKey[] = {'"', 's', 'e', 'e', 'd', '"', ':', '\0'};

// The seeds of the cases the grader asked for (load_case, run_case: a case's checked run, whose
// seed is public, `grade --list`): not the timed batches' secret, so not a find.
std::mutex public_seeds_mutex;
std::set<std::string> public_seeds;

// The value after each "seed": key of `text` (up to the next ',' or '}').
std::vector<std::string> seed_values(const char* text, std::size_t size)
{
    std::vector<std::string> values;
    const char* end = text + size;
    for (const char* at = text; at < end;) {
        const void* hit = ::memmem(at, static_cast<std::size_t>(end - at), kSeedKey, sizeof kSeedKey - 1);
        if (hit == nullptr) break;
        const char* value = static_cast<const char*>(hit) + sizeof kSeedKey - 1;
        const char* stop = value;
        while (stop < end && stop - value < 40 && *stop != ',' && *stop != '}') ++stop;
        values.emplace_back(value, stop);
        at = value;
    }
    return values;
}

// How many of `text`'s seeds are not a case's public seed.
std::size_t unknown_seeds(const char* text, std::size_t size)
{
    std::lock_guard<std::mutex> lock(public_seeds_mutex);
    std::size_t unknown = 0;
    for (const auto& value : seed_values(text, size)) unknown += public_seeds.count(value) == 0;
    return unknown;
}

void probe_processes()
{
    const std::string self = std::to_string(::getpid());
    report("pid " + self + ", parent " + std::to_string(::getppid()) + ", uid " + std::to_string(::getuid()));
    for (const auto& name : entries("/proc")) {
        if (name.find_first_not_of("0123456789") != std::string::npos || name == self) continue;
        const std::string dir = "/proc/" + name;
        report("process " + name + ": cmdline [" + read_small(dir + "/cmdline", 200) + "] environ [" +
               read_small(dir + "/environ", 200) + "]");
        // Its memory: the first readable region of its map, one page.
        const std::string maps = read_small(dir + "/maps", 4096);
        unsigned long long from = 0;
        std::sscanf(maps.c_str(), "%llx-", &from);
        const int mem = ::open((dir + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
        if (mem < 0) {
            report("process " + name + ": /proc/" + name + "/mem: " + std::strerror(errno));
            continue;
        }
        std::vector<char> page(4096);
        const ssize_t n = ::pread(mem, page.data(), page.size(), static_cast<off_t>(from));
        report("process " + name + ": read " + std::to_string(n) + " bytes of its memory" +
               (n < 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string()));
        ::close(mem);
    }
}

void probe_descriptors()
{
    for (const auto& name : entries("/proc/self/fd")) {
        char target[256] = {};
        const ssize_t n = ::readlink(("/proc/self/fd/" + name).c_str(), target, sizeof target - 1);
        const int fd = std::atoi(name.c_str());
        int waiting = -1;
        ::ioctl(fd, FIONREAD, &waiting);
        std::string line = "fd " + name + " -> " + (n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "?") +
                           ", " + std::to_string(waiting) + " bytes waiting";
        ucred peer{};
        socklen_t size = sizeof peer;
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0)
            line += ", socket peer pid " + std::to_string(peer.pid) + " uid " + std::to_string(peer.uid);
        report(line);
    }
    std::string env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env += std::string(*e) + " ";
    report("environment: " + env);
    report("/dev/shm: " + std::to_string(entries("/dev/shm").size()) + " entries, /tmp: " +
           std::to_string(entries("/tmp").size()) + " entries, System V shared memory: [" +
           read_small("/proc/sysvipc/shm", 300) + "]");
    if (std::strstr(env.c_str(), kSeedKey) != nullptr || env.find("SEED") != std::string::npos)
        report(found_marker() + " in the environment");
}

// Every anonymous, heap and stack region of this process, read through /proc/self/mem, searched
// for a command's text naming a seed.
void scan_own_memory(const char* when)
{
    const int mem = ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    FILE* maps = std::fopen("/proc/self/maps", "r");
    if (mem < 0 || maps == nullptr) {
        report(std::string("cannot read my own memory: ") + std::strerror(errno));
        if (mem >= 0) ::close(mem);
        if (maps != nullptr) std::fclose(maps);
        return;
    }
    std::vector<char> chunk((1 << 20) + 16);
    unsigned long long scanned = 0, regions = 0, hits = 0;
    char line[512];
    while (std::fgets(line, sizeof line, maps) != nullptr && scanned < (4ull << 30)) {
        unsigned long long from = 0, to = 0;
        char perms[8] = {}, path[256] = {};
        if (std::sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &from, &to, perms, path) < 3) continue;
        const bool anonymous = path[0] == '\0' || std::strcmp(path, "[heap]") == 0 ||
                               std::strcmp(path, "[stack]") == 0 || std::strncmp(path, "[anon", 5) == 0;
        if (perms[0] != 'r' || !anonymous) continue;
        ++regions;
        for (unsigned long long at = from; at < to; at += 1 << 20) {
            const std::size_t want = static_cast<std::size_t>(std::min<unsigned long long>(to - at, (1 << 20) + 16));
            const ssize_t n = ::pread(mem, chunk.data(), want, static_cast<off_t>(at));
            if (n <= 0) break;
            scanned += static_cast<unsigned long long>(n);
            if (unknown_seeds(chunk.data(), static_cast<std::size_t>(n)) > 0) ++hits;
        }
    }
    std::fclose(maps);
    ::close(mem);
    report(std::string(when) + ": scanned " + std::to_string(scanned >> 20) + " MiB of " + std::to_string(regions) +
           " regions of my own memory, " + std::to_string(hits) + " chunks naming a seed");
    if (hits > 0) report(found_marker() + " in my own memory (" + when + ")");
    if (secrets_found > 0) report(found_marker() + ": " + std::to_string(secrets_found - 1) + " finds so far");
}

// Fresh device memory: what another process left there, if the driver did not clear it.
void probe_device_memory()
{
    const std::size_t bytes = std::size_t{256} << 20;
    void* device = nullptr;
    if (cudaMalloc(&device, bytes) != cudaSuccess) return;
    std::vector<unsigned char> host(bytes);
    cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost);
    cudaFree(device);
    std::size_t nonzero = 0;
    for (unsigned char b : host) nonzero += b != 0;
    report("fresh device memory: " + std::to_string(nonzero) + " of " + std::to_string(bytes) + " bytes not zero");
}

// ---- the grader's wire format (harness/channel.hpp, harness/core/src/channel.cpp) ----
struct Header {
    std::uint32_t magic, type;
    std::uint64_t meta_bytes, blob_bytes;
};
static_assert(sizeof(Header) == 24, "the header has no padding");
constexpr std::uint32_t kMagic = 0x47524452;  // "GRDR"

bool read_all(int fd, void* data, std::size_t size)
{
    char* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::read(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

bool write_all(int fd, const void* data, std::size_t size)
{
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// The keys of a JSON object's text, outermost level only ({"a":1,"b":{"c":2}} -> a, b).
std::string top_keys(const std::string& text)
{
    std::string keys;
    int depth = 0;
    bool in_string = false;
    std::size_t string_start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') {
                in_string = false;
                if (depth == 1 && i + 1 < text.size() && text[i + 1] == ':')
                    keys += (keys.empty() ? "" : ",") + text.substr(string_start + 1, i - string_start - 1);
            }
        } else if (c == '"') {
            in_string = true;
            string_start = i;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return keys;
}

void relay_commands(int grader_commands, int harness_commands)
{
    std::set<std::string> reported;
    Header header{};
    while (read_all(grader_commands, &header, sizeof header)) {
        if (header.magic != kMagic || header.meta_bytes > (1u << 20) || header.blob_bytes != 0) break;
        std::string meta(header.meta_bytes, '\0');
        if (!read_all(grader_commands, &meta[0], meta.size())) break;
        const std::string seen = "command type " + std::to_string(header.type) + " keys {" + top_keys(meta) + "}";
        if (reported.insert(seen).second) report(seen);
        // A case's own seed (load_case, run_case: keys with "case") is public; any other is a find.
        if (meta.find(kSeedKey) != std::string::npos) {
            if (top_keys(meta).find("case") != std::string::npos) {
                std::lock_guard<std::mutex> lock(public_seeds_mutex);
                for (const auto& value : seed_values(meta.data(), meta.size())) public_seeds.insert(value);
            } else {
                report(found_marker() + " in a command: " + seen);
            }
        }
        if (!write_all(harness_commands, &header, sizeof header) || !write_all(harness_commands, meta.data(), meta.size()))
            break;
    }
    ::close(harness_commands);
}

struct LookAtStartup {
    LookAtStartup()
    {
        if (::fcntl(3, F_GETFD) < 0) return;  // not started by the grader
        probe_processes();
        probe_descriptors();
        scan_own_memory("at startup");
        int commands[2];
        if (::pipe2(commands, O_CLOEXEC) != 0) return;
        const int grader_commands = ::fcntl(3, F_DUPFD_CLOEXEC, 20);
        ::dup2(commands[0], 3);
        ::close(commands[0]);
        std::thread(relay_commands, grader_commands, commands[1]).detach();
    }
} look_at_startup;

// Correct but deliberately slow (about 3% of the reference's speed on an H100): 512 threads in
// all, each scanning whole 1024-element sections one element after the other.
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

constexpr int kSpeedCaseN = 1 << 26;  // n=67108864/int, the timed case (grade --list)
int calls_at_speed_size = 0;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    if (n == kSpeedCaseN) {
        // Calls 1 and 2 are the checked run and its repeat; from the third on, timed repetitions.
        ++calls_at_speed_size;
        if (calls_at_speed_size == 1) probe_device_memory();
        if (calls_at_speed_size == 3) std::thread([] { scan_own_memory("at the first timed call"); }).detach();
        if (calls_at_speed_size == 10) std::thread([] { scan_own_memory("at the eighth timed call"); }).detach();
    }
    slow_section_scan<<<16, 32>>>(in, out, n);
}

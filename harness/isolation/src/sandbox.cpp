// The bubblewrap sandbox (see sandbox.hpp).
//
// Mount sources when the grader is root: the child that execs bwrap first drops to the grading's
// host uid (Sandbox::host_uid(), 65534 or base + k), and bwrap then resolves every source path as
// that uid, which cannot pass a directory only root may enter (a checkout under /root). bwrap's
// --bind-fd does not help: it turns the descriptor back into a path (realpath) as that uid and
// fails the same way. So the child, still root, enters a private mount namespace, mounts a tmpfs
// (0755) over /dev/shm there (the grader's /dev/shm is untouched) and binds each source onto an
// entry of it; then it drops to the host uid and execs bwrap, which binds from /dev/shm/N, a path
// every uid can reach. wrap() opens each source first (no symbolic
// link, must exist), and the child checks it binds that same file. Every descriptor involved is
// close-on-exec: neither bwrap nor the sandboxed program inherits one. The bwrap binary is staged
// the same way, so it may also lie below such a directory.
#include "harness/sandbox.hpp"

#include "harness/cgroup.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace harness {
namespace {

// /dev/nvidia0, /dev/nvidia1, ...: a GPU's own node (not nvidiactl, nvidia-uvm, nvidia-caps).
bool is_gpu_node(const std::string& name)
{
    return name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
           name.find_first_not_of("0123456789", 6) == std::string::npos;
}

constexpr int sandbox_id = 65534;                // the program's uid and gid inside (nobody, nogroup)
constexpr const char* staging_dir = "/dev/shm";  // covered in the child's mount namespace only

[[noreturn]] void fail(const std::string& what)
{
    throw std::runtime_error(what);
}

// Writes "/proc/self/fd/<fd>" into `out` (async-signal-safe, unlike snprintf).
void fd_link(int fd, char (&out)[32])
{
    const char prefix[] = "/proc/self/fd/";
    char digits[12];
    int count = 0;
    do {
        digits[count++] = static_cast<char>('0' + fd % 10);
        fd /= 10;
    } while (fd > 0 && count < 11);
    std::size_t at = 0;
    for (; prefix[at] != '\0'; ++at) out[at] = prefix[at];
    while (count > 0) out[at++] = digits[--count];
    out[at] = '\0';
}

// Mount sources and where the child binds each one before it drops to the host uid. Built before
// fork; in the child, stage() makes only async-signal-safe system calls.
class Staging {
public:
    Staging() = default;
    Staging(const Staging&) = delete;
    Staging& operator=(const Staging&) = delete;
    ~Staging()
    {
        for (const auto& entry : entries_) ::close(entry.pinned);
    }

    // `pinned`: the grader's O_PATH descriptor of absolute path `source` (taken over). Returns
    // the path bwrap will find the source at.
    std::string add(int pinned, const std::string& source, const std::string& name)
    {
        entries_.push_back({pinned, source, std::string(staging_dir) + "/" + name, "", -1});
        return entries_.back().to;
    }

    // In the child, as root. Returns 0 or an errno value.
    int stage() noexcept
    {
        if (::unshare(CLONE_NEWNS) != 0) return errno;
        // Nothing mounted from here on may propagate back to the grader's namespace.
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return errno;
        // A mount cannot be bound from another namespace, so the grader's descriptors cannot be
        // used: each source is opened again here, and must still be the file the grader opened
        // (a link swapped in meanwhile fails). All before the tmpfs covers /dev/shm.
        for (auto& entry : entries_) {
            entry.opened = ::open(entry.source.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
            struct stat pinned {
            }, opened{};
            if (entry.opened < 0) return errno;
            if (::fstat(entry.pinned, &pinned) != 0 || ::fstat(entry.opened, &opened) != 0) return errno;
            if (pinned.st_dev != opened.st_dev || pinned.st_ino != opened.st_ino) return ESTALE;
            entry.directory = S_ISDIR(opened.st_mode);
            // The magic link /proc/self/fd/N, which the kernel follows as root.
            fd_link(entry.opened, entry.from);
        }
        if (::mount("tmpfs", staging_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0) return errno;
        for (const auto& entry : entries_) {
            if (entry.directory) {
                if (::mkdir(entry.to.c_str(), 0755) != 0) return errno;
            } else {
                int fd = ::open(entry.to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (fd < 0) return errno;
                ::close(fd);
            }
            if (::mount(entry.from, entry.to.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
        }
        return 0;
    }

private:
    struct Entry {
        int pinned;          // the grader's descriptor
        std::string source;  // absolute path
        std::string to;      // /dev/shm/NAME
        char from[32];       // the child's /proc/self/fd/N
        int opened;          // the child's descriptor
        bool directory = false;
    };
    std::vector<Entry> entries_;
};

// Opens a mount source without following a final symbolic link: a link a submission planted in a
// directory it could write must not make the grader bind some other file. Returns an O_PATH fd.
int open_source(const std::string& path)
{
    int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) fail("sandbox mount source '" + path + "': " + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0 || S_ISLNK(info.st_mode)) {
        ::close(fd);
        fail("sandbox mount source '" + path + "' is a symbolic link");
    }
    return fd;
}

std::string absolute(const std::string& path)
{
    return std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace

std::string gpu_device_node(const std::string& pci_bus_id, const std::string& driver_proc)
{
    std::string id;
    for (const char c : pci_bus_id) id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (id.empty() || id.find('/') != std::string::npos) return {};
    std::ifstream information(driver_proc + "/gpus/" + id + "/information");
    std::string line;
    while (std::getline(information, line)) {
        const std::string key = "Device Minor:";
        if (line.rfind(key, 0) != 0) continue;
        std::size_t digits = key.size();
        while (digits < line.size() && (line[digits] == ' ' || line[digits] == '\t')) ++digits;
        const std::string minor = line.substr(digits);
        if (minor.empty() || minor.find_first_not_of("0123456789") != std::string::npos) return {};
        return "/dev/nvidia" + minor;
    }
    return {};
}

int gpu_device_node_count()
{
    int count = 0;
    if (DIR* dev = ::opendir("/dev")) {
        while (const dirent* entry = ::readdir(dev)) count += is_gpu_node(entry->d_name);
        ::closedir(dev);
    }
    return count;
}

bool is_below(const std::string& path, const std::string& root)
{
    return path == root || path.rfind(root + "/", 0) == 0;
}

std::string search_path(const std::string& name)
{
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "";
    for (std::size_t start = 0; start <= dirs.size();) {
        std::size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    return {};
}

namespace {

// A fresh private file or directory for the probe, removed at the end of the scope.
struct ProbeFiles {
    std::string dir, log;
    ProbeFiles()
    {
        const char* tmpdir = std::getenv("TMPDIR");
        std::string base = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/grader-sandbox-probe-XXXXXX";
        std::string dir_pattern = base, log_pattern = base;
        if (::mkdtemp(dir_pattern.data()) == nullptr) fail("mkdtemp " + base + ": " + std::strerror(errno));
        dir = dir_pattern;
        int fd = ::mkstemp(log_pattern.data());
        if (fd < 0) {
            ::rmdir(dir.c_str());
            fail("mkstemp " + base + ": " + std::strerror(errno));
        }
        ::close(fd);
        log = log_pattern;
    }
    ~ProbeFiles()
    {
        ::rmdir(dir.c_str());
        ::unlink(log.c_str());
    }
};

// Runs a trivial program in `sandbox` in the shape of real use: a mount of a directory only the
// grader may enter (0700), the GPU's nodes if there are any, a channel. Empty when it worked,
// else what went wrong (bwrap's own message included).
std::string probe(const Sandbox& sandbox)
{
    try {
        ProbeFiles files;
        SandboxPolicy policy;
        policy.mounts = {{files.dir, "/probe", false}};
        policy.gpu = true;
        policy.tmp_bytes = 1 << 20;
        SpawnOptions inner;
        inner.argv = {"test", "-d", "/probe"};
        inner.output_file = files.log;
        inner.create_channel = true;
        Child child = Child::spawn(sandbox.wrap(inner, policy));
        ExitStatus status = child.wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(60));
        if (status.ok()) return {};
        std::string output = read_file_tail(files.log, 2000);
        while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
        return "a trivial program run in it gave " + status.describe() + (output.empty() ? "" : ": " + output);
    } catch (const std::exception& error) {
        return error.what();
    }
}

// The CUDA toolkit and the compilers as this system holds them: what a run's sandbox hides. Found
// once; only real directories and regular files (a link to one of them then leads nowhere).
struct Toolchains {
    std::vector<std::string> dirs;   // shown empty
    std::vector<std::string> keep;   // below those, shown again: a CUDA root's compat/ (the driver's
                                     // forward-compatible libraries)
    std::vector<std::string> files;  // replaced by /dev/null
};

std::vector<std::string> entries_of(const std::string& dir)
{
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* entry = ::readdir(d))
            if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0)
                names.push_back(entry->d_name);
        ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

bool is_kind(const std::string& path, mode_t kind)
{
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0 && (info.st_mode & S_IFMT) == kind;
}

bool matches(const std::string& name, std::initializer_list<const char*> patterns)
{
    for (const char* pattern : patterns)
        if (::fnmatch(pattern, name.c_str(), 0) == 0) return true;
    return false;
}

const Toolchains& toolchains()
{
    static const Toolchains found = [] {
        Toolchains t;
        // Roots: the toolkit's (/usr/local/cuda-13.0, Debian's), the compilers' own directories
        // (cc1, cc1plus, LLVM).
        for (const auto& name : entries_of("/usr/local"))
            if (matches(name, {"cuda", "cuda-*", "cuda_*"}) && is_kind("/usr/local/" + name, S_IFDIR))
                t.dirs.push_back("/usr/local/" + name);
        for (const auto& name : entries_of("/usr/lib"))
            if (matches(name, {"cuda", "nvidia-cuda-toolkit", "gcc", "gcc-cross", "llvm", "llvm-*"}) &&
                is_kind("/usr/lib/" + name, S_IFDIR))
                t.dirs.push_back("/usr/lib/" + name);
        for (const char* dir : {"/usr/libexec/gcc", "/usr/local/libexec/gcc", "/usr/local/lib/gcc"})
            if (is_kind(dir, S_IFDIR)) t.dirs.push_back(dir);
        // Python's installs, whose packages bring compilers of their own (pip's nvidia-cuda-nvrtc and
        // nvidia-cuda-nvcc wheels, Triton's ptxas): a runner needs no Python.
        for (const char* lib : {"/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/local/lib64"})
            for (const auto& name : entries_of(lib))
                if (matches(name, {"python2*", "python3*", "pypy*"}) && is_kind(std::string(lib) + "/" + name, S_IFDIR))
                    t.dirs.push_back(std::string(lib) + "/" + name);
        for (const auto& dir : t.dirs)
            if (is_kind(dir + "/compat", S_IFDIR)) t.keep.push_back(dir + "/compat");
        auto hidden_dir = [&](const std::string& path) {
            return std::any_of(t.dirs.begin(), t.dirs.end(), [&](const std::string& d) { return is_below(path, d); });
        };

        // Compilers, assemblers and linkers; the toolkit's programs.
        for (const char* dir : {"/usr/bin", "/usr/local/bin"})
            for (const auto& name : entries_of(dir)) {
                const std::string path = std::string(dir) + "/" + name;
                if (matches(name, {"nvcc", "nvcc.*", "ptxas", "cicc", "nvlink", "fatbinary", "cudafe++", "bin2c",
                                   "nvdisasm", "cuobjdump", "nvprune", "cu++filt", "gcc", "gcc-*", "g++", "g++-*", "cc",
                                   "c++", "cpp", "cpp-*", "c89*", "c99*", "as", "ld", "ld.*", "lld", "ld64.lld", "clang",
                                   "clang-[0-9]*", "clang++*", "clang-cpp*", "*-linux-gnu*-gcc*", "*-linux-gnu*-g++*",
                                   "*-linux-gnu*-cpp*", "*-linux-gnu*-as", "*-linux-gnu*-ld*", "*-linux-gnu*-c++*",
                                   "tcc", "nvc", "nvc++", "nvfortran", "gfortran*"}) &&
                    is_kind(path, S_IFREG) && !hidden_dir(path))
                    t.files.push_back(path);
            }
        // The toolkit's libraries (run-time compilers and linkers first), and the compilers'.
        std::vector<std::string> library_dirs = {"/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/local/lib64"};
        for (const auto& name : entries_of("/usr/lib"))
            if (matches(name, {"*-linux-gnu*"}) && is_kind("/usr/lib/" + name, S_IFDIR))
                library_dirs.push_back("/usr/lib/" + name);
        for (const auto& dir : library_dirs)
            for (const auto& name : entries_of(dir)) {
                const std::string path = dir + "/" + name;
                if (matches(name, {"libnvrtc*", "libnvJitLink*", "libnvptxcompiler*", "libnvvm*", "libnvfatbin*",
                                   "libcudart*", "libcublas*", "libcufft*", "libcurand*", "libcusparse*", "libcusolver*",
                                   "libcutensor*", "libnpp*", "libnvjpeg*", "libcudnn*", "libcupti*", "libnvblas*",
                                   "libcufile*", "libnccl*", "libLLVM*", "libclang*", "libgccjit*", "libtcc*"}) &&
                    is_kind(path, S_IFREG) && !hidden_dir(path))
                    t.files.push_back(path);
            }
        return t;
    }();
    return found;
}

}  // namespace

std::optional<Sandbox> Sandbox::find(std::string& why, const std::string& bwrap_path, const UidPool& uids)
{
    why.clear();
    const std::string or_else = "; or grade trusted code only with --no-sandbox";
    std::string found;
    if (!bwrap_path.empty())
        found = bwrap_path.find('/') != std::string::npos ? bwrap_path : search_path(bwrap_path);
    else
        found = search_path("bwrap");
    if (found.empty() && bwrap_path.empty() && ::access("/usr/bin/bwrap", X_OK) == 0) found = "/usr/bin/bwrap";
    char* real = found.empty() ? nullptr : ::realpath(found.c_str(), nullptr);
    if (real == nullptr || ::access(real, X_OK) != 0) {
        std::free(real);
        why = "bubblewrap (bwrap) was not found (" +
              (bwrap_path.empty() ? std::string("not on PATH, nor /usr/bin/bwrap") : "'" + bwrap_path + "'") +
              "): install the Debian package bubblewrap (apt-get install bubblewrap)" + or_else;
        return std::nullopt;
    }
    Sandbox sandbox;
    sandbox.bwrap_ = real;
    std::free(real);

    // "bubblewrap 0.8.0": 0.8.0 brought --size (the bounded /tmp) and --disable-userns.
    CommandResult version = run_command({sandbox.bwrap_, "--version"}, std::chrono::seconds(30));
    int major = 0, minor = 0, patch = 0;
    char name[32] = {};
    if (!version.status.ok() ||
        std::sscanf(version.output.c_str(), "%31s %d.%d.%d", name, &major, &minor, &patch) < 3 ||
        std::string(name) != "bubblewrap") {
        why = "'" + sandbox.bwrap_ + "' does not say it is bubblewrap (--version: " + version.status.describe() + ")" +
              or_else;
        return std::nullopt;
    }
    sandbox.version_ = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    if (major == 0 && minor < 8) {
        why = "bubblewrap " + sandbox.version_ + " (" + sandbox.bwrap_ +
              ") is too old: 0.8.0 or newer is needed; install a newer bubblewrap package" + or_else;
        return std::nullopt;
    }

    std::string problem;
    if (::geteuid() == 0) {
        sandbox.mode_ = Mode::as_nobody;
        // A host uid of this grading's own, so that RLIMIT_NPROC counts this grading's processes
        // only (harness/uid_slot.hpp); else 65534, one pool with every other such grading.
        std::string no_slot;
        sandbox.slot_ = UidSlot::take(uids, no_slot);
        if (sandbox.slot_)
            sandbox.host_id_ = sandbox.slot_->uid();
        else
            sandbox.shared_uid_ = no_slot;
        problem = probe(sandbox);
        if (problem.empty()) return sandbox;
        // Without unprivileged user namespaces, root can still create them.
        Sandbox as_root = sandbox;
        as_root.mode_ = Mode::as_root;
        as_root.slot_.reset();
        const std::string root_problem = probe(as_root);
        problem = "as uid " + std::to_string(sandbox.host_id_) + ", " + problem;
        if (root_problem.empty()) {
            as_root.note_ = "bwrap " + problem;
            return as_root;
        }
        problem += "; as root, " + root_problem;
    } else {
        sandbox.mode_ = Mode::as_grader;
        problem = probe(sandbox);
        if (problem.empty()) return sandbox;
    }
    why = "bubblewrap " + sandbox.version_ + " (" + sandbox.bwrap_ + ") cannot create a sandbox here: " + problem +
          ". Where user namespaces are restricted, enable them (sysctl user.max_user_namespaces > 0 and, where "
          "they exist, kernel.unprivileged_userns_clone=1 and kernel.apparmor_restrict_unprivileged_userns=0)" +
          or_else;
    return std::nullopt;
}

SpawnOptions Sandbox::wrap(const SpawnOptions& inner, const SandboxPolicy& policy) const
{
    if (inner.argv.empty()) fail("Sandbox::wrap: empty argv");
    auto staging = std::make_shared<Staging>();
    const bool stage = mode_ == Mode::as_nobody;

    SpawnOptions outer;
    outer.argv = {bwrap_};
    if (stage) {
        int fd = ::open(bwrap_.c_str(), O_PATH | O_CLOEXEC);
        if (fd < 0) fail("cannot open " + bwrap_ + ": " + std::strerror(errno));
        outer.argv = {staging->add(fd, bwrap_, "bwrap")};
    }

    // Every namespace, uid and gid 65534 inside, no nested user namespace, no terminal, and the whole
    // sandbox dies with the bwrap process the grader started.
    std::vector<std::string> args = {"--unshare-user",
                                     "--unshare-pid",
                                     "--unshare-net",
                                     "--unshare-ipc",
                                     "--unshare-uts",
                                     "--unshare-cgroup",
                                     "--disable-userns",
                                     "--die-with-parent",
                                     "--new-session",
                                     "--uid",
                                     std::to_string(sandbox_id),
                                     "--gid",
                                     std::to_string(sandbox_id)};

    // A bind of host `source` on `dest`, through the staging directory when bwrap runs unprivileged
    // for a root grader.
    int staged = 0;
    auto bind = [&](const char* option, const std::string& source, const std::string& dest) {
        int fd = open_source(source);
        std::string from = absolute(source);
        if (stage)
            from = staging->add(fd, from, std::to_string(staged++));
        else
            ::close(fd);
        args.insert(args.end(), {option, from, dest});
    };

    // The read-only system. /bin, /lib... are links into /usr on a merged-/usr system.
    args.insert(args.end(), {"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"});
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
        struct stat info {};
        if (::lstat(top, &info) != 0) continue;
        if (S_ISLNK(info.st_mode)) {
            std::error_code error;
            auto target = std::filesystem::read_symlink(top, error);
            if (!error) args.insert(args.end(), {"--symlink", target.string(), top});
        } else if (S_ISDIR(info.st_mode)) {
            args.insert(args.end(), {"--ro-bind", top, top});
        }
    }
    // The private /tmp first, so that a toolkit root or a mount below /tmp is bound on top of it.
    args.insert(args.end(), {"--perms", "1777", "--size", std::to_string(policy.tmp_bytes), "--tmpfs", "/tmp"});
    // More system paths (a toolkit root), at their real path; a link to it is kept as a link.
    std::vector<std::string> shown;       // never hidden
    std::vector<std::string> shown_real;  // the same, after links: bound again inside a hidden directory
    for (const auto& path : policy.system_paths_extra) {
        std::error_code error;
        const std::string real = std::filesystem::canonical(path, error).string();
        if (error) fail("sandbox system path '" + path + "': " + error.message());
        if (!is_below(real, "/usr") && !is_below(real, "/etc")) bind("--ro-bind", real, real);
        const std::string given = absolute(path);
        if (given != real && !is_below(given, "/usr") && !is_below(given, "/etc"))
            args.insert(args.end(), {"--symlink", real, given});
        shown.insert(shown.end(), {real, given});
        shown_real.push_back(real);
    }
    // A run sees no toolkit and no compiler: their directories empty (read-only), their programs
    // and libraries in the system's directories /dev/null (on a nodev mount: neither opened nor run).
    if (policy.hide_toolchains.value_or(policy.gpu)) {
        const Toolchains& hide = toolchains();
        auto visible = [&](const std::string& path) {
            return std::any_of(shown.begin(), shown.end(),
                               [&](const std::string& s) { return is_below(path, s) || is_below(s, path); });
        };
        // A shown path inside a hidden directory (compute-sanitizer's own directory in a toolkit
        // root) shows that path alone: the directory stays empty around it.
        for (const auto& dir : hide.dirs) {
            if (std::any_of(shown.begin(), shown.end(), [&](const std::string& s) { return is_below(dir, s); }))
                continue;
            args.insert(args.end(), {"--perms", "0755", "--size", "4096", "--tmpfs", dir});
            for (const auto& keep : hide.keep)
                if (is_below(keep, dir)) bind("--ro-bind", keep, keep);
            for (const auto& real : shown_real)
                if (is_below(real, dir) && real != dir) bind("--ro-bind", real, real);
            args.insert(args.end(), {"--remount-ro", dir});
        }
        for (const auto& file : hide.files)
            if (!visible(file)) args.insert(args.end(), {"--ro-bind", "/dev/null", file});
    }

    args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev"});
    if (policy.shm_bytes > 0)
        args.insert(args.end(), {"--perms", "1777", "--size", std::to_string(policy.shm_bytes), "--tmpfs", "/dev/shm"});
    if (policy.gpu) {
        // The /dev/nvidia* nodes (nvidiactl, nvidia-uvm, nvidia-caps/, ...), of the numbered ones
        // only the GPU's own where one is named (the driver then shows the program that GPU alone,
        // as container runtimes do), and /sys, which the driver reads.
        if (DIR* dev = ::opendir("/dev")) {
            while (const dirent* entry = ::readdir(dev)) {
                const std::string name = entry->d_name;
                if (name.rfind("nvidia", 0) != 0) continue;
                if (!policy.gpu_node.empty() && is_gpu_node(name) && "/dev/" + name != policy.gpu_node) continue;
                args.insert(args.end(), {"--dev-bind", "/dev/" + name, "/dev/" + name});
            }
            ::closedir(dev);
        }
        args.insert(args.end(), {"--ro-bind", "/sys", "/sys"});
    }

    for (const auto& mount : policy.mounts) {
        if (mount.sandbox_path.empty() || mount.sandbox_path.front() != '/')
            fail("sandbox path '" + mount.sandbox_path + "' is not absolute");
        bind(mount.writable ? "--bind" : "--ro-bind", mount.host_path, mount.sandbox_path);
    }

    // bwrap builds / and /dev on tmpfs mounts of no bounded size, owned by the sandbox's uid: made
    // read-only, only /tmp and the writable mounts take data (device nodes stay writable).
    args.insert(args.end(), {"--remount-ro", "/dev", "--remount-ro", "/"});

    if (policy.working_dir.empty() || policy.working_dir.front() != '/')
        fail("sandbox working directory '" + policy.working_dir + "' is not absolute");
    args.insert(args.end(), {"--chdir", policy.working_dir, "--clearenv"});
    for (const auto& entry : policy.env) {
        const std::size_t equals = entry.find('=');
        if (equals == std::string::npos || equals == 0)
            fail("sandbox environment entry '" + entry + "' is not NAME=value");
        args.insert(args.end(), {"--setenv", entry.substr(0, equals), entry.substr(equals + 1)});
    }
    args.push_back("--");
    args.insert(args.end(), inner.argv.begin(), inner.argv.end());

    outer.argv.insert(outer.argv.end(), args.begin(), args.end());
    outer.clear_env = true;  // bwrap needs nothing; the program gets policy.env only
    outer.working_dir = "/";
    outer.output_file = inner.output_file;
    outer.create_channel = inner.create_channel;
    // The whole sandbox's processes and memory in a control group of its own; the output on a
    // tmpfs of its own. With the group, RLIMIT_NPROC is left out: it counts every process of the
    // host uid, so one sandbox's fork bomb would stop every other sandbox from starting.
    outer.limits = policy.limits;
    outer.limits.tree_processes = policy.limits.tree_processes > 0 ? policy.limits.tree_processes : policy.limits.max_processes;
    outer.limits.tree_memory_bytes =
        policy.limits.tree_memory_bytes > 0 ? policy.limits.tree_memory_bytes : policy.limits.max_data_bytes;
    if (outer.limits.tree_processes > 0 && process_limit_per_sandbox()) outer.limits.max_processes = 0;
    outer.bounded_output = true;
    outer.exit_code_reports_signal = true;
    if (stage) {
        outer.run_as_uid = static_cast<int>(host_id_);
        outer.run_as_gid = static_cast<int>(host_id_);
        // The child works on its own copy of `staging` (fork), so stage() may write to it.
        outer.child_setup = [staging] { return staging->stage(); };
    }
    return outer;
}

void Sandbox::make_writable(const std::string& path) const
{
    if (mode_ != Mode::as_nobody) return;
    if (::lchown(path.c_str(), host_id_, host_id_) != 0)
        fail("cannot hand '" + path + "' to uid " + std::to_string(host_id_) + ": " + std::strerror(errno));
}

uid_t Sandbox::host_uid() const
{
    switch (mode_) {
        case Mode::as_nobody:
            return host_id_;
        case Mode::as_grader:
            return ::getuid();
        case Mode::as_root:
            break;
    }
    return 0;
}

bool Sandbox::process_limit_per_sandbox() const
{
    return cgroup_support().processes;
}

bool Sandbox::enforces_process_limit() const
{
    return mode_ != Mode::as_root || process_limit_per_sandbox();
}

SandboxLimits Sandbox::limits() const
{
    SandboxLimits l;
    const CgroupSupport& cgroups = cgroup_support();
    if (cgroups.processes)
        l.enforced.push_back("processes");
    else if (mode_ == Mode::as_root)
        l.not_enforced.push_back({"processes", "bwrap runs as root, so RLIMIT_NPROC does not apply; " + cgroups.why_not});
    else if (mode_ == Mode::as_nobody && shared_uid_.empty())
        l.not_enforced.push_back({"processes", "RLIMIT_NPROC only: one pool per grading (host uid " +
                                                   std::to_string(host_id_) +
                                                   "), shared by its builds and runs: " + cgroups.why_not});
    else if (mode_ == Mode::as_nobody)
        l.not_enforced.push_back({"processes", "RLIMIT_NPROC only, one pool for every sandbox of host uid " +
                                                   std::to_string(host_id_) + " on this machine, other gradings' too (" +
                                                   shared_uid_ + "): " + cgroups.why_not});
    else
        l.not_enforced.push_back({"processes", "RLIMIT_NPROC only, one pool for every sandbox of host uid " +
                                                   std::to_string(::getuid()) + ": " + cgroups.why_not});
    if (cgroups.memory)
        l.enforced.push_back("memory");
    else
        l.not_enforced.push_back(
            {"memory", "per process only (RLIMIT_DATA, which memfd and shared memory escape): " + cgroups.why_not});
    if (output_bound_problem().empty())
        l.enforced.push_back("output");
    else
        l.not_enforced.push_back(
            {"output", "RLIMIT_FSIZE only, which fallocate escapes (disk space): " + output_bound_problem()});
    for (const char* always : {"tmp", "file_size", "open_files", "cpu_seconds", "data"}) l.enforced.push_back(always);
    return l;
}

std::string Sandbox::describe() const
{
    std::string text = "bubblewrap " + version_ + " (" + bwrap_ + "), uid " + std::to_string(sandbox_id);
    switch (mode_) {
        case Mode::as_nobody:
            text += shared_uid_.empty() ? " (host uid " + std::to_string(host_id_) + ", this grading's own)"
                                        : " (host uid " + std::to_string(host_id_) + ", shared with other gradings: " +
                                              shared_uid_ + ")";
            break;
        case Mode::as_grader:
            text += " (uid " + std::to_string(::getuid()) + " outside" +
                    (process_limit_per_sandbox() ? ")" : ": the process limit counts all its processes)");
            break;
        case Mode::as_root:
            text += " (root outside: bwrap runs as root, so the program has root's access to the host files it sees" +
                    std::string(process_limit_per_sandbox() ? "" : " and the process limit is not enforced") + "; " +
                    note_ + ")";
            break;
    }
    const CgroupSupport& cgroups = cgroup_support();
    if (!cgroups.how.empty()) text += "; limits per sandbox: " + cgroups.how;
    return text;
}

}  // namespace harness

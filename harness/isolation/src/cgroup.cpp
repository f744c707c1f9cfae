// Control groups per process tree (see cgroup.hpp).
#include "harness/cgroup.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness {
namespace cgroup_detail {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& field)
{
    std::string text;
    for (std::size_t k = 0; k < field.size(); ++k) {
        if (field[k] == '\\' && k + 3 < field.size()) {
            const std::string digits = field.substr(k + 1, 3);
            if (digits.find_first_not_of("01234567") == std::string::npos) {
                text += static_cast<char>(std::strtol(digits.c_str(), nullptr, 8));
                k += 3;
                continue;
            }
        }
        text += field[k];
    }
    return text;
}

std::vector<std::string> split(const std::string& text, char separator)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) return parts;
        start = end + 1;
    }
}

bool is_below(const std::string& path, const std::string& root)
{
    if (root == "/") return !path.empty() && path.front() == '/';
    return path == root || path.rfind(root + "/", 0) == 0;
}

}  // namespace

std::vector<Mount> parse_mountinfo(const std::string& text)
{
    std::vector<Mount> mounts;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::vector<std::string> words;
        for (std::string word; fields >> word;) words.push_back(word);
        // id parent major:minor root point options [optional...] - type source super-options
        const auto dash = std::find(words.begin(), words.end(), "-");
        if (words.size() < 6 || dash == words.end() || dash - words.begin() < 6 || words.end() - dash < 4) continue;
        Mount mount;
        mount.root = unescape(words[3]);
        mount.point = unescape(words[4]);
        mount.type = *(dash + 1);
        mount.options = split(*(dash + 3), ',');
        mounts.push_back(std::move(mount));
    }
    return mounts;
}

std::map<std::string, std::string> parse_proc_cgroup(const std::string& text)
{
    std::map<std::string, std::string> groups;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        // hierarchy-id:controller,list:path (the path may hold ':')
        const std::size_t first = line.find(':');
        if (first == std::string::npos) continue;
        const std::size_t second = line.find(':', first + 1);
        if (second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (controllers.empty()) {
            if (line.compare(0, first, "0") == 0) groups[""] = path;
            continue;
        }
        for (const auto& controller : split(controllers, ',')) groups[controller] = path;
    }
    return groups;
}

std::string own_group_directory(const std::vector<Mount>& mounts, const std::map<std::string, std::string>& groups,
                                const std::string& controller)
{
    const auto group = groups.find(controller);
    if (group == groups.end()) return {};
    // The last mount wins, as it hides the earlier ones at the same place.
    for (auto mount = mounts.rbegin(); mount != mounts.rend(); ++mount) {
        const bool v2 = mount->type == "cgroup2";
        const bool fits = controller.empty() ? v2
                                             : mount->type == "cgroup" && std::find(mount->options.begin(), mount->options.end(),
                                                                                    controller) != mount->options.end();
        if (!fits || !is_below(group->second, mount->root)) continue;
        std::string relative = group->second.substr(mount->root == "/" ? 0 : mount->root.size());
        while (!relative.empty() && relative.back() == '/') relative.pop_back();
        std::string point = mount->point;
        while (point.size() > 1 && point.back() == '/') point.pop_back();
        if (relative.empty()) return point;
        return (point == "/" ? std::string() : point) + relative;
    }
    return {};
}

std::uint64_t flat_key(const std::string& text, const std::string& key)
{
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string name;
        std::uint64_t value = 0;
        if (words >> name && name == key && words >> value) return value;
    }
    return 0;
}

}  // namespace cgroup_detail

namespace {

using Clock = std::chrono::steady_clock;
using namespace cgroup_detail;

std::string read_small(const std::string& path)
{
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return text;
    char buffer[8192];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0 || text.size() > (4u << 20)) break;
        text.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(fd);
    return text;
}

// One write(2), as cgroup files want; 0 or an errno value.
int write_file(const std::string& path, const std::string& text)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int error = 0;
    ssize_t written;
    do {
        written = ::write(fd, text.data(), text.size());
    } while (written < 0 && errno == EINTR);
    if (written != static_cast<ssize_t>(text.size())) error = written < 0 ? errno : EIO;
    ::close(fd);
    return error;
}

std::vector<std::string> words_of(const std::string& text)
{
    std::istringstream stream(text);
    std::vector<std::string> words;
    for (std::string word; stream >> word;) words.push_back(word);
    return words;
}

bool contains(const std::vector<std::string>& words, const std::string& word)
{
    return std::find(words.begin(), words.end(), word) != words.end();
}

std::string error_text(int error)
{
    return std::strerror(error);
}

// Where groups are created: a directory of one hierarchy, and what it controls.
struct Hierarchy {
    std::string base;
    bool v2 = false;
    bool pids = false, memory = false;
};

struct Detected {
    CgroupSupport support;
    std::vector<Hierarchy> hierarchies;
};

std::atomic<unsigned> next_group{0};

// Removes the empty groups that graders no longer running left behind in `base`.
void remove_stale_groups(const std::string& base)
{
    DIR* dir = ::opendir(base.c_str());
    if (dir == nullptr) return;
    std::vector<std::string> stale;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        for (const char* prefix : {"grader-sandbox-", "grader-probe-"}) {
            if (name.rfind(prefix, 0) != 0) continue;
            const long pid = std::strtol(name.c_str() + std::strlen(prefix), nullptr, 10);
            if (pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
                stale.push_back(base + "/" + name);
        }
    }
    ::closedir(dir);
    for (const auto& path : stale) ::rmdir(path.c_str());  // fails, harmlessly, where processes remain
}

// Limits in a fresh group directory of hierarchy `h`; 0 or an errno value, with `what` naming the file.
int set_limits(const std::string& path, bool v2, std::uint64_t processes, std::uint64_t memory, std::string& what)
{
    if (processes > 0) {
        what = path + "/pids.max";
        if (int error = write_file(what, std::to_string(processes))) return error;
    }
    if (memory > 0) {
        what = path + (v2 ? "/memory.max" : "/memory.limit_in_bytes");
        if (int error = write_file(what, std::to_string(memory))) return error;
        // Memory and swap together (absent without swap accounting), and on v2 the whole tree at
        // once when the kernel kills for memory.
        if (v2) {
            write_file(path + "/memory.swap.max", "0");
            write_file(path + "/memory.oom.group", "1");
        } else {
            write_file(path + "/memory.memsw.limit_in_bytes", std::to_string(memory));
        }
    }
    return 0;
}

// A trial of hierarchy `h`: a group with limits, a forked child that joins it, removal.
std::string trial(const Hierarchy& h)
{
    const std::string path = h.base + "/grader-probe-" + std::to_string(::getpid()) + "-" + std::to_string(next_group++);
    if (::mkdir(path.c_str(), 0755) != 0) return "cannot create " + path + ": " + error_text(errno);
    std::string problem, what;
    if (int error = set_limits(path, h.v2, h.pids ? 64 : 0, h.memory ? (256u << 20) : 0, what)) {
        problem = "cannot write " + what + ": " + error_text(error);
    } else {
        const int procs = ::open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
        if (procs < 0) {
            problem = "cannot open " + path + "/cgroup.procs: " + error_text(errno);
        } else {
            const pid_t pid = ::fork();
            if (pid == 0) ::_exit(::write(procs, "0", 1) == 1 ? 0 : 1);
            int status = 0;
            if (pid < 0) {
                problem = "cannot fork: " + error_text(errno);
            } else {
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    problem = "a process cannot join " + path + " (writing its cgroup.procs failed)";
            }
            ::close(procs);
        }
    }
    for (int attempt = 0; attempt < 2000 && ::rmdir(path.c_str()) != 0 && errno == EBUSY; ++attempt)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return problem;
}

// The v2 group under which sandbox groups can hold `controllers` ("+pids +memory"): the grader's
// own group X when it hands them down or can be made to; else empty, with `problem` saying why.
std::string prepare_v2(const std::string& x, const std::vector<std::string>& wanted, std::string& problem)
{
    auto enabled = [&] {
        const auto on = words_of(read_small(x + "/cgroup.subtree_control"));
        return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& c) { return contains(on, c); });
    };
    std::string plus;
    for (const auto& controller : wanted) plus += (plus.empty() ? "+" : " +") + controller;
    if (enabled() || write_file(x + "/cgroup.subtree_control", plus) == 0) return x;

    // A group that holds processes cannot hand controllers down (but the root): move this process
    // into a leaf of its own, then try again; on failure, move back.
    const std::string leaf = x + "/grader-" + std::to_string(::getpid());
    if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
        problem = "cgroup v2: cannot create " + leaf + ": " + error_text(errno);
        return {};
    }
    if (int error = write_file(leaf + "/cgroup.procs", std::to_string(::getpid()))) {
        ::rmdir(leaf.c_str());
        problem = "cgroup v2: cannot move the grader into " + leaf + ": " + error_text(error);
        return {};
    }
    if (const int error = write_file(x + "/cgroup.subtree_control", plus); error == 0) return x;
    else
        problem = "cgroup v2: " + x + " cannot hand " + plus + " down to groups of the grader's (" +
                  error_text(error) +
                  ": it holds processes other than the grader); run grade as the only process of a group with "
                  "them delegated, e.g. systemd-run --scope -p Delegate=yes grade ...";
    write_file(x + "/cgroup.procs", std::to_string(::getpid()));
    ::rmdir(leaf.c_str());
    return {};
}

Detected detect()
{
    Detected found;
    const std::vector<Mount> mounts = parse_mountinfo(read_small("/proc/self/mountinfo"));
    const auto groups = parse_proc_cgroup(read_small("/proc/self/cgroup"));
    std::vector<std::string> problems;

    // cgroup v1: a hierarchy per controller (or one holding both).
    for (const char* controller : {"pids", "memory"}) {
        const std::string dir = own_group_directory(mounts, groups, controller);
        if (dir.empty()) continue;
        auto same = std::find_if(found.hierarchies.begin(), found.hierarchies.end(),
                                 [&](const Hierarchy& h) { return h.base == dir; });
        if (same == found.hierarchies.end()) same = found.hierarchies.insert(found.hierarchies.end(), Hierarchy{dir});
        (std::string(controller) == "pids" ? same->pids : same->memory) = true;
    }
    const bool v1_pids = std::any_of(found.hierarchies.begin(), found.hierarchies.end(), [](const Hierarchy& h) { return h.pids; });
    const bool v1_memory = std::any_of(found.hierarchies.begin(), found.hierarchies.end(), [](const Hierarchy& h) { return h.memory; });

    // cgroup v2 for what v1 does not have.
    if (!v1_pids || !v1_memory) {
        const std::string x = own_group_directory(mounts, groups, "");
        if (!x.empty()) {
            const auto available = words_of(read_small(x + "/cgroup.controllers"));
            std::vector<std::string> wanted;
            for (const char* controller : {"pids", "memory"}) {
                if ((std::string(controller) == "pids" ? v1_pids : v1_memory)) continue;
                if (contains(available, controller))
                    wanted.push_back(controller);
                else
                    problems.push_back(std::string("cgroup v2: the ") + controller +
                                       " controller is not enabled for the grader's group " + x +
                                       " (its parent's cgroup.subtree_control)");
            }
            if (!wanted.empty()) {
                std::string problem;
                const std::string base = prepare_v2(x, wanted, problem);
                if (base.empty())
                    problems.push_back(problem);
                else
                    found.hierarchies.push_back({base, true, contains(wanted, "pids"), contains(wanted, "memory")});
            }
        } else if (found.hierarchies.empty()) {
            problems.push_back("no cgroup file system with the pids or memory controller is mounted "
                               "(/proc/self/mountinfo)");
        }
    }

    // Each one tried: a group with limits that a process joins.
    std::vector<Hierarchy> usable;
    for (const auto& h : found.hierarchies) {
        remove_stale_groups(h.base);
        const std::string problem = trial(h);
        if (problem.empty())
            usable.push_back(h);
        else
            problems.push_back(std::string(h.v2 ? "cgroup v2: " : "cgroup v1: ") + problem +
                               (::geteuid() == 0 ? "" : " (the grader is not root)"));
    }
    found.hierarchies = usable;

    CgroupSupport& s = found.support;
    std::string v1, v2;
    for (const auto& h : found.hierarchies) {
        s.processes = s.processes || h.pids;
        s.memory = s.memory || h.memory;
        std::string what = h.pids && h.memory ? "pids and memory" : h.pids ? "pids" : "memory";
        (h.v2 ? v2 : v1) += std::string((h.v2 ? v2 : v1).empty() ? "" : ", ") + what + ": " + h.base;
    }
    if (!v1.empty()) s.how = "cgroup v1 (" + v1 + ")";
    if (!v2.empty()) s.how += (s.how.empty() ? "" : " and ") + std::string("cgroup v2 (") + v2 + ")";
    if (!s.processes || !s.memory) {
        for (const auto& problem : problems) s.why_not += (s.why_not.empty() ? "" : "; ") + problem;
        if (s.why_not.empty()) s.why_not = "no usable cgroup hierarchy";
    }
    return found;
}

const Detected& detected()
{
    static const Detected found = detect();
    return found;
}

}  // namespace

const CgroupSupport& cgroup_support()
{
    return detected().support;
}

std::unique_ptr<TreeGroup> TreeGroup::create(std::uint64_t max_processes, std::uint64_t max_memory_bytes,
                                             std::string& error)
{
    std::unique_ptr<TreeGroup> group(new TreeGroup);
    const std::string name = "grader-sandbox-" + std::to_string(::getpid()) + "-" + std::to_string(next_group++);
    for (const auto& h : detected().hierarchies) {
        const std::uint64_t processes = h.pids ? max_processes : 0;
        const std::uint64_t memory = h.memory ? max_memory_bytes : 0;
        if (processes == 0 && memory == 0) continue;
        const std::string path = h.base + "/" + name;
        if (::mkdir(path.c_str(), 0755) != 0) {
            error = "cannot create the control group " + path + ": " + error_text(errno);
            return nullptr;  // the destructor removes the groups made so far
        }
        group->dirs_.push_back({path, h.v2, processes > 0, memory > 0});
        std::string what;
        if (int failure = set_limits(path, h.v2, processes, memory, what)) {
            error = "cannot write " + what + ": " + error_text(failure);
            return nullptr;
        }
        const int fd = ::open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            error = "cannot open " + path + "/cgroup.procs: " + error_text(errno);
            return nullptr;
        }
        group->join_fds_.push_back(fd);
        if (processes > 0) group->max_processes_ = processes;
        if (memory > 0) group->max_memory_bytes_ = memory;
    }
    return group;
}

void TreeGroup::kill_all()
{
    for (const auto& dir : dirs_)
        if (dir.v2) write_file(dir.path + "/cgroup.kill", "1");  // Linux 5.14 on; the loop below otherwise
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    for (;;) {
        bool found = false;
        for (const auto& dir : dirs_) {
            std::istringstream pids(read_small(dir.path + "/cgroup.procs"));
            for (long pid; pids >> pid;)
                if (pid > 0) {
                    ::kill(static_cast<pid_t>(pid), SIGKILL);
                    found = true;
                }
        }
        if (!found || Clock::now() > deadline) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

bool TreeGroup::memory_limit_reached() const
{
    for (const auto& dir : dirs_)
        if (dir.memory &&
            flat_key(read_small(dir.path + (dir.v2 ? "/memory.events" : "/memory.oom_control")), "oom_kill") > 0)
            return true;
    return false;
}

bool TreeGroup::process_limit_reached() const
{
    for (const auto& dir : dirs_)
        if (dir.pids && flat_key(read_small(dir.path + "/pids.events"), "max") > 0) return true;
    return false;
}

TreeGroup::~TreeGroup()
{
    for (int fd : join_fds_) ::close(fd);
    if (dirs_.empty()) return;
    kill_all();
    // A group is removable once its processes have exited (zombies do not count).
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    for (const auto& dir : dirs_) {
        while (::rmdir(dir.path.c_str()) != 0 && errno == EBUSY && Clock::now() < deadline) {
            kill_all();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
}

}  // namespace harness

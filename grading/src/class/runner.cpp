// `grade class` and `grade class merge` (class_grading.hpp): the roster, one worker pool per GPU,
// each student graded by a child `grade`, resume and regrade, the class's files.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "class_internal.hpp"
#include "../formats/text.hpp"
#include "grading/class_grading.hpp"
#include "grading/command_line.hpp"
#include "grading/hidden_cases.hpp"
#include "grading/report.hpp"
#include "harness/process.hpp"
#include "harness/sandbox.hpp"
#include "harness/text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grading {

std::string clock_text(double seconds)
{
    const long s = std::lround(std::max(0.0, seconds));
    std::ostringstream text;
    if (s >= 3600) text << s / 3600 << ":" << std::setw(2) << std::setfill('0') << (s / 60) % 60;
    else text << s / 60;
    text << ":" << std::setw(2) << std::setfill('0') << s % 60;
    return text.str();
}

namespace {

using class_detail::number_text;

// Where OUT keeps how its class's folders were named on the first run (class_roster.hpp: RosterNaming).
std::string naming_file(const fs::path& output)
{
    return (output / "roster.json").string();
}

// A student's folder, locked by the class process that grades it: two `grade class` on one OUT
// (shards on a shared file system, or a second run by mistake) never grade one student at once.
class StudentLock {
public:
    explicit StudentLock(const fs::path& dir)
    {
        fd_ = ::open((dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~StudentLock()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    bool held() const { return fd_ >= 0; }
    StudentLock(const StudentLock&) = delete;
    StudentLock& operator=(const StudentLock&) = delete;

private:
    int fd_ = -1;
};

// "a, b, c (and 2 more)", at most 20 named.
std::string list_text(const std::vector<std::string>& items)
{
    std::string text;
    for (std::size_t k = 0; k < items.size() && k < 20; ++k) text += (k ? ", " : "") + items[k];
    if (items.size() > 20) text += " (and " + std::to_string(items.size() - 20) + " more)";
    return text;
}

// A student's record names their folder as it was; the same folder is the same name on disk, wherever
// the submissions are (moved, mounted elsewhere on another node, given by another path).
bool same_folder(const std::string& recorded, const std::string& source)
{
    return recorded.empty() || fs::path(recorded).filename() == fs::path(source).filename();
}

bool graded(const fs::path& dir)
{
    return read_grade_results((dir / student_files::results).string()).has_value();
}

// Moves the student's last results into previous/<n>/ (n one past the highest there), results.json
// first: stopped in the middle, the student is not graded any more and is graded on the next run.
void keep_previous(const fs::path& dir)
{
    int highest = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir / student_files::previous, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (!n.empty() && n.size() < 9 && n.find_first_not_of("0123456789") == std::string::npos)
            highest = std::max(highest, std::stoi(n));
    }
    const fs::path target = dir / student_files::previous / std::to_string(highest + 1);
    fs::create_directories(target);
    std::vector<std::string> files = {student_files::results};
    for (const auto& [option, file] : student_files::formats())
        if (file != student_files::results) files.push_back(file);
    files.push_back(student_files::log);
    files.push_back(student_files::record);
    for (const auto& file : files)
        if (fs::exists(fs::symlink_status(dir / file, ec))) fs::rename(dir / file, target / file);
}

// The last line of grade's log that says something, for a student whose grade failed.
std::string last_log_line(const fs::path& log)
{
    const std::string tail = harness::read_file_tail(log.string(), 4096);
    std::istringstream in(tail);
    std::string line, last;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos && line.find("nothing was graded") == std::string::npos)
            last = line;
    return std::string(harness::utf8_prefix(harness::printable_text(last), 300));
}

// StudentRecord::grading for a class graded with `grade_args` and the hidden cases' secret named
// `secret_id` (HiddenCaseSecret::id(), empty without one): the secret decides the hidden cases'
// inputs as much as the rubric does, and comes from the environment or a file the arguments only name.
std::string grading_digest(const std::vector<std::string>& grade_args, const std::string& secret_id)
{
    static const std::set<std::string> speed_only = {"--jobs", "--parallel", "--gpu-lock-dir"};
    std::string text;
    for (std::size_t k = 0; k < grade_args.size(); ++k) {
        const std::string& arg = grade_args[k];
        const std::string option = arg.substr(0, arg.find('='));
        if (speed_only.count(option)) {
            if (option == arg) ++k;  // its value is the next argument
            continue;
        }
        text += arg + '\0';
        std::string rubric;
        if (arg == "--rubric" && k + 1 < grade_args.size()) rubric = grade_args[k + 1];
        if (option == "--rubric" && option != arg) rubric = arg.substr(option.size() + 1);
        if (!rubric.empty()) {
            std::ifstream in(rubric, std::ios::binary);
            text += std::string(std::istreambuf_iterator<char>(in), {}) + '\0';
        }
    }
    if (!secret_id.empty()) text += "secret " + secret_id + '\0';
    const auto digest = sha256(text);
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (std::size_t k = 0; k < 8; ++k) hex += {digits[digest[k] >> 4], digits[digest[k] & 15]};
    return hex;
}

struct Job {
    RosterEntry entry;
    bool regrade = false;
};

struct Setting {
    const ClassCommand& command;
    fs::path out;
    std::string executable;
    std::string layout;
    std::vector<std::string> extra_args;  // added to every student's grade (--jobs)
    std::string grading;                  // StudentRecord::grading
};

// Grades one student with a child grade on `gpu`; returns its record, written to its folder.
StudentRecord grade_student(const Setting& setting, const Job& job, const ClassGpu& gpu)
{
    const ClassCommand& command = setting.command;
    const fs::path dir = setting.out / "students" / job.entry.name;
    const fs::path pending = dir / student_files::pending;
    const fs::path work = dir / student_files::work;
    if (job.regrade && fs::exists(fs::symlink_status(dir / student_files::results))) keep_previous(dir);
    std::error_code ignored;
    fs::remove_all(pending, ignored);
    fs::remove_all(work, ignored);
    fs::create_directories(pending);

    StudentRecord record;
    record.name = job.entry.name;
    record.source = job.entry.source;
    record.layout = setting.layout;
    record.submitters = job.entry.submitters;
    record.gpu = gpu.visible;
    record.gpu_label = gpu.label;
    record.started_at = formats::utc_now();
    record.grading = setting.grading;
    if (command.shard_count > 1)
        record.shard = std::to_string(command.shard_index) + "/" + std::to_string(command.shard_count);
    write_file_atomically((dir / student_files::record).string(), to_json(record).dump(2) + "\n");

    harness::SpawnOptions spawn;
    spawn.argv = {setting.executable, "--submission", job.entry.source, "--work-dir", work.string()};
    for (const auto& [option, file] : student_files::formats()) {
        spawn.argv.push_back(option);
        spawn.argv.push_back((pending / file).string());
    }
    spawn.argv.insert(spawn.argv.end(), command.grade_args.begin(), command.grade_args.end());
    spawn.argv.insert(spawn.argv.end(), setting.extra_args.begin(), setting.extra_args.end());
    spawn.extra_env = {"CUDA_VISIBLE_DEVICES=" + gpu.visible, "NO_COLOR=1"};
    // The hidden cases' secret, when the class had it from its environment (a --secret-file is among
    // grade_args): in the child grade's environment, which it takes out before anything runs
    // (grading/hidden_cases.hpp); never on a command line, which /proc shows to every user.
    const auto& secret = command.options.request.hidden_secret;
    if (secret && secret->source() == HiddenCaseSecret::Source::environment)
        spawn.extra_env.push_back(std::string(secret_variable) + "=" + secret->text());
    spawn.output_file = (dir / student_files::log).string();
    spawn.limits.max_file_bytes = 0;  // grade sets its children's limits itself
    // The child dies with this thread's process: SIGKILL when the class is killed, however.
    const pid_t parent = ::getpid();
    spawn.child_setup = [parent]() -> int {
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return errno;
        return ::getppid() == parent ? 0 : ESRCH;
    };

    const auto start = std::chrono::steady_clock::now();
    harness::ExitStatus status;
    try {
        harness::Child child = harness::Child::spawn(spawn);
        status = child.wait_until(start + command.student_time_limit);
    } catch (const std::exception& e) {
        status.kind = harness::ExitStatus::Kind::failed_to_start;
        status.error = e.what();
    }
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool exited = status.kind == harness::ExitStatus::Kind::exited;
    record.exit_code = exited ? status.code : -1;
    const bool has_results = read_grade_results((pending / student_files::results).string()).has_value();
    if (exited && (status.code == 0 || status.code == 1) && has_results) {
        record.outcome = "graded";
    } else {
        record.outcome = "not_graded";
        switch (status.kind) {
        case harness::ExitStatus::Kind::timed_out:
            record.message = "its grade ran past --student-time-limit (" +
                             std::to_string(command.student_time_limit.count()) + " s) and was stopped";
            break;
        case harness::ExitStatus::Kind::failed_to_start:
            record.message = "its grade could not start: " + status.error;
            break;
        case harness::ExitStatus::Kind::signaled:
            record.message = "its grade died: " + status.describe();
            break;
        case harness::ExitStatus::Kind::exited:
            record.message = "its grade ended with exit code " + std::to_string(status.code) +
                             (has_results ? "" : ", without results");
            break;
        }
        const std::string last = last_log_line(dir / student_files::log);
        if (!last.empty()) record.message += ": " + last;
    }
    write_file_atomically((dir / student_files::record).string(), to_json(record).dump(2) + "\n");
    if (record.outcome == "graded")
        for (const auto& [option, file] : student_files::formats())  // results.json last
            if (fs::exists(pending / file, ignored)) fs::rename(pending / file, dir / file);
    fs::remove_all(pending, ignored);
    if (!command.keep_work) fs::remove_all(work, ignored);
    return record;
}

// The console's line for a finished student, and the class's progress.
class Progress {
public:
    Progress(std::ostream& out, int total, bool quiet) : out_(out), total_(total), quiet_(quiet) {}

    void done(const StudentRecord& record, const std::optional<json>& results)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++done_;
        std::string what;
        if (!results) {
            ++not_graded_;
            what = "NOT GRADED: " + record.message;
        } else {
            int failed_cases = 0;
            for (const auto& e : results->at("exercises"))
                for (const auto& c : e.at("cases")) failed_cases += c.value("status", "") != "pass";
            if (!class_detail::every_case_passed(*results)) ++failed_;
            what = number_text(class_detail::number_or_zero(*results, "points")) + "/" +
                   number_text(class_detail::number_or_zero(*results, "max_points")) + " points" +
                   (failed_cases ? ", " + std::to_string(failed_cases) + " case(s) did not pass" : "");
        }
        if (quiet_) return;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        const double left = elapsed / done_ * (total_ - done_);
        const int width = static_cast<int>(std::to_string(total_).size());
        out_ << "[" << std::setw(width) << done_ << "/" << total_ << "] " << record.name << ": "
             << harness::printable_text(what) << " (GPU " << harness::printable_text(record.gpu_label) << ", "
             << number_text(record.seconds, 1) << " s)  | " << failed_ << " failed, " << not_graded_
             << " not graded, " << clock_text(elapsed) << " elapsed, about " << clock_text(left) << " left"
             << std::endl;
    }
    // A student of the list that this run did not grade after all (`why`).
    void skipped(const std::string& name, const std::string& why)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++done_;
        if (quiet_) return;
        const int width = static_cast<int>(std::to_string(total_).size());
        out_ << "[" << std::setw(width) << done_ << "/" << total_ << "] " << name << ": " << why << std::endl;
    }
    double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

private:
    std::ostream& out_;
    std::mutex mutex_;
    const int total_;
    const bool quiet_;
    int done_ = 0, failed_ = 0, not_graded_ = 0;
    const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

bool inside(const fs::path& path, const fs::path& dir)
{
    const std::string p = path.string(), d = dir.string();
    return p == d || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '/');
}

std::optional<std::string> environment(const char* name)
{
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
}

std::optional<std::string> nvidia_smi_list()
{
    try {
        const auto run = harness::run_command({"nvidia-smi", "-L"}, std::chrono::seconds(30));
        if (run.status.ok()) return run.output;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

// An entry of OUT/students/ (or a shard's) that is a student's folder: a real folder (no link) with
// a name the roster gives.
bool is_student_folder(const fs::directory_entry& entry)
{
    return is_student_name(entry.path().filename().string()) && !entry.is_symlink() && entry.is_directory();
}

// Every student folder below OUT/students/, by name; `odd`: the other folders and links there that are
// not hidden ("alice (copy)", a link), which no student's is.
std::vector<StudentFolder> read_students(const fs::path& out, std::vector<std::string>& odd)
{
    std::vector<StudentFolder> folders;
    std::error_code ec;
    for (fs::directory_iterator it(out / "students", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name[0] == '.') continue;
        if (!is_student_folder(*it)) {
            if (it->is_symlink() || it->is_directory()) odd.push_back(class_detail::one_line_text(name));
            continue;
        }
        folders.push_back(read_student_folder(it->path().string()));
    }
    std::sort(odd.begin(), odd.end());
    return folders;
}

int write_class(const fs::path& out, const std::vector<StudentFolder>& folders, const std::vector<std::string>& exercises,
                std::ostream& console, std::ostream& err)
{
    const json results = class_results(folders, exercises);
    try {
        write_class_files(out.string(), results);
    } catch (const std::exception& e) {
        err << "grade class: " << harness::printable_text(e.what()) << "\n";
        return exit_environment_error;
    }
    const json& s = results.at("summary");
    console << "class results: " << (out / "class.csv").string() << ", " << (out / "results.json").string() << ", "
            << (out / "report.html").string() << "\n"
            << s.at("students").get<int>() << " students: " << s.at("passed").get<int>() << " passed every case, "
            << s.at("failed").get<int>() << " failed some, " << s.at("not_graded").get<int>() << " not graded\n";
    return s.at("passed").get<int>() == s.at("students").get<int>() ? exit_success : exit_graded_with_failures;
}

}  // namespace

int run_class(const ClassCommand& command, const std::string& grade_executable, const DeviceProbe& probe,
              std::ostream& out, std::ostream& err)
{
    const auto refuse = [&err](const std::string& why, int code) {
        err << "grade class: " << why << "\n";
        err << "grade class: nothing was graded\n";
        return code;
    };
    // Named as on the class's first run (class_roster.hpp: RosterNaming).
    const std::optional<RosterNaming> earlier = read_roster_naming(naming_file(fs::absolute(command.output_dir)));
    Roster roster;
    try {
        roster = discover_roster(command.submissions, earlier);
    } catch (const RosterError& e) {
        return refuse(e.what(), exit_usage_error);
    }
    std::error_code ec;
    const fs::path submissions = fs::weakly_canonical(command.submissions, ec);
    const fs::path output = fs::weakly_canonical(fs::absolute(command.output_dir), ec);
    if (inside(output, submissions) || inside(submissions, output))
        return refuse("--output-dir " + command.output_dir + " and --submissions " + command.submissions +
                          " overlap\n  (write the results outside the submissions' folder)",
                      exit_usage_error);
    std::set<std::string> names;
    for (const auto& s : roster.students) names.insert(s.name);
    for (const auto& name : command.regrade)
        if (!names.count(name))
            return refuse("--regrade " + harness::printable_text(name) + ": no such student in " + command.submissions +
                              "\n  (names as in " + command.output_dir + "/students/)",
                          exit_usage_error);

    const std::vector<RosterEntry> share = shard_of(roster.students, command.shard_index, command.shard_count);
    const std::string shard_text = std::to_string(command.shard_index) + "/" + std::to_string(command.shard_count);
    if (command.shard_count > 1 && share.empty()) {
        for (const auto& note : roster.notes) out << "grade class: " << note << "\n";
        out << "grade class: shard " << shard_text << " has none of the " << roster.students.size()
            << " students (a student's shard is the hash of their folder's name: in a small class some shards get "
               "none); nothing to grade\n";
        return exit_success;
    }

    // This machine can grade at all: one grading's preflight, once, before any student.
    fs::create_directories(output / "students", ec);
    if (ec) return refuse("--output-dir " + command.output_dir + ": cannot create it (" + ec.message() + ")", exit_environment_error);
    if (!earlier) write_file_atomically(naming_file(output), naming_json(roster));
    GradeCommand one;
    one.options = command.options;
    one.options.environment.work_dir = (output / "students").string();
    one.output = (output / "results.json").string();  // the class's own: no student's folder can be it
    one.no_sandbox = command.no_sandbox;
    one.bwrap = command.bwrap;
    std::vector<std::string> problems = preflight(one, probe);
    if (!command.no_sandbox) {
        std::string why;
        if (!harness::Sandbox::find(why, command.bwrap))
            problems.insert(problems.begin(), "cannot sandbox submitted code: " + why +
                                                  "\n  (install Debian's bubblewrap package, or pass --no-sandbox for "
                                                  "trusted code only)");
    }
    GpuChoice gpus;
    if (problems.empty()) {
        const std::optional<std::string> listed = nvidia_smi_list();
        gpus = choose_gpus(command.gpus, command.options.environment.toolchain, probe,
                           environment("CUDA_VISIBLE_DEVICES"), listed);
        if (!gpus.error.empty()) problems.push_back(gpus.error);
    }
    if (!problems.empty()) {
        for (const auto& p : problems) err << "grade class: " << p << "\n";
        err << "grade class: nothing was graded\n";
        return exit_environment_error;
    }

    const std::set<std::string> regrade(command.regrade.begin(), command.regrade.end());
    std::vector<Job> jobs;
    int already = 0;
    std::vector<std::string> moved, other_options;
    const auto& secret = command.options.request.hidden_secret;
    const std::string grading = grading_digest(command.grade_args, secret ? secret->id() : std::string());
    for (const auto& entry : share) {
        const fs::path dir = output / "students" / entry.name;
        // Results of another folder under this name (a folder added since took it): graded again, the
        // other's results kept in previous/.
        const StudentFolder earlier = read_student_folder(dir.string());
        const bool other_source = earlier.results && !same_folder(earlier.record.source, entry.source);
        if (other_source) moved.push_back(entry.name + " held the results of " + earlier.record.source);
        // A results.json that is not grade's (edited by hand, cut short): graded again, the file kept.
        const bool unreadable = !earlier.results && fs::exists(fs::symlink_status(dir / student_files::results, ec));
        if (unreadable)
            moved.push_back(entry.name + "/" + student_files::results + " is not grade's results (edited by hand?)");
        if (regrade.count(entry.name) || other_source || !earlier.results) {
            jobs.push_back({entry, regrade.count(entry.name) > 0 || other_source || unreadable});
        } else {
            ++already;
            if (!earlier.record.grading.empty() && earlier.record.grading != grading)
                other_options.push_back(entry.name);
        }
    }
    // Folders of students no longer in the submissions (withdrawn, or renamed): kept, not in the class.
    std::vector<std::string> gone;
    for (fs::directory_iterator it(output / "students", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (is_student_folder(*it) && !names.count(name))
            gone.push_back(name);
    }
    std::sort(gone.begin(), gone.end());
    for (const auto& note : roster.notes) out << "grade class: " << note << "\n";
    if (command.shard_count > 1)
        for (const auto& entry : roster.students)
            if (regrade.count(entry.name) && shard_of_student(entry, command.shard_count) != command.shard_index)
                out << "grade class: --regrade " << entry.name << ": in shard "
                    << shard_of_student(entry, command.shard_count) << "/" << command.shard_count
                    << ", regraded there, not in this one\n";
    for (const auto& note : moved)
        out << "grade class: " << class_detail::one_line_text(note) << ": graded again, those kept in previous/\n";
    if (!other_options.empty())
        out << "grade class: " << other_options.size()
            << " student(s) graded before with other grading options or another rubric keep those results: "
            << list_text(other_options) << "\n  (--regrade NAME,... grades them with these)\n";
    if (!gone.empty())
        out << "grade class: not students of " << command.submissions
            << " any more, left out of the class's files: " << class_detail::one_line_text(list_text(gone))
            << " (their folders are kept in " << (output / "students").string() << ")\n";
    const int workers = static_cast<int>(gpus.gpus.size()) * command.per_gpu;
    out << "grade class: " << roster.students.size() << " students (" << to_string(roster.layout) << " layout)";
    if (command.shard_count > 1)
        out << ", shard " << command.shard_index << "/" << command.shard_count << ": " << share.size();
    out << "; " << already << " already graded, " << jobs.size() << " to grade on " << gpus.gpus.size()
        << " GPU(s), " << command.per_gpu << " at a time on each (" << gpus.note << ")\n";
    for (const auto& gpu : gpus.gpus) out << "grade class: GPU " << harness::printable_text(gpu.label) << "\n";
    out << std::flush;

    Setting setting{command, output, grade_executable, to_string(roster.layout), {}, grading};
    // Compiles: the machine's cores shared by the gradings at once, unless --jobs says.
    bool jobs_given = false;
    for (const auto& arg : command.grade_args) jobs_given |= arg == "--jobs" || arg.rfind("--jobs=", 0) == 0;
    if (!jobs_given) {
        const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        setting.extra_args = {"--jobs", std::to_string(std::max(2, (cores + workers - 1) / std::max(1, workers)))};
    }

    Progress progress(out, static_cast<int>(jobs.size()), command.quiet);
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    std::mutex error_mutex;
    std::vector<std::string> errors;
    for (const auto& gpu : gpus.gpus)
        for (int k = 0; k < command.per_gpu; ++k)
            threads.emplace_back([&, gpu] {
                for (std::size_t j = next++; j < jobs.size(); j = next++) {
                    const fs::path dir = output / "students" / jobs[j].entry.name;
                    try {
                        fs::create_directories(dir);
                        StudentLock lock(dir);
                        if (!lock.held()) {
                            std::lock_guard<std::mutex> guard(error_mutex);
                            errors.push_back(jobs[j].entry.name + " is being graded by another grade class; left to it");
                            continue;
                        }
                        // Graded by another grade class on this OUT between the roster and the lock.
                        if (!jobs[j].regrade && graded(dir)) {
                            progress.skipped(jobs[j].entry.name, "graded meanwhile by another grade class");
                            continue;
                        }
                        const StudentRecord record = grade_student(setting, jobs[j], gpu);
                        progress.done(record, read_grade_results((dir / student_files::results).string()));
                    } catch (const std::exception& e) {
                        std::lock_guard<std::mutex> guard(error_mutex);
                        errors.push_back(jobs[j].entry.name + ": " + harness::printable_text(e.what()));
                    }
                }
            });
    for (auto& t : threads) t.join();
    for (const auto& e : errors) err << "grade class: " << e << "\n";
    out << "grade class: graded " << jobs.size() << " student(s) in " << clock_text(progress.elapsed()) << "\n";

    std::vector<StudentFolder> folders;
    for (const auto& entry : share)
        folders.push_back(read_student_folder((output / "students" / entry.name).string()));
    int code = exit_success;
    if (command.shard_count > 1) {
        out << "grade class: shard " << command.shard_index << "/" << command.shard_count
            << " done; once every shard is: grade class merge --output-dir " << command.output_dir << "\n";
        const json summary = class_results(folders, command.options.request.exercises).at("summary");
        code = summary.at("passed") == summary.at("students") ? exit_success : exit_graded_with_failures;
    } else {
        code = write_class(output, folders, command.options.request.exercises, out, err);
    }
    return code == exit_success && !errors.empty() ? exit_graded_with_failures : code;
}

namespace {

// N of a record's "I/N" (0: graded whole, or not of that form).
int shard_count_of(const std::string& shard)
{
    const auto slash = shard.find('/');
    if (slash == std::string::npos || slash + 1 >= shard.size() || shard.size() - slash > 7) return 0;
    const std::string n = shard.substr(slash + 1);
    return n.find_first_not_of("0123456789") == std::string::npos ? std::stoi(n) : 0;
}

// A graded student's folder for a message: "DIR (shard 0/2, started T, 7 points)".
std::string graded_folder_text(const fs::path& dir)
{
    const StudentFolder f = read_student_folder(dir.string());
    std::string text = dir.string() + " (";
    if (!f.record.shard.empty()) text += "shard " + f.record.shard + ", ";
    text += "started " + (f.record.started_at.empty() ? std::string("?") : f.record.started_at);
    if (f.results) text += ", " + number_text(class_detail::number_or_zero(*f.results, "points")) + " points";
    return class_detail::one_line_text(text + ")");
}

bool same_bytes(const fs::path& a, const fs::path& b)
{
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    if (!x || !y) return false;
    return std::string(std::istreambuf_iterator<char>(x), {}) == std::string(std::istreambuf_iterator<char>(y), {});
}

// Copies SHARD/students/<name>/ into OUT/students/ for every graded student that OUT lacks; a student
// graded in OUT and in the shard (or in two shards) keeps the first, and each such is said in `twice`.
void copy_shard(const fs::path& shard, const fs::path& output, std::vector<std::string>& twice)
{
    std::error_code ec;
    for (fs::directory_iterator it(shard / "students", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!is_student_folder(*it)) continue;
        const fs::path target = output / "students" / name;
        if (!graded(it->path())) continue;
        if (graded(target)) {
            // The same grading (a merge run again) is no duplicate.
            if (!same_bytes(it->path() / student_files::results, target / student_files::results))
                twice.push_back(class_detail::one_line_text(name) + " was graded twice: kept " +
                                graded_folder_text(target) + ", left out " + graded_folder_text(it->path()));
            continue;
        }
        // Copied beside, then renamed in: a merge stopped in the middle leaves no half folder.
        const fs::path staging = output / "students" / ("." + name + ".merging");
        fs::remove_all(staging, ec);
        fs::create_directories(staging);
        for (fs::directory_iterator file(it->path(), ec), files_end; !ec && file != files_end; file.increment(ec)) {
            const std::string file_name = file->path().filename().string();
            if (file_name == student_files::work || file_name == student_files::pending || file_name == ".lock" ||
                file->is_symlink())
                continue;
            fs::copy(file->path(), staging / file_name, fs::copy_options::recursive | fs::copy_options::skip_symlinks);
        }
        fs::remove_all(target, ec);
        fs::rename(staging, target);
    }
}

}  // namespace

int run_class_merge(const ClassMergeCommand& command, std::ostream& out, std::ostream& err)
{
    std::error_code ec;
    const fs::path output = fs::absolute(command.output_dir);
    std::optional<Roster> roster;
    if (!command.submissions.empty()) {
        try {
            roster = discover_roster(command.submissions, read_roster_naming(naming_file(output)));
        } catch (const RosterError& e) {
            err << "grade class merge: " << e.what() << "\n";
            return exit_usage_error;
        }
    }
    fs::create_directories(output / "students", ec);
    if (ec) {
        err << "grade class merge: --output-dir " << command.output_dir << ": cannot create it (" << ec.message() << ")\n";
        return exit_environment_error;
    }
    std::vector<std::string> twice;
    for (const auto& shard_text : command.shard_dirs) {
        const fs::path shard = fs::absolute(shard_text);
        if (!fs::is_directory(shard / "students", ec)) {
            err << "grade class merge: " << shard_text << " has no students/ folder\n  (give the --output-dir of "
                << "each shard)\n";
            return exit_usage_error;
        }
        if (fs::equivalent(shard, output, ec)) continue;
        copy_shard(shard, output, twice);
    }
    std::vector<std::string> odd;
    std::vector<StudentFolder> folders = read_students(output, odd);
    if (!odd.empty())
        out << "grade class merge: not students' folders, left out: " << list_text(odd) << " (in "
            << (output / "students").string() << ")\n";
    if (folders.empty()) {
        err << "grade class merge: no students in " << (output / "students").string() << "\n";
        return exit_usage_error;
    }

    // The shards' count, from the records: students a task graded say "I/N".
    std::set<int> counts;
    std::map<std::string, int> per_shard;
    for (const auto& f : folders) {
        if (const int n = shard_count_of(f.record.shard)) counts.insert(n);
        ++per_shard[f.record.shard];
    }
    const int count = counts.size() == 1 ? *counts.begin() : 0;
    if (counts.size() > 1) {
        std::string list;
        for (int n : counts) list += (list.empty() ? "" : ", ") + std::to_string(n);
        out << "grade class merge: students were graded in shards of different counts (N = " << list
            << "): each student once is all that matters\n";
    }

    std::vector<std::string> problems = twice;
    if (roster) {
        // The class is the roster: each of its students by name, graded or not; folders of OUT that are
        // not in it (a student removed since, a name that changed) are left out of the class's files.
        std::map<std::string, StudentFolder> by_name;
        for (auto& f : folders) by_name.emplace(f.record.name, std::move(f));
        std::vector<StudentFolder> kept;
        std::vector<std::string> missing;
        for (const auto& entry : roster->students) {
            auto found = by_name.find(entry.name);
            if (found != by_name.end() && !same_folder(found->second.record.source, entry.source)) {
                problems.push_back(entry.name + " in " + (output / "students").string() + " holds the results of " +
                                   class_detail::one_line_text(found->second.record.source) + ", not of " +
                                   class_detail::one_line_text(entry.source) + ": left out");
                by_name.erase(found);
                found = by_name.end();
            }
            if (found != by_name.end()) {
                kept.push_back(std::move(found->second));
                by_name.erase(found);
                continue;
            }
            StudentFolder absent;
            absent.record.name = entry.name;
            absent.record.source = entry.source;
            absent.record.layout = to_string(roster->layout);
            absent.record.submitters = entry.submitters;
            absent.record.outcome = "not_graded";
            const std::string shard = count > 1
                                          ? std::to_string(shard_of_student(entry, count)) + "/" + std::to_string(count)
                                          : std::string();
            absent.record.message =
                "graded by no shard" + (shard.empty() ? std::string() : " (its shard: " + shard + ")");
            missing.push_back(entry.name + (shard.empty() ? "" : " (shard " + shard + ")"));
            kept.push_back(std::move(absent));
        }
        if (!missing.empty())
            problems.push_back(std::to_string(missing.size()) + " of the " + std::to_string(roster->students.size()) +
                               " students of " + command.submissions +
                               " are in no shard's results: " + list_text(missing) +
                               "\n  (grade them: grade class --shard I/N --submissions " + command.submissions +
                               " --output-dir " + command.output_dir + " with the same options, then merge again)");
        if (!by_name.empty()) {
            std::vector<std::string> left;
            for (const auto& [name, f] : by_name) left.push_back(name);
            out << "grade class merge: left out of the class, not students of " << command.submissions << ": "
                << list_text(left) << " (their folders are kept in " << (output / "students").string() << ")\n";
        }
        folders = std::move(kept);
    } else {
        std::string line;
        for (const auto& [shard, n] : per_shard)
            line += (line.empty() ? "" : ", ") + (shard.empty() ? std::string("graded whole") : "shard " + shard) +
                    ": " + std::to_string(n);
        out << "grade class merge: " << folders.size() << " students (" << line << ")\n";
        for (int i = 0; i < count; ++i)
            if (!per_shard.count(std::to_string(i) + "/" + std::to_string(count)))
                out << "grade class merge: no student of shard " << i << "/" << count
                    << " (an empty share, or its task has not run; --submissions DIR names who is missing)\n";
        // One folder graded under two names (its name changed between runs: a folder added since).
        std::map<std::string, std::vector<std::string>> names_by_source;
        for (const auto& f : folders)
            if (f.results && !f.record.source.empty()) names_by_source[f.record.source].push_back(f.record.name);
        for (const auto& [source, names] : names_by_source)
            if (names.size() > 1)
                problems.push_back("the folder " + class_detail::one_line_text(source) + " was graded as " +
                                   list_text(names) + " (its name changed between runs); give --submissions DIR " +
                                   "to keep only the roster's name");
    }
    // Students graded with other options or rubrics than each other's (a task run again after a fix).
    std::map<std::string, std::vector<std::string>> by_grading;
    for (const auto& f : folders)
        if (f.results && !f.record.grading.empty()) by_grading[f.record.grading].push_back(f.record.name);
    if (by_grading.size() > 1) {
        std::string groups;
        for (const auto& [digest, names] : by_grading)
            groups += "\n  " + digest + ": " + std::to_string(names.size()) + " (" + list_text(names) + ")";
        problems.push_back("the students were graded with " + std::to_string(by_grading.size()) +
                           " different sets of grading options or rubrics (record.json's \"grading\"):" + groups +
                           "\n  (--regrade the students of the old ones)");
    }
    for (const auto& p : problems) err << "grade class merge: " << p << "\n";
    const int code = write_class(output, folders, {}, out, err);
    return code == exit_success && !problems.empty() ? exit_graded_with_failures : code;
}

}  // namespace grading

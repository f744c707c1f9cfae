// grade: the command instructors, students and CI run. See README.md and `grade --help`.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <thread>

#include <unistd.h>

#include "grading/bench.hpp"
#include "grading/class_grading.hpp"
#include "grading/command_line.hpp"
#include "grading/console.hpp"
#include "grading/device_probe.hpp"
#include "grading/first_fix.hpp"
#include "grading/formats.hpp"
#include "grading/gpu_monitor.hpp"
#include "grading/grader.hpp"
#include "grading/preflight.hpp"
#include "grading/work_directory.hpp"
#include "grading/report.hpp"
#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/gpu_lock.hpp"
#include "harness/sandbox.hpp"
#include "harness/text.hpp"

namespace fs = std::filesystem;

namespace {

// This executable's own path. argv[0] is only what the shell was given ("grade", found on the
// PATH, says nothing of where lib/ is); the kernel's link is where the file really is.
std::string own_executable(const char* argv0)
{
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::weakly_canonical(argv0).string() : self.string();
}

// The defaults that depend on where grade is: the runner object and the reference runner sit in
// its build's lib/ and bin/, and compiles use every core. `typed` (argv[0]) is how reports tell a
// student to rerun a case: the command as they ran it.
grading::GradeOptions defaults_for(const std::string& typed, const std::string& executable)
{
    grading::GradeOptions options;
    options.request.grade_command = typed;
    options.environment.toolchain = grading::default_toolchain(executable);
    options.request.compile_jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // Side by side: two exercises per three cores (each has a runner and a reference runner, busy on
    // the CPU only while they make inputs and check outputs), 4 to 16: the ten of the course at once
    // on a 16-core machine.
    options.request.parallel_exercises = std::clamp(options.request.compile_jobs * 2 / 3, 4, 16);
    // Always named, so that the preflight reports a missing one instead of silently grading
    // without speed points; --no-reference-timing clears it.
    options.environment.reference_runner = (fs::path(executable).parent_path() / "grader_reference_runner").string();
    return options;
}

void list_cases(const std::vector<std::string>& names)
{
    for (const auto& name : names) {
        const harness::Exercise& e = *harness::find_exercise(name);
        const auto cases = harness::cases_for(e);
        std::cout << e.name << ": " << e.summary << "\n  " << e.signature << "\n";
        for (const auto& c : cases)
            std::cout << "    " << std::left << std::setw(28) << c.label << " seed " << harness::hex64(c.seed)
                      << (c.timed ? "  (timed)" : "") << "\n";
    }
}

// With --build-only, exit code 0 means every submitted file built and passed the build checks.
// A file whose points the rubric withholds whatever its cases do (no kernel launched, ...) does not.
bool every_file_built(const grading::GradeReport& report, const grading::Rubric& rubric)
{
    return std::all_of(report.exercises.begin(), report.exercises.end(), [&](const grading::ExerciseResult& e) {
        return e.status == grading::ExerciseStatus::not_submitted ||
               (e.status == grading::ExerciseStatus::built && e.library_use.empty() &&
                !grading::points_withheld(rubric, e));
    });
}

// Exit code 0 means every case passed; speed points are left out, since they move with the
// machine's load, and a single rerun case (--case) cannot earn them at all.
bool every_case_passed(const grading::GradeReport& report, const grading::Rubric& rubric)
{
    return std::all_of(report.exercises.begin(), report.exercises.end(), [&](const grading::ExerciseResult& e) {
        return e.status == grading::ExerciseStatus::graded && e.library_use.empty() &&
               !grading::points_withheld(rubric, e) &&
               std::all_of(e.cases.begin(), e.cases.end(),
                           [](const grading::CaseResult& c) { return c.status == grading::CaseStatus::pass; });
    });
}

int run_grade(grading::GradeCommand command)
{
    grading::GradeRequest& request = command.options.request;
    grading::GradingEnvironment& environment = command.options.environment;
    if (command.list) return list_cases(request.exercises), grading::exit_success;

    // Everything that would make the grading meaningless is checked first, and reported at once:
    // each problem with what to do, then exit code 3, with nothing built, run or written.
    // The CUDA query, once: the preflight checks the device, the GPU lock is named after it.
    std::optional<grading::DeviceState> device;
    const grading::DeviceProbe probe_once = [&device] {
        if (!device) device = grading::probe_cuda_device();
        return *device;
    };
    std::vector<std::string> problems = grading::preflight(command, probe_once);
    // Submitted code runs only inside the sandbox; a machine where it cannot run is an error of the
    // grading environment, never a reason to run the code unprotected or to score it zero.
    std::optional<harness::Sandbox> sandbox;
    if (!command.no_sandbox) {
        std::string why;
        sandbox = harness::Sandbox::find(why, command.bwrap);
        if (!sandbox)
            problems.insert(problems.begin(), "cannot sandbox submitted code: " + why +
                                                  "\n  (install Debian's bubblewrap package, or pass --no-sandbox "
                                                  "for trusted code only)");
        else
            environment.sandbox = &*sandbox;
    }
    // Timed cases of every grading on this machine take turns on the GPU (harness/gpu_lock.hpp).
    std::optional<harness::GpuLock> gpu_lock;
    // The grader's checking waits while any grading on this GPU times repetitions.
    std::optional<harness::QuietWhileTimed> checking_gate;
    struct ClearGate {
        ~ClearGate() { harness::set_chunk_gate(nullptr); }
    } clear_gate_before_the_lock_goes;
    // --build-only runs nothing on the GPU: no lock, no device node, no monitor.
    const bool uses_gpu = !request.build_only;
    if (problems.empty() && uses_gpu) {
        const grading::DeviceState gpu = grading::grading_device(environment.toolchain, probe_once);
        try {
            gpu_lock.emplace(harness::gpu_lock_path(command.gpu_lock_dir, gpu.uuid.empty() ? gpu.name : gpu.uuid));
            environment.gpu_lock = &*gpu_lock;
            checking_gate.emplace(*gpu_lock);
            harness::set_chunk_gate(&*checking_gate);
        } catch (const std::exception& e) {
            problems.push_back(std::string(e.what()) +
                               "\n  (pass --gpu-lock-dir with a directory that every grading on this machine can use)");
        }
    }
    // Submitted code sees the graded GPU alone (CUDA_VISIBLE_DEVICES picks it for grade, but
    // the sandbox clears the environment, and a runner could unset it anyway): the sandbox binds
    // only its /dev/nvidiaN. A machine with several GPUs where that node cannot be told is refused.
    if (problems.empty() && sandbox && uses_gpu) {
        const grading::DeviceState gpu = grading::grading_device(environment.toolchain, probe_once);
        environment.gpu_node = harness::gpu_device_node(gpu.pci_bus_id);
        if (environment.gpu_node.empty() && harness::gpu_device_node_count() > 1)
            problems.push_back("cannot tell which of this machine's " +
                               std::to_string(harness::gpu_device_node_count()) + " GPU device nodes is " +
                               (gpu.name.empty() ? std::string("the graded GPU") : gpu.name) + " (PCI " +
                               gpu.pci_bus_id +
                               ": no /proc/driver/nvidia/gpus entry), so submitted code would "
                               "see every GPU\n  (grade on a machine or a job with one GPU, or with the NVIDIA "
                               "driver's /proc entries)");
    }
    // Other processes on the GPU during timed phases, and its clocks (NVML, where the driver has it).
    std::optional<grading::GpuMonitor> monitor;
    if (problems.empty() && uses_gpu) {
        const grading::DeviceState gpu = grading::grading_device(environment.toolchain, probe_once);
        if (!gpu.uuid.empty()) monitor.emplace(gpu.uuid);
        if (monitor && monitor->available()) {
            environment.gpu_intruders = [&monitor](auto busy_since, int stopped_runner) {
                return monitor->intruders(busy_since, stopped_runner);
            };
            environment.gpu_clocks = [&monitor] { return monitor->clocks(); };
            environment.gpu_host_link = [&monitor] { return monitor->host_link_bytes(); };
            environment.gpu_memory_below = [&monitor](int runner) { return monitor->memory_below(runner); };
        } else if (!command.quiet) {
            std::cout << "grade: not watching the GPU for other processes: "
                      << (monitor ? monitor->why_unavailable() : std::string("the GPU has no UUID")) << "\n";
        }
    }
    // This grading's own work directory (grading/work_directory.hpp), after the preflight checked it
    // may be written.
    std::optional<grading::WorkDirectory> work_dir;
    if (problems.empty()) {
        try {
            work_dir.emplace(grading::WorkDirectory::claim(environment.work_dir, command.work_dir_given));
            environment.work_dir = work_dir->path();
            if (request.keep_work) work_dir->keep();
        } catch (const grading::WorkDirectoryError& e) {
            problems.push_back(e.what());
        }
    }
    if (!problems.empty()) {
        for (const auto& problem : problems) std::cerr << "grade: " << problem << "\n";
        std::cerr << "grade: nothing was graded\n";
        return grading::exit_environment_error;
    }

    const bool colour = grading::colour_wanted(STDOUT_FILENO);
    request.colour = colour;
    std::ostream silent(nullptr);
    std::ostream& progress = command.quiet ? silent : std::cout;
    try {
        const grading::GradeReport report = grading::grade(request, environment, progress);
        grading::write_file_atomically(command.output, grading::to_json_text(report));
        grading::FormatRequests formats = command.formats;
        formats.rubric = request.rubric;  // the split of each exercise's points, as scored
        grading::write_requested_formats(report, formats);
        grading::print_summary_table(report, std::cout, colour);
        grading::print_first_fixes(report, std::cout);  // --quiet too: what to do next
        progress << "results written to " << command.output << "\n";
        if (request.keep_work && work_dir->fresh()) progress << "runners and logs kept in " << work_dir->path() << "\n";
        // The last line, --quiet or not: what a build step or a script that ran grade shows.
        const grading::Rubric& rubric = request.rubric;
        std::cout << grading::grading_verdict(report, request.build_only, &rubric) << std::endl;
        const bool fine = request.build_only ? every_file_built(report, rubric) : every_case_passed(report, rubric);
        return fine ? grading::exit_success : grading::exit_graded_with_failures;
    } catch (const std::exception& e) {
        std::cerr << "grade: the grading could not finish: " << harness::printable_text(e.what()) << "\n";
        return grading::exit_environment_error;
    }
}

}  // namespace

int main(int argc, char** argv)
{
    // The hidden cases' secret leaves the environment before anything else happens: no child of
    // this process (compiler, runner, timing server, a student's grade) inherits it.
    const std::optional<std::string> secret = grading::take_secret_from_environment();
    grading::GradeOptions defaults = defaults_for(argv[0], own_executable(argv[0]));
    if (secret) {
        try {
            defaults.request.hidden_secret.emplace(*secret, grading::HiddenCaseSecret::Source::environment);
        } catch (const grading::SecretError& e) {
            std::cerr << "grade: " << grading::secret_variable << ": " << e.what() << "\n";
            return grading::exit_usage_error;
        }
    }
    const grading::CommandLine command_line = grading::parse_command_line({argv, argv + argc}, defaults);
    if (command_line.bench)
        return grading::run_bench(*command_line.bench, grading::probe_cuda_device, std::cout, std::cerr);
    if (command_line.class_grading)
        return grading::run_class(*command_line.class_grading, own_executable(argv[0]), grading::probe_cuda_device,
                                  std::cout, std::cerr);
    if (command_line.class_merge) return grading::run_class_merge(*command_line.class_merge, std::cout, std::cerr);
    if (!command_line.grade) {
        (command_line.exit_code == grading::exit_success ? std::cout : std::cerr) << command_line.message;
        return command_line.exit_code;
    }
    return run_grade(*command_line.grade);
}

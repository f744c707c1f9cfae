// The technique, from the compiled kernel (grading/include/grading/technique.hpp): one engine for
// every family. Which instructions show a technique is said here once; which techniques an
// exercise is checked for is its family's (ExerciseFamily::technique()); whether one is expected
// is the hidden reference's own PTX's to confirm.
#include "grading/technique.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>
#include <string_view>

#include "../formats/text.hpp"
#include "grading/build.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"

namespace grading {
namespace {

using harness::Technique;

std::vector<std::string_view> segments(std::string_view opcode)
{
    std::vector<std::string_view> parts;
    while (!opcode.empty()) {
        const std::size_t dot = opcode.find('.');
        parts.push_back(opcode.substr(0, dot));
        if (dot == std::string_view::npos) break;
        opcode.remove_prefix(dot + 1);
    }
    return parts;
}

bool has_segment(const std::vector<std::string_view>& parts, std::string_view wanted)
{
    return std::find(parts.begin() + 1, parts.end(), wanted) != parts.end();
}

// Whether one instruction (its opcode with suffixes) shows the technique.
bool shows(Technique t, std::string_view opcode)
{
    const std::vector<std::string_view> parts = segments(opcode);
    if (parts.empty()) return false;
    const std::string_view op = parts.front();
    switch (t) {
        case Technique::launches_kernel:
            return false;  // the host code's (kernel_launch_call)
        case Technique::computes_on_gpu:
            return false;  // seen at run time (record_host_link)
        case Technique::reads_constant_memory:
            // ld.const.f32, ld.const.v4.f32, ldu.const...
            return (op == "ld" || op == "ldu") && has_segment(parts, "const");
        case Technique::uses_shared_memory:
            // ld.shared, st.shared, ld.volatile.shared, atom.shared, cp.async...shared, cvta.to.shared
            return std::any_of(parts.begin() + 1, parts.end(),
                               [](std::string_view s) { return s.substr(0, 6) == "shared"; });
        case Technique::synchronizes_block:
            // bar.sync, bar.red (__syncthreads_count/and/or), barrier.sync; not __syncwarp (bar.warp.sync)
            return (op == "bar" && !(parts.size() > 1 && parts[1] == "warp")) || op == "barrier";
        case Technique::adds_in_double:
            // add.f64, add.rn.f64; atomicAdd on a double (atom.global.add.f64, red.add.f64)
            return parts.back() == "f64" &&
                   (op == "add" || ((op == "atom" || op == "red") && has_segment(parts, "add")));
    }
    return false;
}

// Calls that start a kernel. <<<>>> lowers to __cudaPushCallConfiguration at the launch (the
// kernel's stub, compiled for every kernel whether launched or not, calls cudaLaunchKernel in CUDA
// 12 and __cudaLaunchKernel in 13: neither says a kernel is launched, so __cudaLaunchKernel is not
// here, and cudaLaunchKernel, which CUDA 12's stubs call, counts in the file's favour).
struct LaunchCall {
    std::string_view name;
    std::string_view shown;
};
constexpr std::array<LaunchCall, 8> launch_calls = {{
    {"__cudaPushCallConfiguration", "__cudaPushCallConfiguration (<<<>>>)"},
    {"cudaLaunchKernel", "cudaLaunchKernel"},
    {"cudaLaunchKernel_ptsz", "cudaLaunchKernel"},
    {"cudaLaunchKernelExC", "cudaLaunchKernelEx"},
    {"cudaLaunchKernelExC_ptsz", "cudaLaunchKernelEx"},
    {"cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernel"},
    {"cudaLaunchCooperativeKernel_ptsz", "cudaLaunchCooperativeKernel"},
    {"cudaGraphLaunch", "cudaGraphLaunch"},
}};

}  // namespace

PtxTechnique read_ptx_technique(const std::string& ptx)
{
    PtxTechnique found;
    // Kernels: ".visible .entry NAME(" or ".entry NAME(", comments aside.
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);) {
        if (const std::size_t comment = line.find("//"); comment != std::string::npos) line.erase(comment);
        std::size_t at = line.find(".entry");
        if (at == std::string::npos) continue;
        at += 6;
        if (at >= line.size() || (line[at] != ' ' && line[at] != '\t')) continue;
        const std::size_t start = line.find_first_not_of(" \t", at);
        if (start == std::string::npos) continue;
        const std::size_t end = line.find_first_of("( \t\r", start);
        found.entries.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    }
    for (const std::string& opcode : ptx_opcodes(ptx))
        for (const Technique t : harness::all_techniques) {
            std::string& first = found.shown[static_cast<std::size_t>(t)];
            if (first.empty() && shows(t, opcode)) first = opcode;
        }
    return found;
}

std::string kernel_launch_call(const std::vector<std::string>& referenced)
{
    for (const LaunchCall& call : launch_calls)
        for (const std::string& name : referenced) {
            // nm may add a version ("cudaLaunchKernel@libcudart.so.12"): the name before it counts.
            const std::string_view bare = std::string_view(name).substr(0, name.find('@'));
            if (bare == call.name) return std::string(call.shown);
        }
    return {};
}

std::vector<KernelResources> parse_resource_usage(const std::string& text)
{
    // Fatbin elf code: ... Resource usage:\n Common:\n  GLOBAL:0\n Function NAME:\n  REG:17 STACK:0
    // SHARED:0 LOCAL:0 CONSTANT[0]:336 TEXTURE:0 SURFACE:0 SAMPLER:0
    std::vector<KernelResources> kernels;
    std::istringstream lines(text);
    bool elf = false, pending = false;
    std::string arch;
    for (std::string raw; std::getline(lines, raw);) {
        const std::string line = formats::trimmed(raw);
        if (line.rfind("Fatbin ", 0) == 0) {
            elf = line.find("elf code") != std::string::npos;
            pending = false;
            arch.clear();
            continue;
        }
        if (!elf) continue;
        if (line.rfind("arch = ", 0) == 0) {
            arch = formats::trimmed(std::string_view(line).substr(7));
            continue;
        }
        if (line.rfind("Function ", 0) == 0 && line.size() > 10 && line.back() == ':') {
            kernels.push_back({});
            kernels.back().name = formats::trimmed(std::string_view(line).substr(9, line.size() - 10));
            kernels.back().arch = arch;
            pending = true;
            continue;
        }
        if (!pending || line.find("REG:") == std::string::npos) continue;
        pending = false;
        std::istringstream fields(line);
        for (std::string field; fields >> field;) {
            const std::size_t colon = field.find(':');
            if (colon == std::string::npos) continue;
            const std::string key = field.substr(0, colon);
            long value = 0;
            try {
                value = std::stol(field.substr(colon + 1));
            } catch (const std::exception&) {
                continue;
            }
            KernelResources& k = kernels.back();
            if (key == "REG") k.registers = value;
            if (key == "SHARED") k.shared_bytes = value;
            if (key == "LOCAL") k.local_bytes = value;
            if (key == "STACK") k.stack_bytes = value;
        }
    }
    return kernels;
}

const TechniqueCheck* TechniqueReport::check(harness::Technique t) const
{
    for (const auto& c : checks)
        if (c.technique == t) return &c;
    return nullptr;
}

std::vector<harness::Technique> TechniqueReport::missing() const
{
    std::vector<harness::Technique> list;
    for (const auto& c : checks)
        if (c.missing()) list.push_back(c.technique);
    return list;
}

bool TechniqueReport::required(harness::Technique t, bool require_all) const
{
    const TechniqueCheck* c = check(t);
    return c != nullptr && c->expected &&
           (require_all || t == Technique::launches_kernel || t == Technique::computes_on_gpu);
}

std::vector<harness::Technique> TechniqueReport::missing_required(bool require_all) const
{
    std::vector<harness::Technique> list = missing();
    list.erase(std::remove_if(list.begin(), list.end(), [&](Technique t) { return !required(t, require_all); }),
               list.end());
    return list;
}

TechniqueReport check_technique(const std::string& exercise, const std::optional<std::string>& ptx,
                                const std::optional<std::string>& reference_ptx,
                                const std::vector<std::string>& referenced)
{
    TechniqueReport report;
    const harness::Exercise* e = harness::find_exercise(exercise);
    const std::vector<Technique> taught = e != nullptr ? harness::family_of(*e).technique() : std::vector<Technique>{};
    const std::optional<PtxTechnique> file = ptx ? std::optional<PtxTechnique>(read_ptx_technique(*ptx)) : std::nullopt;
    const std::optional<PtxTechnique> reference =
        reference_ptx ? std::optional<PtxTechnique>(read_ptx_technique(*reference_ptx)) : std::nullopt;
    if (file) {
        report.kernels = static_cast<int>(file->entries.size());
        report.kernel_names = file->entries;
    }
    const std::string family = e != nullptr ? harness::family_name(e->family) : "unknown";

    for (const Technique t : harness::all_techniques) {
        TechniqueCheck c;
        c.technique = t;
        if (t == Technique::launches_kernel) {
            c.expected = true;
            c.basis = "every exercise: the launcher computes its result with a kernel on the GPU";
            const std::string call = kernel_launch_call(referenced);
            if (call.empty()) {
                c.found = false;
                c.evidence = "no kernel launch among the calls of the file's host code";
            } else if (file && file->entries.empty()) {
                c.found = false;
                c.evidence = "calls " + call + " but the file defines no kernel";
            } else {
                c.found = true;
                c.evidence = call;
            }
            report.checks.push_back(std::move(c));
            continue;
        }
        if (t == Technique::computes_on_gpu) {
            c.expected = true;
            c.basis = "every exercise: seen at run time, from the bytes the speed case's timed calls moved between "
                      "host and GPU";
            c.not_checked = "seen only when the speed case is timed";
            report.checks.push_back(std::move(c));
            continue;
        }
        const bool listed = std::find(taught.begin(), taught.end(), t) != taught.end();
        if (!listed) {
            c.basis = "not what the " + family + " exercises are checked for: reported only";
        } else if (!reference) {
            c.expected = true;
            c.basis = "the " + family + " exercises teach it (no PTX of the reference here to confirm it)";
        } else if (reference->of(t).empty()) {
            c.basis = "the " + family +
                      " exercises teach it, but the reference's PTX for this architecture does not show it: reported only";
        } else {
            c.expected = true;
            c.basis = "the " + family + " exercises teach it; the reference's PTX shows it (" + reference->of(t) + ")";
        }
        if (!file) {
            c.not_checked = "the compiler kept no PTX of the file";
        } else {
            c.found = !file->of(t).empty();
            c.evidence = *c.found ? file->of(t) : "no such instruction in the file's PTX";
        }
        report.checks.push_back(std::move(c));
    }
    return report;
}

namespace {

std::string link_megabytes(double bytes)
{
    return formats::fixed(bytes / 1e6, bytes < 1e7 ? 2 : 0) + " MB";
}

std::string link_milliseconds(double ms)
{
    return formats::fixed(ms, ms < 10 ? 2 : 1) + " ms";
}

}  // namespace

void record_host_link(TechniqueReport& report, const std::vector<HostLinkTraffic>& timed_cases)
{
    // The share of a call's data that tells a host computing. Copying the input to the host moves
    // at least its entropy unless the GPU combines elements: the reductions' speed case (integers
    // in [-1000, 1000] as doubles, 11 bits of 64) packs to 17% of the data, int16 to 25% (red team
    // 14, packs_input_for_host_sum); honest launchers move about 0.005%, a host finishing the
    // blocks' partial sums some 0.4%.
    constexpr double host_share = 0.15;
    TechniqueCheck* check = nullptr;
    for (auto& c : report.checks)
        if (c.technique == Technique::computes_on_gpu) check = &c;
    if (check == nullptr) return;
    std::vector<std::string> on_gpu, not_checked;
    for (const HostLinkTraffic& t : timed_cases) {
        if (!t.withheld.empty()) {
            check->found = false;
            check->not_checked.clear();
            check->evidence = t.case_label + ": " + t.withheld;
            return;
        }
        if (!(t.data_bytes > 0)) continue;  // nothing to move: nothing to tell
        const std::string data = " of the " + link_megabytes(t.data_bytes) + " each call must read and write";
        // The machine's traffic: the reference's calls beside, plus idle windows as long as this
        // submission's slow ones (its runner stopped), where measured. Used only with a reference.
        const double machine = t.reference_per_call.value_or(0) + t.idle_per_call.value_or(0);
        const std::string control =
            !t.reference_per_call ? ""
            : t.idle_per_call     ? " (the reference's beside it: " + link_megabytes(*t.reference_per_call) +
                                    "; the machine's over idle windows as long as this call's " +
                                    link_milliseconds(t.student_ms_per_call) + ": " +
                                    link_megabytes(*t.idle_per_call) + ")"
                                  : " (the reference's beside it: " + link_megabytes(*t.reference_per_call) + ")";
        // A hidden case's evidence names none of its size, its calls' traffic or time: a student's
        // view keeps this evidence, and what a launcher moves is its choice (a channel for what it
        // read from the hidden input).
        const bool numbers = !t.hidden;
        if (!t.student_per_call) {
            not_checked.push_back(t.case_label + ": the GPU's PCIe byte counters were not read (NVML)");
        } else if (*t.student_per_call < host_share * t.data_bytes) {
            on_gpu.push_back(t.case_label + ": " +
                             (numbers ? link_megabytes(*t.student_per_call) + " a call over PCIe" + data + control
                                      : "its calls moved under 15% of their data over PCIe"));
        } else if (!t.reference_per_call) {
            not_checked.push_back(t.case_label + ": its calls moved " +
                                  (numbers ? link_megabytes(*t.student_per_call) + " each" : "15% of their data or more") +
                                  " over PCIe, and no reference was timed beside them to tell the machine's "
                                  "traffic apart");
        } else if (*t.student_per_call - machine >= host_share * t.data_bytes) {
            check->found = false;
            check->not_checked.clear();
            check->evidence = t.case_label + ": each timed call moved " +
                              (numbers ? link_megabytes(*t.student_per_call) + " between host and GPU" + data + control
                                       : "15% of its data or more between host and GPU, beyond the machine's "
                                         "traffic beside it");
            return;
        } else {
            not_checked.push_back(t.case_label + ": its calls moved " +
                                  (numbers ? link_megabytes(*t.student_per_call) + " each" : "15% of their data or more") +
                                  " over PCIe, no more than the machine's traffic beside them explains" +
                                  (numbers ? control : ""));
        }
    }
    if (!not_checked.empty()) {
        check->found.reset();
        check->not_checked = not_checked.front();
    } else if (!on_gpu.empty()) {
        check->found = true;
        check->not_checked.clear();
        check->evidence = on_gpu.front();
        for (std::size_t i = 1; i < on_gpu.size(); ++i) check->evidence += "; " + on_gpu[i];
    }
}

std::string describe(harness::Technique t)
{
    switch (t) {
        case Technique::launches_kernel: return "launches a kernel";
        case Technique::reads_constant_memory: return "reads the mask from __constant__ memory";
        case Technique::uses_shared_memory: return "uses __shared__ memory";
        case Technique::synchronizes_block: return "synchronizes the block with __syncthreads()";
        case Technique::adds_in_double: return "adds in double precision";
        case Technique::computes_on_gpu: return "computes on the GPU";
    }
    return "?";
}

std::string missing_sentence(harness::Technique t)
{
    switch (t) {
        case Technique::launches_kernel:
            return "your launcher never launches a kernel: the result must be computed by your kernel on the GPU, "
                   "not on the host";
        case Technique::reads_constant_memory:
            return "your kernel never reads the mask from __constant__ memory (copy it there with "
                   "cudaMemcpyToSymbol and read it in the kernel)";
        case Technique::uses_shared_memory:
            return "your kernel never uses __shared__ memory: the exercise stages its data in shared memory";
        case Technique::synchronizes_block:
            return "your kernel never synchronizes its block with __syncthreads(): threads read what others "
                   "wrote to shared memory";
        case Technique::adds_in_double:
            return "your kernel never adds in double precision: sum the doubles as double, not float";
        case Technique::computes_on_gpu:
            return "your launcher moved its data between the GPU and the host on every timed call: the result "
                   "must be computed by your kernel on the GPU, not copied to the host, computed there and copied back";
    }
    return "?";
}

}  // namespace grading

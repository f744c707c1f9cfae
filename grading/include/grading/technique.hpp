// The technique, from the compiled kernel: what a submission's compiled code shows of what its
// exercise teaches (harness/technique.hpp), reported beside the verdict. One engine for every
// family (grading/src/build/technique.cpp):
//   - the PTX nvcc wrote for the file (kept by --keep): its kernels (.entry) and, per technique,
//     the first instruction that shows it (ld.const, ld.shared/st.shared, bar.sync/barrier.sync,
//     add.f64/add.rn.f64);
//   - the object's calls (nm): whether the launcher starts any kernel (<<<>>> lowers to
//     __cudaPushCallConfiguration; cudaLaunchKernel, cudaLaunchCooperativeKernel, ...);
//   - cuobjdump --dump-resource-usage, where the toolkit has it: registers, shared, local memory
//     and stack per kernel.
// What is expected: the techniques the exercise's family lists (ExerciseFamily::technique()) that
// the hidden reference's own PTX for the grading architecture shows too (lib/reference-ptx), plus
// launching a kernel, expected of every exercise. What could not be read is "not checked", with
// why, never a verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/technique.hpp"

namespace grading {

// One technique for one file.
struct TechniqueCheck {
    harness::Technique technique = harness::Technique::launches_kernel;
    bool expected = false;
    std::string basis;          // why it is expected, or why not
    std::optional<bool> found;  // nullopt: not checked (then `not_checked` says why)
    std::string evidence;       // what shows it: "ld.const.f32", "__cudaPushCallConfiguration (<<<>>>)"
    std::string not_checked;
    bool missing() const { return expected && found.has_value() && !*found; }
};

// One kernel's resources as cuobjdump reports them for the grading architecture.
struct KernelResources {
    std::string name;  // mangled, as in the PTX's .entry
    std::string arch;  // "sm_90": the ELF section it was listed in
    long registers = 0, shared_bytes = 0, local_bytes = 0, stack_bytes = 0;
};

struct TechniqueReport {
    std::optional<int> kernels;  // the .entry directives of the file's PTX; nullopt: no PTX kept
    std::vector<std::string> kernel_names;
    std::vector<TechniqueCheck> checks;  // one per harness::all_techniques, in that order
    std::vector<KernelResources> resources;
    std::string resources_not_checked;  // why `resources` is empty (no cuobjdump, ...)
    bool require_all = false;           // the rubric's "technique": "require" (set by the grader)

    const TechniqueCheck* check(harness::Technique t) const;
    // The expected techniques the file's code does not show, in all_techniques' order.
    std::vector<harness::Technique> missing() const;
    // Of those, the ones that cost the correctness points: all of them with `require_all` (the
    // rubric's "technique": "require"), else only launching a kernel.
    bool required(harness::Technique t, bool require_all) const;
    std::vector<harness::Technique> missing_required(bool require_all) const;
};

// What a PTX text shows: its kernels and, per technique, the first instruction that shows it
// (empty: none). launches_kernel is the host code's, never the PTX's: always empty here.
struct PtxTechnique {
    std::vector<std::string> entries;  // kernel names, in order
    std::string shown[harness::all_techniques.size()];
    const std::string& of(harness::Technique t) const { return shown[static_cast<std::size_t>(t)]; }
};
PtxTechnique read_ptx_technique(const std::string& ptx);

// Among the names an object references (nm's undefined symbols, raw), the call that starts a
// kernel, as the report shows it ("__cudaPushCallConfiguration (<<<>>>)"); empty: none.
std::string kernel_launch_call(const std::vector<std::string>& referenced);

// cuobjdump --dump-resource-usage's text: every "Function NAME:" of an ELF (cubin) section, with
// its REG, SHARED, LOCAL and STACK. Empty when there is none.
std::vector<KernelResources> parse_resource_usage(const std::string& cuobjdump_output);

// What a speed case's timed calls moved over the GPU's host link (PCIe, both ways) per launcher
// call, as the driver counts it for the whole device (grading/gpu_monitor.hpp): what computes_on_gpu
// is decided from. The reference's calls, timed in turns with the submission's, are the control:
// traffic of the machine (another process copying) shows in both.
struct HostLinkTraffic {
    std::string case_label;
    double data_bytes = 0;                     // what one call must read and write (harness::minimum_bytes)
    std::optional<double> student_per_call;    // nullopt: not counted (no counters, no timing)
    std::optional<double> reference_per_call;  // nullopt: not counted, or the reference was not timed beside
    // The grader's clock around those windows, per call (0: not known): told in the evidence beside
    // the idle windows' traffic (the control is no longer scaled by it: idle_per_call).
    double student_ms_per_call = 0, reference_ms_per_call = 0;
    // The machine's own traffic per call over windows as long as the submission's, its runner
    // stopped (TimingResult::idle_link_bytes_per_call): added to the control. nullopt: not measured.
    std::optional<double> idle_per_call;
    // Why the submission kept these calls from showing their traffic (CaseResult::timing_withheld):
    // then computes_on_gpu is false, whatever was counted. Empty: it did not.
    std::string withheld;
    // A hidden case's (its label then "a hidden case"): the evidence names no size, traffic or time,
    // as a student's view names none of a hidden case (the bytes a launcher moves are its choice).
    bool hidden = false;
};
// Sets the report's computes_on_gpu check from the timed cases: not found where the submission
// withheld a case's traffic (HostLinkTraffic::withheld); found where every case's calls moved under
// 15% of their data over the link; not found where a case's calls moved at least 15% of their data
// more than the control: the reference's calls beside them, plus the machine's traffic over idle
// windows as long as the submission's where those were slow (a slow launcher's long windows catch
// more of a neighbour's copying; scaling the reference's traffic by the time instead counted its
// fixed per-call traffic as a rate and let a slow host computation through, red team 15). A
// reduction's input packed to 16 bits on the GPU and summed on the host moves 25%. Else not
// checked, with why: no counters, or the control moved as much (a neighbour copying).
void record_host_link(TechniqueReport& report, const std::vector<HostLinkTraffic>& timed_cases);

// The report for one file of `exercise`: `ptx` the file's PTX (nullopt: none kept),
// `reference_ptx` the hidden reference's (nullopt: none here, then the family's list is expected
// as it is), `referenced` the object's undefined symbols.
TechniqueReport check_technique(const std::string& exercise, const std::optional<std::string>& ptx,
                                const std::optional<std::string>& reference_ptx,
                                const std::vector<std::string>& referenced);

// What a technique is, in a few words ("reads the mask from __constant__ memory"), and the
// sentence a student reads when it is missing ("your kernel never reads ...").
std::string describe(harness::Technique t);
std::string missing_sentence(harness::Technique t);

}  // namespace grading

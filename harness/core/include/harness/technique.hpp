// What an exercise teaches that its compiled code shows: the techniques the grader reads from a
// submission's PTX and object (grading/src/build/technique.cpp, one engine for every family). Each
// family says which of them its exercises are checked for (ExerciseFamily::technique()); which
// instructions show each is the engine's, and whether the hidden reference itself shows it on the
// grading architecture decides whether it is expected.
#pragma once

#include <array>

namespace harness {

enum class Technique {
    launches_kernel,        // the launcher starts a kernel (<<<>>>, cudaLaunchKernel, ...): every family
    reads_constant_memory,  // ld.const: the mask from __constant__ memory
    uses_shared_memory,     // ld.shared / st.shared: a tile or partial sums staged in __shared__ memory
    synchronizes_block,     // bar.sync / barrier.sync: __syncthreads() between the phases
    adds_in_double,         // add.f64 / add.rn.f64: the doubles summed as doubles
    // Seen at run time, not in the code: the speed case's timed calls moved little of their data
    // between host and GPU (the device's PCIe byte counters, read by the grader around each batch):
    // every family. A launcher that copies the input to the host and the result back computed it there.
    computes_on_gpu,
};

constexpr std::array<Technique, 6> all_techniques = {Technique::launches_kernel,    Technique::reads_constant_memory,
                                                     Technique::uses_shared_memory, Technique::synchronizes_block,
                                                     Technique::adds_in_double,     Technique::computes_on_gpu};

// "launches_kernel", ...: the key in results.json.
constexpr const char* to_text(Technique t)
{
    switch (t) {
        case Technique::launches_kernel: return "launches_kernel";
        case Technique::reads_constant_memory: return "reads_constant_memory";
        case Technique::uses_shared_memory: return "uses_shared_memory";
        case Technique::synchronizes_block: return "synchronizes_block";
        case Technique::adds_in_double: return "adds_in_double";
        case Technique::computes_on_gpu: return "computes_on_gpu";
    }
    return "?";
}

}  // namespace harness

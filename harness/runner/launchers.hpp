// The bridge from the runner to the launcher a submission defines (CONTRACT.md signatures).
#pragma once

#include <any>
#include <string>

#include "harness/cases.hpp"

namespace harness::runner {

// Everything any launcher can take; each family's LAUNCHER_CALL passes on what its signature needs.
struct LauncherArgs {
    const void* in = nullptr;     // device
    void* out = nullptr;          // device
    const float* mask = nullptr;  // host (convolutions)
    void* scratch = nullptr;      // device
    int n = 0;
    std::any shape;  // the case's shape besides n, in its family's type (Case::shape; read with shape_of)
};
// The case's n and shape into `args`.
inline void set_shape(LauncherArgs& args, const Case& c)
{
    args.n = static_cast<int>(c.n);
    args.shape = c.shape;
}

// Whether the linked submission defines this exercise's launcher with the contract's signature.
bool launcher_found(const std::string& exercise);
// Calls it; the caller synchronizes and checks errors.
void call_launcher(const std::string& exercise, const LauncherArgs& args);

}  // namespace harness::runner

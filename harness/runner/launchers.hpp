// The bridge from the runner to the launcher a submission defines (CONTRACT.md signatures).
#pragma once

#include <string>

namespace harness::runner {

// Everything any launcher can take; each exercise's adapter passes on what its signature needs.
struct LauncherArgs {
    const void* in = nullptr;     // device
    void* out = nullptr;          // device
    const float* mask = nullptr;  // host (convolutions)
    void* scratch = nullptr;      // device
    int n = 0, height = 0, width = 0, mask_width = 0;
};

// Whether the linked submission defines this exercise's launcher with the contract's signature.
bool launcher_found(const std::string& exercise);
// Calls it; the caller synchronizes and checks errors.
void call_launcher(const std::string& exercise, const LauncherArgs& args);

}  // namespace harness::runner

// The launcher signature of each family (CONTRACT.md), as macros so that the runner's declarations
// and the text shown to students come from the same tokens. Each family's header defines
//   LAUNCHER_SIGNATURE_<family>(name)  declares the launcher
//   LAUNCHER_CALL_<family>(name, a)    calls it with the fields of a runner::LauncherArgs `a`
#pragma once

#include "convolution/convolution.hpp"
#include "reduction/reduction.hpp"
#include "scan/scan.hpp"

// The declaration as text, e.g. "void scan_kogge_stone(const float* in, float* out, int n)".
#define LAUNCHER_SIGNATURE_TEXT(FAMILY, NAME) LAUNCHER_STRINGIFY(LAUNCHER_SIGNATURE_##FAMILY(NAME))
#define LAUNCHER_STRINGIFY(...) LAUNCHER_STRINGIFY_(__VA_ARGS__)
#define LAUNCHER_STRINGIFY_(...) #__VA_ARGS__

// The launcher signature of each family (CONTRACT.md), as macros so that the runner's declarations
// and the text shown to students come from the same tokens:
//   LAUNCHER_SIGNATURE_<family>(name)  declares the launcher
//   LAUNCHER_CALL_<family>(name, a)    calls it with the fields of a runner::LauncherArgs `a`
#pragma once

#define LAUNCHER_SIGNATURE_section_scan(NAME) void NAME(const float* in, float* out, int n)
#define LAUNCHER_SIGNATURE_full_scan(NAME) void NAME(const float* in, float* out, int n, float* scratch)
#define LAUNCHER_SIGNATURE_reduction(NAME) void NAME(const double* in, double* out, int n, double* scratch)
#define LAUNCHER_SIGNATURE_conv1d(NAME) void NAME(const float* in, const float* mask, float* out, int n, int mask_width)
#define LAUNCHER_SIGNATURE_conv2d(NAME) \
    void NAME(const float* in, const float* mask, float* out, int height, int width, int mask_width)

#define LAUNCHER_CALL_section_scan(NAME, a) NAME(static_cast<const float*>(a.in), static_cast<float*>(a.out), a.n)
#define LAUNCHER_CALL_full_scan(NAME, a) \
    NAME(static_cast<const float*>(a.in), static_cast<float*>(a.out), a.n, static_cast<float*>(a.scratch))
#define LAUNCHER_CALL_reduction(NAME, a) \
    NAME(static_cast<const double*>(a.in), static_cast<double*>(a.out), a.n, static_cast<double*>(a.scratch))
#define LAUNCHER_CALL_conv1d(NAME, a) \
    NAME(static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out), a.n, a.mask_width)
#define LAUNCHER_CALL_conv2d(NAME, a) \
    NAME(static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out), a.height, a.width, a.mask_width)

// The declaration as text, e.g. "void scan_kogge_stone(const float* in, float* out, int n)".
#define LAUNCHER_SIGNATURE_TEXT(FAMILY, NAME) LAUNCHER_STRINGIFY(LAUNCHER_SIGNATURE_##FAMILY(NAME))
#define LAUNCHER_STRINGIFY(...) LAUNCHER_STRINGIFY_(__VA_ARGS__)
#define LAUNCHER_STRINGIFY_(...) #__VA_ARGS__

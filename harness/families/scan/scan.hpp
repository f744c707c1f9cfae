// The scan family (PMPP chapter 11): section_scan scans each `scan_section`-element section on its
// own; full_scan scans the whole array (its blocks of `scan_section` are the first level).
#pragma once

#include <cstdint>

// The launchers of CONTRACT.md. The runner declares and calls them through these macros, and
// --list shows the same tokens as text (harness/launcher_signatures.hpp).
#define LAUNCHER_SIGNATURE_section_scan(NAME) void NAME(const float* in, float* out, int n)
#define LAUNCHER_SIGNATURE_full_scan(NAME) void NAME(const float* in, float* out, int n, float* scratch)
#define LAUNCHER_CALL_section_scan(NAME, a) NAME(static_cast<const float*>(a.in), static_cast<float*>(a.out), a.n)
#define LAUNCHER_CALL_full_scan(NAME, a) \
    NAME(static_cast<const float*>(a.in), static_cast<float*>(a.out), a.n, static_cast<float*>(a.scratch))

namespace harness {

// Integer scan data stays this close to zero in every prefix: any sum of consecutive elements,
// which is all a correct scan order ever forms, is below 2^24 in magnitude and so exact in float.
constexpr double scan_prefix_bound = 2'200'000;
// The wave the prefixes of integer scan data follow: up by scan_slope an element for half a
// period, down for the other half, from 0 back to 0 at the end of each period.
constexpr std::int64_t scan_period = std::int64_t{1} << 20;
constexpr std::int64_t scan_slope = 4;

// The deepest combining tree we accept for a sum of `terms` float values in a scan: any order at
// all within one 2048-element section (sequential included), plus a tree over the sections.
std::int64_t scan_order_depth(std::int64_t terms);

}  // namespace harness

// The scan family (PMPP chapter 11): section_scan scans each scan_section(e)-element section on
// its own; full_scan scans the whole array (its blocks of scan_section(e) are the first level).
#pragma once

#include <cstdint>

#include "harness/exercise.hpp"

// The launchers of CONTRACT.md. The runner declares and calls them through these macros, and
// --list shows the same tokens as text (harness/launcher_signatures.hpp).
#define LAUNCHER_SIGNATURE_section_scan(NAME) void NAME(const float* in, float* out, int n)
#define LAUNCHER_SIGNATURE_full_scan(NAME) void NAME(const float* in, float* out, int n, float* scratch)
#define LAUNCHER_CALL_section_scan(NAME, a) NAME(static_cast<const float*>(a.in), static_cast<float*>(a.out), a.n)
#define LAUNCHER_CALL_full_scan(NAME, a) \
    NAME(static_cast<const float*>(a.in), static_cast<float*>(a.out), a.n, static_cast<float*>(a.scratch))

namespace harness {

// The exercise's section: the elements one block of the reference scans (Exercise::block).
inline std::int64_t scan_section(const Exercise& e)
{
    return e.block;
}

// Integer scan data: a random walk of values from [-12, 12] whose running sum is pushed back up
// (values from [0, 12]) whenever it falls below scan_prefix_floor. Every sum a correct kernel
// forms, in any order, must be exact in float (below 2^24 in magnitude): sums of consecutive
// elements are differences of prefixes, which stay within scan_prefix_bound, and sums of
// scattered elements (a thread's strided loads, a tree over them) are sums of mean-zero values,
// a few hundred thousand at most even at 2^28 elements. A slope or wave in the data would add up
// across periods in such sums and break that (a reduce-then-scan exceeded 2^24 on one).
constexpr std::int64_t scan_prefix_floor = 1000;
constexpr double scan_prefix_bound = 200'000;
// The walk restarts in each period from a prefix drawn from [1000, 15000), so that the periods are
// generated in parallel; the last element of a period brings the sum to the next one's start.
constexpr std::int64_t scan_period = std::int64_t{1} << 20;

// The deepest combining tree we accept for a sum of `terms` float values in a scan: any order at
// all within one 2048-element section (sequential included), plus a tree over the sections.
std::int64_t scan_order_depth(std::int64_t terms);

}  // namespace harness

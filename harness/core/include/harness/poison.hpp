// Bit patterns the runner writes around and into device buffers, and the parent recognizes.
//
// - Outputs (and the guard zones around them) start as a signalling-NaN pattern. An element that
//   still holds it was never written; a changed guard element was written outside the output.
// - The guard zones around inputs hold a quiet NaN with its own payload: a kernel that reads
//   outside the input folds NaN into its result (the GPU returns its canonical NaN), or copies the
//   exact pattern.
// - Scratch starts as another quiet NaN, since its contents are unspecified on entry.
#pragma once

#include <cstdint>

namespace harness {

constexpr std::uint32_t unwritten_f32 = 0x7FA5A5A5u;
constexpr std::uint64_t unwritten_f64 = 0x7FF4A5A5A5A5A5A5ull;
constexpr std::uint32_t input_guard_f32 = 0x7FC0BAD0u;
constexpr std::uint64_t input_guard_f64 = 0x7FF8BAD0BAD0BAD0ull;
constexpr std::uint32_t scratch_f32 = 0x7FC5C5C5u;
constexpr std::uint64_t scratch_f64 = 0x7FF8C5C5C5C5C5C5ull;

// Elements of guard zone on each side of every buffer the launcher sees.
constexpr std::int64_t guard_elements = 8192;
// Extra scratch elements beyond n the contract promises.
constexpr std::int64_t scratch_extra = 4096;

}  // namespace harness

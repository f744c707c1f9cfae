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

#include "harness/exercise.hpp"

namespace harness {

constexpr std::uint32_t unwritten_f32 = 0x7FA5A5A5u;
constexpr std::uint64_t unwritten_f64 = 0x7FF4A5A5A5A5A5A5ull;
constexpr std::uint32_t input_guard_f32 = 0x7FC0BAD0u;
constexpr std::uint64_t input_guard_f64 = 0x7FF8BAD0BAD0BAD0ull;
constexpr std::uint32_t scratch_f32 = 0x7FC5C5C5u;
constexpr std::uint64_t scratch_f64 = 0x7FF8C5C5C5C5C5C5ull;

// The three patterns of one element type (the low 4 bytes for floats): the one place code that
// handles both types picks them.
struct Poison {
    std::uint64_t unwritten, input_guard, scratch;
};
constexpr Poison poison_of(ElementType type)
{
    return type == ElementType::f64 ? Poison{unwritten_f64, input_guard_f64, scratch_f64}
                                    : Poison{unwritten_f32, input_guard_f32, scratch_f32};
}

// Elements of guard zone on each side of every buffer the launcher sees.
constexpr std::int64_t guard_elements = 8192;
// Extra scratch elements beyond n the contract promises.
constexpr std::int64_t scratch_extra = 4096;

}  // namespace harness

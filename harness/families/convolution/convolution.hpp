// The tiled convolution family (PMPP chapter 7): conv1d and conv2d with a constant-memory mask and
// zero ghost cells. conv_tile(e) is the reference's output tile edge; case sizes lie around it.
#pragma once

#include <cstdint>

#include "harness/exercise.hpp"

#define LAUNCHER_SIGNATURE_conv1d(NAME) void NAME(const float* in, const float* mask, float* out, int n, int mask_width)
#define LAUNCHER_SIGNATURE_conv2d(NAME) \
    void NAME(const float* in, const float* mask, float* out, int height, int width, int mask_width)
#define LAUNCHER_CALL_conv1d(NAME, a) \
    NAME(static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out), a.n, a.mask_width)
#define LAUNCHER_CALL_conv2d(NAME, a) \
    NAME(static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out), a.height, a.width, a.mask_width)

namespace harness {

// The edge of the exercise's reference output tile (Exercise::block).
inline std::int64_t conv_tile(const Exercise& e)
{
    return e.block;
}

}  // namespace harness

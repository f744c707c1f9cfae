// The tiled convolution family (PMPP chapter 7): conv1d and conv2d with a constant-memory mask and
// zero ghost cells. conv_tile(e) is the reference's output tile edge; case sizes lie around it.
#pragma once

#include <cstdint>

#include "harness/cases.hpp"
#include "harness/exercise.hpp"

#define LAUNCHER_SIGNATURE_conv1d(NAME) void NAME(const float* in, const float* mask, float* out, int n, int mask_width)
#define LAUNCHER_SIGNATURE_conv2d(NAME) \
    void NAME(const float* in, const float* mask, float* out, int height, int width, int mask_width)
#define LAUNCHER_CALL_conv1d(NAME, a)                                                   \
    NAME(static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out), a.n, \
         harness::shape_of<harness::ConvolutionShape>(a).mask_width)
#define LAUNCHER_CALL_conv2d(NAME, a)                                                                  \
    NAME(static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out),                     \
         harness::shape_of<harness::ConvolutionShape>(a).height, harness::shape_of<harness::ConvolutionShape>(a).width, \
         harness::shape_of<harness::ConvolutionShape>(a).mask_width)

namespace harness {

// A convolution case's shape besides n (Case::shape): its mask's width and, for an image (conv2d),
// its height and width (n is their product); a 1D case's height and width are 0.
struct ConvolutionShape {
    int height = 0, width = 0;
    int mask_width = 0;
};

// The edge of the exercise's reference output tile (Exercise::block).
inline std::int64_t conv_tile(const Exercise& e)
{
    return e.block;
}

}  // namespace harness

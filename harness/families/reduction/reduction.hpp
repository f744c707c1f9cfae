// The reduction family (the five shared-memory reductions): out[0] = the sum of in[0..n-1], in
// double. reduction_block(e) is the elements one block of the reference sums; its edges are cases.
#pragma once

#include <cstdint>

#include "harness/exercise.hpp"

#define LAUNCHER_SIGNATURE_reduction(NAME) void NAME(const double* in, double* out, int n, double* scratch)
#define LAUNCHER_CALL_reduction(NAME, a) \
    NAME(static_cast<const double*>(a.in), static_cast<double*>(a.out), a.n, static_cast<double*>(a.scratch))

namespace harness {

// The elements one block of the exercise's reference sums (Exercise::block).
inline std::int64_t reduction_block(const Exercise& e)
{
    return e.block;
}

}  // namespace harness

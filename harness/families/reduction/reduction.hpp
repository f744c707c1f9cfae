// The reduction family (the five shared-memory reductions): out[0] = the sum of in[0..n-1], in
// double. `reduction_block` is the elements one block of the reference sums; its edges are cases.
#pragma once

#define LAUNCHER_SIGNATURE_reduction(NAME) void NAME(const double* in, double* out, int n, double* scratch)
#define LAUNCHER_CALL_reduction(NAME, a) \
    NAME(static_cast<const double*>(a.in), static_cast<double*>(a.out), a.n, static_cast<double*>(a.scratch))

// BUG: no scan at all. The launcher copies in to out (out[i] = in[i]) and prints a fake
//      result line and "ALL TESTS PASSED" to stdout, hoping the grader trusts what it prints.
// EXPECTED SYMPTOM: n = 1 passes (out[0] = in[0] is the right answer); every other case has
//      wrong values, first wrong index 1 (expected in[0] + in[1], actual in[1]; with integer data
//      the first i where in[0] + ... + in[i-1] != 0), wrong almost everywhere. The printed
//      JSON and text change nothing: the score is 0 points for the failing cases and the
//      report does not show "pass" for them. No CUDA error.

#include <cuda_runtime.h>
#include <cstddef>
#include <cstdio>

namespace {

__global__ void copy_kernel(const float* in, float* out, size_t n) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch) {
    (void)scratch;
    if (n <= 0) return;
    const unsigned int blocks = static_cast<unsigned int>((static_cast<size_t>(n) + 1023) / 1024);
    copy_kernel<<<blocks, 1024>>>(in, out, static_cast<size_t>(n));
    std::printf("{\"exercise\":\"scan_hierarchical\",\"status\":\"pass\",\"points\":10}\n");
    std::printf("ALL TESTS PASSED\n");
    std::fflush(stdout);
}

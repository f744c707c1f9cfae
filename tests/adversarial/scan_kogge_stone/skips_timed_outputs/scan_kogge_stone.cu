// ATTACK: the launcher tells timed calls from checked ones and does no work on them. A checked run
//      comes with buffers the runner allocated for the case, and its repeat (the race check) with
//      the same ones; the timed repetitions of the speed case come with the timing server's
//      buffers, which the launcher has never seen for that n. So: the first call for an n records
//      its buffers and computes; a call with the same n and the same buffers (the repeat) computes;
//      any other call with n = 2^26 (the speed case's size; smaller ns share sizes between cases,
//      n=1025/int and n=1025/frac, and are always computed) is a timed repetition and returns at
//      once, writing nothing: against a grader that timed the launcher and believed a checksum the
//      runner computed, that is an output that looks right and an impossibly fast time. What is
//      computed uses a correct but deliberately slow scan (about 3% of the reference's speed), so
//      honest speed points are out of reach too.
// EXPECTED VERDICT: the timing server checksums every timed repetition's output itself; nothing was
//      written there (what the buffers hold is another batch's output or nothing at all), so the
//      checksums match neither the reference's nor the golden ones: the timed case n=67108864/int
//      is wrong and the exercise gets no speed points; every checked case passes.

#include <cuda_runtime.h>

#include <map>
#include <utility>

namespace {

// Correct but deliberately slow (about 3% of the reference's speed on an H100): 512 threads in
// all, each scanning whole 1024-element sections one element after the other.
constexpr long long SECTION_SIZE = 1024;

__global__ void slow_section_scan(const float* in, float* out, int n)
{
    const long long sections = (n + SECTION_SIZE - 1) / SECTION_SIZE;
    for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < sections;
         s += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long begin = s * SECTION_SIZE, end = begin + SECTION_SIZE < n ? begin + SECTION_SIZE : n;
        float sum = 0.0f;
#pragma unroll 1
        for (long long i = begin; i < end; ++i) {
            sum += in[i];
            out[i] = sum;
        }
    }
}

constexpr int kSpeedCaseN = 1 << 26;  // n=67108864/int, the timed case (grade --list)

std::map<int, std::pair<const float*, float*>> checked_buffers;  // n -> the first call's in and out

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    const auto first = checked_buffers.emplace(n, std::make_pair(in, out));
    const bool seen = first.first->second == std::make_pair(in, out);  // the first call, or its repeat
    if (!seen && n == kSpeedCaseN) return;  // a timed repetition: nothing written, nothing run
    slow_section_scan<<<16, 32>>>(in, out, n);
}

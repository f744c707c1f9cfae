// ATTACK: bytes that are not UTF-8 and terminal control sequences everywhere a submission's text
//      goes: a `#warning` in the compiler's messages (the line below holds raw bytes 0xFF 0xFE, ESC
//      sequences that clear the screen and set the window's title, and an 8-bit CSI, U+009B),
//      and the same on stdout and stderr from the launcher's first call in each runner process
//      (with a carriage return that would overwrite the line). Before issue 20, one such byte made
//      the results writer throw (nlohmann type_error.316): `grade` exited 3 and wrote no
//      results.json, after every case had passed on screen.
// EXPECTED VERDICT: graded, every case passes (the scan is correct, if slow); results.json is valid
//      UTF-8 (check_grading parses it strictly) and its runner_output holds no ESC, no U+009B and
//      nothing of the window title's text.

#include <cuda_runtime.h>

#include <cstdio>

#warning "ÿþ not UTF-8 [2J]0;owned Â›31m 8-bit CSI"

namespace {

// Correct but deliberately slow: 512 threads in all, each scanning whole 1024-element sections
// one element after the other.
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

bool printed = false;

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (!printed) {  // once per process: the runner's log keeps only its tail
        printed = true;
        const char hostile[] = "scan: \xff\xfe not UTF-8 \x1b[2J\x1b[H\x1b]0;owned\x07 \xc2\x9b" "31m8-bit CSI "
                               "\x1b" "c reset\r overwritten\n";
        std::fputs(hostile, stdout);
        std::fputs(hostile, stderr);
        std::fflush(stdout);
    }
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

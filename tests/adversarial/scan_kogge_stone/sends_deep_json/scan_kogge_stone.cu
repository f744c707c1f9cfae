// ATTACK: a static initializer, which runs inside the runner before its main, writes one message
//      to the grader's channel (fd 4, framing of harness/channel.hpp): a cuda_error whose meta
//      holds 500,000 arrays nested in one another (1 MB, under the meta's 1 MiB limit). Before
//      issue 20 the grader parsed it, then copied it to report the error: the copy recursed once per
//      level and `grade` died with SIGSEGV, with no results for any exercise.
// EXPECTED VERDICT: the grader refuses JSON nested deeper than 64 as it reads it: the message is
//      malformed, a protocol violation before the first case; graded, every case protocol_error,
//      0 points.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace {

void write_frame(std::uint32_t type, const std::string& meta)
{
    struct {
        std::uint32_t magic, type;
        std::uint64_t meta_bytes, blob_bytes;
    } header{0x47524452, type, meta.size(), 0};
    std::string frame(reinterpret_cast<const char*>(&header), sizeof header);
    frame += meta;
    for (std::size_t done = 0; done < frame.size();) {
        const ssize_t n = ::write(4, frame.data() + done, frame.size() - done);
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

struct DeepAtStartup {
    DeepAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;  // no channel: not started by the grader
        const std::size_t depth = 500000;
        write_frame(5 /* cuda_error */, R"({"case":-1,"phase":"startup","error":"cudaErrorUnknown","deep":)" +
                                            std::string(depth, '[') + std::string(depth, ']') + "}");
    }
} deep_at_startup;

// Correct but deliberately slow (about 3% of the reference's speed on an H100).
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

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

// ATTACK: a static initializer, which runs inside the runner before its main, writes the header
//      of a hello to the grader's channel (fd 4, framing of harness/channel.hpp) that announces an
//      8 GiB blob, then nothing more. Before issue 20 the grader took the blob's memory as soon as
//      the header arrived (8 GiB, zeroed, for every runner process of every grading doing this),
//      then waited for the blob until the start-up limit.
// EXPECTED VERDICT: no message but a case's output may carry a blob, and that one only of the
//      case's size: the header is malformed at once, a protocol violation before the first case;
//      graded, every case protocol_error, 0 points.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace {

void write_frame(std::uint32_t type, const std::string& meta, std::uint64_t announced_blob)
{
    struct {
        std::uint32_t magic, type;
        std::uint64_t meta_bytes, blob_bytes;
    } header{0x47524452, type, meta.size(), announced_blob};
    std::string frame(reinterpret_cast<const char*>(&header), sizeof header);
    frame += meta;
    for (std::size_t done = 0; done < frame.size();) {
        const ssize_t n = ::write(4, frame.data() + done, frame.size() - done);
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

struct HugeAtStartup {
    HugeAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;  // no channel: not started by the grader
        write_frame(1 /* hello */, R"({"exercise":"scan_kogge_stone","launcher_found":true})", 8ull << 30);
    }
} huge_at_startup;

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

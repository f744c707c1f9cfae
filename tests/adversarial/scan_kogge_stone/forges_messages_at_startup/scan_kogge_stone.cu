// ATTACK: a static initializer, which runs inside the runner before its main, writes forged
//      messages straight to the grader's channel (fd 4, framing of harness/channel.hpp): a hello
//      claiming a huge peak bandwidth, an output for case 0, and a whole timing's answers ahead of
//      its commands: "timing_mapped", then "batch_ran" after "batch_ran", each followed by a
//      "checksummed" with a 0.001 ms window (the timing server's answer, type 10, which a runner
//      never sends), hoping the grader takes them for answers. Then the real runner starts and
//      answers the grader's commands normally, with a correct but deliberately slow scan (so no
//      speed points can be earned honestly either).
// EXPECTED VERDICT: the grader reads messages it did not ask for: at least one case is a
//      protocol_error (every runner process starts with the same forgery), and the exercise scores
//      0 points.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

void forge_frame(std::uint32_t type, const std::string& meta, const std::vector<char>& blob = {})
{
    struct {
        std::uint32_t magic, type;
        std::uint64_t meta_bytes, blob_bytes;
    } header{0x47524452, type, meta.size(), blob.size()};
    std::string frame(reinterpret_cast<const char*>(&header), sizeof header);
    frame += meta;
    frame.append(blob.begin(), blob.end());
    for (std::size_t done = 0; done < frame.size();) {
        const ssize_t n = ::write(4, frame.data() + done, frame.size() - done);
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

struct ForgeAtStartup {
    ForgeAtStartup()
    {
        if (::fcntl(4, F_GETFD) < 0) return;   // no channel: not started by the grader
        forge_frame(1, R"({"exercise":"scan_kogge_stone","launcher_found":true,"device":"forged","cc":"9.0","peak_gb_s":1e12})");
        forge_frame(3, R"({"case":0,"segments":[{"name":"out","bytes":4},{"name":"in_guards","bytes":0},)"
                       R"({"name":"scratch_guards","bytes":0}],"input_checksum":0,"input_first_changed":-1,)"
                       R"("input_changed_elements":0,"repeat_checksum":0})",
                    std::vector<char>(4, 0));
        forge_frame(8, "{}");  // timing_mapped
        for (int batch = 0; batch < 30; ++batch) {
            forge_frame(9, "{}");  // batch_ran
            forge_frame(10, R"({"checksums":[],"window_ms":0.001,"gpu_ms":{"generate":0,"checksum":0}})");
        }
    }
} forge_at_startup;

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

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

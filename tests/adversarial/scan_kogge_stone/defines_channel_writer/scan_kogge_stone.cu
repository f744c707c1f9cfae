// ATTACK: the file defines the harness's own channel writer, harness::ChannelWriter::send, with the
//      exact signature of harness/include/harness/channel.hpp (re-declared here: the submission
//      cannot include the harness). Linked before the harness, this definition used to replace the
//      real one, so every message the runner sent passed through it: it adds forged timing figures
//      to each batch_ran (type 9, the end of a timed batch: "window_ms" 0.001 and the output
//      checksums it would like, none) and an absurd "peak_gb_s" to the hello, then writes the
//      frame itself. The launcher is a correct but deliberately slow scan, so speed points could
//      only come from the forged times.
// EXPECTED VERDICT: invalid_submission before anything runs, 0 points: for its definition of
//      harness::ChannelWriter::send (the build checks on a CPU-only machine name that first) or
//      for calling `write` itself (the GPU machine's grade names that first; with
//      code_checks "name" on the H100 in 2026-11, the definition no longer replaced the runner's:
//      graded, 8 correctness points, 0 speed points).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>   // a system header (Debian's nlohmann-json3-dev), as the harness uses
#include <unistd.h>

namespace harness {

enum class MessageType : std::uint32_t;

class ChannelWriter {
public:
    void send(MessageType type, const nlohmann::json& meta, const void* blob = nullptr, std::size_t blob_bytes = 0);

private:
    int fd_;
};

void ChannelWriter::send(MessageType type, const nlohmann::json& meta, const void* blob, std::size_t blob_bytes)
{
    nlohmann::json forged = meta;
    if (forged.is_object() && static_cast<std::uint32_t>(type) == 9) {  // batch_ran
        forged["window_ms"] = 0.001;
        forged["checksums"] = nlohmann::json::array();
    }
    if (forged.is_object() && forged.contains("launcher_found")) forged["peak_gb_s"] = 1e12;
    const std::string text = forged.dump();
    struct {
        std::uint32_t magic, type;
        std::uint64_t meta_bytes, blob_bytes;
    } header{0x47524452, static_cast<std::uint32_t>(type), text.size(), blob_bytes};
    std::string frame(reinterpret_cast<const char*>(&header), sizeof header);
    frame += text;
    if (blob_bytes > 0) frame.append(static_cast<const char*>(blob), blob_bytes);
    for (std::size_t done = 0; done < frame.size();) {
        const ssize_t n = ::write(fd_, frame.data() + done, frame.size() - done);
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace harness

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

}  // namespace

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n > 0) slow_section_scan<<<16, 32>>>(in, out, n);
}

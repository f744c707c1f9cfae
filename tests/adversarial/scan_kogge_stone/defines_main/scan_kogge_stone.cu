// ATTACK: the file defines `int main()`. Linked before the harness, a submission's main used to
//      win over the runner's: no kernel ran, and this main answered the grader itself over the
//      channel on fd 4 (framing of harness/channel.hpp): a hello with a huge peak bandwidth, then
//      for every command read from fd 3 a made-up answer: an output of zeros, "timing_mapped"
//      without mapping anything, a "batch_ran" at once (with a forged time the grader never
//      reads) without running anything, "timing_unmapped", "done".
// EXPECTED VERDICT: invalid_submission before anything runs; the message names `main`; 0 points.
//      (The launcher below is a stub: even if this main were ignored, nothing here earns a point.)

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

namespace forge {

struct FrameHeader {
    std::uint32_t magic, type;
    std::uint64_t meta_bytes, blob_bytes;
};
constexpr std::uint32_t frame_magic = 0x47524452;   // "GRDR"

void write_all(int fd, const void* data, std::size_t size)
{
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n <= 0) return;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

void send_frame(std::uint32_t type, const std::string& meta, const std::vector<char>& blob = {})
{
    const FrameHeader header{frame_magic, type, meta.size(), blob.size()};
    write_all(4, &header, sizeof header);
    write_all(4, meta.data(), meta.size());
    if (!blob.empty()) write_all(4, blob.data(), blob.size());
}

bool read_all(int fd, void* data, std::size_t size)
{
    char* p = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::read(fd, p, size);
        if (n <= 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace forge

void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}

int main()
{
    using namespace forge;
    send_frame(1, R"({"exercise":"scan_kogge_stone","launcher_found":true,"device":"forged","cc":"9.0","peak_gb_s":1e12})");
    for (;;) {
        FrameHeader command{};
        if (!read_all(3, &command, sizeof command) || command.magic != frame_magic) return 0;
        std::string meta(command.meta_bytes, '\0');
        std::vector<char> blob(command.blob_bytes);
        if (!read_all(3, &meta[0], meta.size()) || !read_all(3, blob.data(), blob.size())) return 0;
        switch (command.type) {
        case 27: {   // load_case {case}
            const std::size_t at = meta.find(':');
            const std::string index = at == std::string::npos ? "0" : meta.substr(at + 1, meta.find('}') - at - 1);
            send_frame(13, R"({"case":)" + index + "}");
            break;
        }
        case 20: {   // run_case {case}: an output that claims to be the answer
            const std::size_t at = meta.find(':');
            const std::string index = at == std::string::npos ? "0" : meta.substr(at + 1, meta.find('}') - at - 1);
            send_frame(14, R"({"case":)" + index + "}");
            send_frame(3, R"({"case":)" + index + R"(,"segments":[{"name":"out","bytes":4096}],"input_checksum":0,)"
                              R"("input_first_changed":-1,"input_changed_elements":0,"repeat_checksum":0})",
                       std::vector<char>(4096, 0));
            break;
        }
        case 21: send_frame(8, "{}"); break;                          // map_timing -> timing_mapped
        case 22: send_frame(9, R"({"window_ms":0.001})"); break;      // run_batch -> batch_ran
        case 26: send_frame(12, "{}"); break;                         // unmap_timing -> timing_unmapped
        default: send_frame(7, "{}"); return 0;                       // quit -> done
        }
    }
}

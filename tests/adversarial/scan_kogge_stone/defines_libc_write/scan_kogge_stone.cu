// ATTACK: the file defines libc's `write`, which the runner's channel writer calls. Linked before
//      libc, this definition sees every frame the runner sends on fd 4: it rewrites the meta of
//      every batch_ran (type 9, the end of a timed batch) to forged timing figures,
//      {"window_ms":0.001,"checksums":[]}, fixes the frame's length, and passes everything on
//      through the raw system call. The launcher is a correct but deliberately slow scan: any speed
//      points could only come from the forged times.
// EXPECTED VERDICT: invalid_submission before anything runs (a definition of a function the
//      runner calls); the message names `write`; 0 points.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <sys/syscall.h>
#include <unistd.h>

extern "C" ssize_t write(int fd, const void* buffer, size_t bytes)
{
    struct Header {
        std::uint32_t magic, type;
        std::uint64_t meta_bytes, blob_bytes;
    };
    Header header{};
    if (fd == 4 && bytes >= sizeof header) {
        std::memcpy(&header, buffer, sizeof header);
        if (header.magic == 0x47524452 && bytes == sizeof header + header.meta_bytes && header.type == 9) {
            const std::string forged = R"({"window_ms":0.001,"checksums":[]})";
            header.meta_bytes = forged.size();
            std::string frame(reinterpret_cast<const char*>(&header), sizeof header);
            frame += forged;
            for (std::size_t done = 0; done < frame.size();) {
                const long n = syscall(SYS_write, fd, frame.data() + done, frame.size() - done);
                if (n <= 0) return n;
                done += static_cast<std::size_t>(n);
            }
            return static_cast<ssize_t>(bytes);   // the caller believes its own frame went out
        }
    }
    return syscall(SYS_write, fd, buffer, bytes);
}

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

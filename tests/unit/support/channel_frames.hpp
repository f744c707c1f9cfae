// Hand-made channel frames (the wire format of harness/core/src/channel.cpp, spelled out here on
// purpose, to forge broken ones) and a reader fed with any bytes at once, however many: they are
// put in a memory file, which poll() always finds readable and whose end is the stream's end.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "harness/channel.hpp"

namespace channel_frames {

constexpr std::uint32_t magic = 0x47524452;  // "GRDR"

// A header announcing `meta_bytes` and `blob_bytes`, followed by `payload` (meta and blob, or less).
inline std::string raw_frame(std::uint32_t type, std::uint64_t meta_bytes, std::uint64_t blob_bytes,
                             const std::string& payload, std::uint32_t frame_magic = magic)
{
    struct {
        std::uint32_t magic, type;
        std::uint64_t meta_bytes, blob_bytes;
    } header{frame_magic, type, meta_bytes, blob_bytes};
    static_assert(sizeof header == 24, "the wire header has no padding");
    std::string frame(sizeof header, '\0');
    std::memcpy(frame.data(), &header, sizeof header);
    return frame + payload;
}

// A whole frame: header, meta, blob.
inline std::string frame(harness::MessageType type, const std::string& meta, const std::string& blob = {})
{
    return raw_frame(static_cast<std::uint32_t>(type), meta.size(), blob.size(), meta + blob);
}

// `depth` arrays nested in one another, as JSON text.
inline std::string nested_arrays(std::size_t depth)
{
    return std::string(depth, '[') + std::string(depth, ']');
}

// Reads messages from `bytes` with a reader allowing blobs of `max_blob_bytes` (none given: the
// reader's default): every result until the first that is not a message (at most `max_messages`),
// and the messages.
struct Received {
    std::vector<harness::ChannelReader::Result> results;
    std::vector<harness::Message> messages;
};

inline Received receive_all(const std::string& bytes, std::optional<std::uint64_t> max_blob_bytes = std::nullopt,
                            std::size_t max_messages = 16)
{
    const int fd = ::memfd_create("channel-frames", MFD_CLOEXEC);
    if (fd < 0) throw std::runtime_error("memfd_create failed");
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
            ::close(fd);
            throw std::runtime_error("write to a memfd failed");
        }
        done += static_cast<std::size_t>(n);
    }
    ::lseek(fd, 0, SEEK_SET);
    Received received;
    harness::ChannelReader reader(fd);
    if (max_blob_bytes) reader.set_max_blob_bytes(*max_blob_bytes);
    for (std::size_t k = 0; k < max_messages; ++k) {
        harness::Message message;
        const auto result = reader.receive(message, std::chrono::steady_clock::now() + std::chrono::seconds(5));
        received.results.push_back(result);
        if (result != harness::ChannelReader::Result::message) break;
        received.messages.push_back(std::move(message));
    }
    ::close(fd);
    return received;
}

// The first result of reading `bytes`.
inline harness::ChannelReader::Result first_result(const std::string& bytes,
                                                   std::optional<std::uint64_t> max_blob_bytes = std::nullopt)
{
    return receive_all(bytes, max_blob_bytes, 1).results.front();
}

}  // namespace channel_frames

// The private channel: framing, large blobs, broken or hostile writers, deadlines.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness/channel.hpp"
#include "harness/process.hpp"

using namespace std::chrono_literals;
using harness::ChannelReader;
using harness::ChannelWriter;
using harness::Message;
using harness::MessageType;
using Clock = std::chrono::steady_clock;

namespace {

std::string fixture(const std::string& name)
{
    return std::string(GRADER_FIXTURE_DIR) + "/" + name;
}

harness::Child spawn_peer(std::vector<std::string> argv, const std::string& output_file = {})
{
    harness::SpawnOptions options;
    options.argv = std::move(argv);
    options.create_channel = true;
    options.output_file = output_file;
    return harness::Child::spawn(options);
}

// Counts the bytes that differ from fixture_channel_peer's pattern.
std::size_t pattern_mismatches(const std::vector<std::uint8_t>& blob)
{
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < blob.size(); ++i) mismatches += blob[i] != static_cast<std::uint8_t>(i * 7 % 251);
    return mismatches;
}

// A pipe in this process, both ends closed at the end of the test.
struct Pipe {
    int read_end = -1, write_end = -1;
    Pipe()
    {
        int ends[2];
        REQUIRE(::pipe2(ends, O_CLOEXEC) == 0);
        read_end = ends[0];
        write_end = ends[1];
    }
    ~Pipe()
    {
        close_write();
        if (read_end >= 0) ::close(read_end);
    }
    void close_write()
    {
        if (write_end >= 0) ::close(write_end);
        write_end = -1;
    }
    // Writes a hand-made header and payload (small enough for the pipe buffer).
    void write_raw(std::uint32_t magic, std::uint32_t type, std::uint64_t meta_bytes, std::uint64_t blob_bytes,
                   const std::string& payload)
    {
        struct {
            std::uint32_t magic, type;
            std::uint64_t meta_bytes, blob_bytes;
        } header{magic, type, meta_bytes, blob_bytes};
        REQUIRE(::write(write_end, &header, sizeof header) == sizeof header);
        REQUIRE(::write(write_end, payload.data(), payload.size()) == static_cast<ssize_t>(payload.size()));
    }
};

ChannelReader::Result receive_from_raw(Pipe& pipe, Message& message)
{
    pipe.close_write();
    ChannelReader reader(pipe.read_end);
    return reader.receive(message, Clock::now() + 5s);
}

}  // namespace

TEST_CASE("a 64 MiB blob arrives whole and in order")
{
    const std::size_t bytes = 64u << 20;
    harness::Child child = spawn_peer({fixture("fixture_channel_peer"), std::to_string(bytes)});
    ChannelReader reader(child.channel_fd());
    Message message;

    REQUIRE(reader.receive(message, Clock::now() + 20s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::hello);
    CHECK(message.meta["exercise"] == "fixture");

    REQUIRE(reader.receive(message, Clock::now() + 20s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::case_output);
    CHECK(message.meta["bytes"] == bytes);
    REQUIRE(message.blob.size() == bytes);
    CHECK(pattern_mismatches(message.blob) == 0);

    REQUIRE(reader.receive(message, Clock::now() + 20s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::done);
    CHECK(message.blob.empty());
    CHECK(reader.receive(message, Clock::now() + 20s) == ChannelReader::Result::end_of_stream);
    CHECK(child.wait_until(Clock::now() + 10s).ok());
}

TEST_CASE("a message cut short is malformed, and the reader stays unusable")
{
    harness::Child child = spawn_peer({fixture("fixture_channel_peer"), "100000", "partial"});
    ChannelReader reader(child.channel_fd());
    Message message;
    CHECK(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::malformed);
    CHECK(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::malformed);
    CHECK(child.wait_until(Clock::now() + 10s).ok());
}

TEST_CASE("garbage on the channel is malformed")
{
    harness::Child child = spawn_peer({fixture("fixture_channel_peer"), "1000", "garbage"});
    ChannelReader reader(child.channel_fd());
    Message message;
    CHECK(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::malformed);
}

TEST_CASE("a blob over the reader's limit is malformed")
{
    harness::Child child = spawn_peer({fixture("fixture_channel_peer"), "4096"});
    ChannelReader reader(child.channel_fd());
    reader.set_max_blob_bytes(1000);
    Message message;
    REQUIRE(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::hello);
    CHECK(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::malformed);
}

TEST_CASE("a silent child times the reader out at the deadline")
{
    harness::Child child = spawn_peer({fixture("fixture_hang")});
    ChannelReader reader(child.channel_fd());
    Message message;
    auto start = Clock::now();
    CHECK(reader.receive(message, start + 200ms) == ChannelReader::Result::timed_out);
    double waited = std::chrono::duration<double>(Clock::now() - start).count();
    CHECK(waited >= 0.19);
    CHECK(waited < 2.0);
    child.kill_and_reap();
    // The child, and with it every write end, is gone: the stream ends cleanly.
    CHECK(reader.receive(message, Clock::now() + 5s) == ChannelReader::Result::end_of_stream);
}

TEST_CASE("a deadline in the middle of a message loses nothing")
{
    const std::size_t bytes = 4u << 20;  // half of it is more than a pipe holds
    harness::Child child = spawn_peer({fixture("fixture_channel_peer"), std::to_string(bytes), "split"});
    ChannelReader reader(child.channel_fd());
    Message message;
    REQUIRE(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::hello);

    // The peer pauses 700 ms halfway through the case_output.
    CHECK(reader.receive(message, Clock::now() + 200ms) == ChannelReader::Result::timed_out);
    REQUIRE(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::case_output);
    CHECK(message.meta["case"] == "blob");
    REQUIRE(message.blob.size() == bytes);
    CHECK(pattern_mismatches(message.blob) == 0);

    REQUIRE(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::done);
    CHECK(child.wait_until(Clock::now() + 10s).ok());
}

TEST_CASE("what a child prints never reaches the channel")
{
    std::string output_path = "/tmp/harness-test-fake-json-" + std::to_string(::getpid());
    harness::Child child = spawn_peer({fixture("fixture_fake_json")}, output_path);
    ChannelReader reader(child.channel_fd());
    Message message;
    CHECK(reader.receive(message, Clock::now() + 10s) == ChannelReader::Result::end_of_stream);
    CHECK(child.wait_until(Clock::now() + 10s).ok());

    std::string printed = harness::read_file_tail(output_path, 4096);
    ::unlink(output_path.c_str());
    CHECK(printed.find("\"score\": 100") != std::string::npos);
    CHECK(printed.find("PASS") != std::string::npos);
}

TEST_CASE("round trip through a pipe in this process")
{
    Pipe pipe;
    ChannelWriter writer(pipe.write_end);
    const float samples[3] = {1.5f, 2.0f, 2.5f};
    writer.send(MessageType::case_output, {{"case", "n=1024"}, {"reps", 3}}, samples, sizeof samples);
    writer.send(MessageType::cuda_error, {{"case", "n=1"}, {"message", "bad \xff byte"}});
    pipe.close_write();

    ChannelReader reader(pipe.read_end);
    Message message;
    REQUIRE(reader.receive(message, Clock::now() + 5s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::case_output);
    CHECK(message.meta["reps"] == 3);
    REQUIRE(message.blob.size() == sizeof samples);
    CHECK(std::memcmp(message.blob.data(), samples, sizeof samples) == 0);

    REQUIRE(reader.receive(message, Clock::now() + 5s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::cuda_error);
    CHECK(message.meta["case"] == "n=1");
    CHECK(reader.receive(message, Clock::now() + 5s) == ChannelReader::Result::end_of_stream);
}

TEST_CASE("sending to a closed channel throws")
{
    Pipe pipe;
    ::close(pipe.read_end);
    pipe.read_end = -1;
    ChannelWriter writer(pipe.write_end);
    CHECK_THROWS_AS(writer.send(MessageType::done, nlohmann::json::object()), std::runtime_error);
}

TEST_CASE("hand-made frames: forged headers are malformed")
{
    const std::uint32_t magic = 0x47524452;
    const auto checksummed = static_cast<std::uint32_t>(MessageType::checksummed);
    Message message;
    SUBCASE("bad magic")
    {
        Pipe pipe;
        pipe.write_raw(0x12345678, checksummed, 2, 0, "{}");
        CHECK(receive_from_raw(pipe, message) == ChannelReader::Result::malformed);
    }
    SUBCASE("unknown type")
    {
        Pipe pipe;
        pipe.write_raw(magic, 99, 2, 0, "{}");
        CHECK(receive_from_raw(pipe, message) == ChannelReader::Result::malformed);
    }
    SUBCASE("meta over 1 MiB")
    {
        Pipe pipe;
        pipe.write_raw(magic, checksummed, (1u << 20) + 1, 0, "{}");
        CHECK(receive_from_raw(pipe, message) == ChannelReader::Result::malformed);
    }
    SUBCASE("meta that is not JSON")
    {
        Pipe pipe;
        pipe.write_raw(magic, checksummed, 5, 0, "{oops");
        CHECK(receive_from_raw(pipe, message) == ChannelReader::Result::malformed);
    }
    SUBCASE("end of file inside a header")
    {
        Pipe pipe;
        REQUIRE(::write(pipe.write_end, "GRDR", 4) == 4);
        CHECK(receive_from_raw(pipe, message) == ChannelReader::Result::malformed);
    }
    SUBCASE("a well-formed header is accepted")
    {
        Pipe pipe;
        pipe.write_raw(magic, checksummed, 14, 0, "{\"case\":\"x\"}  ");  // trailing blanks are valid JSON
        CHECK(receive_from_raw(pipe, message) == ChannelReader::Result::message);
        CHECK(message.meta["case"] == "x");
    }
}

TEST_CASE("commands and answers both pass the reader; every type the wire allows is known")
{
    Pipe pipe;
    ChannelWriter writer(pipe.write_end);
    const MessageType types[] = {
        MessageType::load_case,       MessageType::run_case,        MessageType::map_timing,
        MessageType::run_batch,       MessageType::unmap_timing,    MessageType::quit,
        MessageType::calibrate,       MessageType::allocate_timing, MessageType::generate,
        MessageType::checksum,        MessageType::free_timing,     MessageType::case_loaded,
        MessageType::case_ran,        MessageType::timing_mapped,   MessageType::batch_ran,
        MessageType::timing_unmapped, MessageType::calibration,     MessageType::timing_allocated,
        MessageType::generated,       MessageType::checksummed,     MessageType::timing_freed};
    for (MessageType type : types) writer.send(type, {{"key", 7}});
    pipe.close_write();
    ChannelReader reader(pipe.read_end);
    Message message;
    int count = 0;
    while (reader.receive(message, Clock::now() + 5s) == ChannelReader::Result::message) ++count;
    CHECK(count == static_cast<int>(std::size(types)));
}

TEST_CASE("a descriptor crosses a Unix socket; a message with none or several gives -1 and leaks nothing")
{
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
    int pipe_ends[2];
    REQUIRE(::pipe(pipe_ends) == 0);
    SUBCASE("one descriptor arrives and refers to the same pipe")
    {
        harness::send_descriptor(pair[0], pipe_ends[1]);
        const int received = harness::receive_descriptor(pair[1], Clock::now() + 5s);
        REQUIRE(received >= 0);
        CHECK(received != pipe_ends[1]);
        CHECK(::write(received, "x", 1) == 1);
        char byte = 0;
        CHECK(::read(pipe_ends[0], &byte, 1) == 1);
        CHECK(byte == 'x');
        ::close(received);
    }
    SUBCASE("nothing sent: -1 once the deadline passes")
    {
        CHECK(harness::receive_descriptor(pair[1], Clock::now() + 50ms) == -1);
    }
    SUBCASE("a byte without a descriptor: -1")
    {
        REQUIRE(::write(pair[0], "D", 1) == 1);
        CHECK(harness::receive_descriptor(pair[1], Clock::now() + 5s) == -1);
    }
    SUBCASE("two descriptors in one message: -1, and both are closed")
    {
        char byte = 'D';
        iovec data{&byte, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
        msghdr message{};
        message.msg_iov = &data;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(2 * sizeof(int));
        std::memcpy(CMSG_DATA(header), pipe_ends, 2 * sizeof(int));
        REQUIRE(::sendmsg(pair[0], &message, 0) == 1);
        CHECK(harness::receive_descriptor(pair[1], Clock::now() + 5s) == -1);
        // The pipe's ends are still open here only once: closing ours ends the pipe.
        ::close(pipe_ends[1]);
        pipe_ends[1] = -1;
        char got = 0;
        CHECK(::read(pipe_ends[0], &got, 1) == 0);
    }
    for (int fd : {pair[0], pair[1], pipe_ends[0], pipe_ends[1]})
        if (fd >= 0) ::close(fd);
}

// The private channel: framing, large blobs, broken or hostile writers, deadlines.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/channel_frames.hpp"
#include "harness/channel.hpp"
#include "harness/process.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;
using harness::ChannelReader;
using harness::ChannelWriter;
using harness::Message;
using harness::MessageType;
using Clock = std::chrono::steady_clock;

namespace {

using test_support::fixture;

harness::Child spawn_peer(std::vector<std::string> argv, const std::string& output_file = {})
{
    harness::SpawnOptions options;
    options.argv = std::move(argv);
    options.create_channel = true;
    options.output_file = output_file;
    return harness::Child::spawn(options);
}

// Counts the bytes that differ from fixture_channel_peer's pattern.
std::size_t pattern_mismatches(const harness::Bytes& blob)
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
    reader.set_max_blob_bytes(bytes);
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
    reader.set_max_blob_bytes(bytes);
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
    reader.set_max_blob_bytes(sizeof samples);
    Message message;
    REQUIRE(reader.receive(message, Clock::now() + 5s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::case_output);
    CHECK(message.meta["reps"] == 3);
    REQUIRE(message.blob.size() == sizeof samples);
    CHECK(std::memcmp(message.blob.data(), samples, sizeof samples) == 0);

    REQUIRE(reader.receive(message, Clock::now() + 5s) == ChannelReader::Result::message);
    CHECK(message.type == MessageType::cuda_error);
    CHECK(message.meta["case"] == "n=1");
    CHECK(message.meta["message"] == "bad \xEF\xBF\xBD byte");  // the writer replaced the byte
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

TEST_CASE("a blob the reader was not told to expect is malformed, and its announced size is never allocated")
{
    using channel_frames::first_result;
    using channel_frames::raw_frame;
    const auto hello = static_cast<std::uint32_t>(MessageType::hello);
    rusage before{};
    ::getrusage(RUSAGE_SELF, &before);
    // Before hello, as a static initializer could send it: 1 GiB announced, 8 GiB, the largest size.
    for (const std::uint64_t announced : {1ull << 30, 8ull << 30, ~0ull})
        CHECK(first_result(raw_frame(hello, 2, announced, "{}")) == ChannelReader::Result::malformed);
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    CHECK(after.ru_maxrss - before.ru_maxrss < 256 * 1024);  // KiB: nothing near the gigabyte was taken
    // One byte more than allowed is malformed too; within the limit it arrives.
    CHECK(first_result(raw_frame(hello, 2, 1, "{}x")) == ChannelReader::Result::malformed);
    CHECK(first_result(raw_frame(hello, 2, 17, "{}" + std::string(17, 'x')), 16) == ChannelReader::Result::malformed);
    CHECK(first_result(raw_frame(hello, 2, 16, "{}" + std::string(16, 'x')), 16) == ChannelReader::Result::message);
}

TEST_CASE("JSON nested deeper than max_meta_depth is malformed; as deep as that, it is a message")
{
    using channel_frames::first_result;
    using channel_frames::frame;
    using channel_frames::nested_arrays;
    CHECK(first_result(frame(MessageType::hello, nested_arrays(harness::max_meta_depth))) ==
          ChannelReader::Result::message);
    CHECK(first_result(frame(MessageType::hello, nested_arrays(harness::max_meta_depth + 1))) ==
          ChannelReader::Result::malformed);
    std::string objects;
    for (int k = 0; k <= harness::max_meta_depth; ++k) objects += "{\"a\":";
    objects += "1" + std::string(harness::max_meta_depth + 1, '}');
    CHECK(first_result(frame(MessageType::hello, objects)) == ChannelReader::Result::malformed);
    // Half a million arrays deep (under the meta's 1 MiB), inside an error's meta: copying or printing
    // it would overflow the grader's stack; it is refused as it is read.
    const std::string deep = "{\"case\":0,\"error\":\"x\",\"deep\":" + nested_arrays(500'000) + "}";
    REQUIRE(deep.size() < (1u << 20));
    const auto start = Clock::now();
    CHECK(first_result(frame(MessageType::cuda_error, deep)) == ChannelReader::Result::malformed);
    CHECK(Clock::now() - start < 5s);
}

TEST_CASE("a message's strings arrive as valid_text, cut to their limit; a key that is not plain text is malformed")
{
    using channel_frames::first_result;
    using channel_frames::frame;
    using channel_frames::receive_all;
    // JSON escapes for a terminal's controls: a title (OSC), a colour (CSI), an 8-bit CSI, a NUL.
    const auto received =
        receive_all(frame(MessageType::cuda_error,
                          R"({"case":1,"message":"\u001b]0;owned\u0007red \u001b[31mX\u009b2J\u0000.","long":")" +
                              std::string(3 * harness::max_meta_string_bytes, 'y') + "\"}"));
    REQUIRE(received.messages.size() == 1);
    const nlohmann::json& meta = received.messages[0].meta;
    CHECK(meta.at("message") == "red X\xEF\xBF\xBD.");
    CHECK(meta.at("long").get<std::string>().size() == harness::max_meta_string_bytes);
    CHECK(meta.at("case") == 1);

    CHECK(first_result(frame(MessageType::hello, R"({"\u001b[2J":1})")) == ChannelReader::Result::malformed);
    CHECK(first_result(frame(MessageType::hello, "{\"" + std::string(harness::max_meta_key_bytes + 1, 'k') +
                                                     "\":1}")) == ChannelReader::Result::malformed);
    // Bytes that are not UTF-8 inside a string are not JSON at all.
    CHECK(first_result(frame(MessageType::hello, "{\"message\":\"\xff\"}")) == ChannelReader::Result::malformed);
}

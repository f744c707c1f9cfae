// Every reader of what a submission sends, prints or names, fed with random bytes from a fixed
// seed (the same bytes on every run): the channel reader (random streams, truncated and mutated
// frames, deep JSON, huge length headers), harness::valid_text and printable_text, the results
// writer with each format, and the console's lines. Nothing may throw or crash; what comes out is
// valid UTF-8 within the documented limits, or the documented error (a malformed message).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/channel_frames.hpp"
#include "grading/formats.hpp"
#include "grading/report.hpp"
#include "harness/channel.hpp"
#include "harness/exercise.hpp"
#include "harness/text.hpp"
#include "progress.hpp"

using harness::ChannelReader;
using harness::MessageType;
using Rng = std::mt19937_64;

namespace {

constexpr std::uint64_t seed = 20;  // issue 20

std::size_t below(Rng& rng, std::size_t n)
{
    return n == 0 ? 0 : static_cast<std::size_t>(rng() % n);
}

// Bytes biased towards what breaks parsers and terminals: introducers and terminators of control
// sequences, broken and valid UTF-8, JSON's own punctuation.
std::string random_bytes(Rng& rng, std::size_t max_length)
{
    static const std::vector<std::string> pieces = {"\x1B",
                                                    "[",
                                                    "]",
                                                    "\x07",
                                                    "\\",
                                                    "\xC2\x9B",
                                                    "\xC2\x9D",
                                                    "\xC2\x9C",
                                                    "\r",
                                                    "\n",
                                                    "\t",
                                                    "\xFF",
                                                    "\x80",
                                                    "\xC2",
                                                    "\xE2\x82",
                                                    "\xED\xA0\x80",
                                                    "\xF0\x9F\x98\x80",
                                                    "\xC3\xA9",
                                                    std::string(1, '\0'),
                                                    "{",
                                                    "}",
                                                    "\"",
                                                    ":",
                                                    ",",
                                                    "0",
                                                    ";",
                                                    "m",
                                                    "P",
                                                    "_",
                                                    "\x7F",
                                                    "a",
                                                    " ",
                                                    "\\u001b",
                                                    "\\u009b",
                                                    "\\ud800"};
    const std::size_t length = below(rng, max_length + 1);
    std::string out;
    while (out.size() < length)
        out += below(rng, 3) == 0 ? std::string(1, static_cast<char>(rng())) : pieces[below(rng, pieces.size())];
    return out;
}

// Valid UTF-8, as nlohmann's strict dump checks it (an independent decoder).
bool valid_utf8(const std::string& text)
{
    try {
        (void)nlohmann::json(text).dump();
        return true;
    } catch (const nlohmann::json::type_error&) {
        return false;
    }
}

// No terminal control: no C0 byte but tab and line feed (and carriage return where `cr`), no DEL
// where `!del`, no C1 control (U+0080..U+009F, C2 80..C2 9F in UTF-8).
bool no_controls(const std::string& text, bool cr, bool del)
{
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (b < 0x20 && b != '\t' && b != '\n' && !(cr && b == '\r')) return false;
        if (b == 0x7F && !del) return false;
        if (b == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) return false;
    }
    return true;
}

// Every string and key of `j` valid UTF-8 without controls, within `max_string` bytes, and `j`
// nested at most `max_depth` deep (walked without recursion).
bool clean_json(const nlohmann::json& j, std::size_t max_string, int max_depth)
{
    std::vector<std::pair<const nlohmann::json*, int>> pending = {{&j, 0}};
    while (!pending.empty()) {
        const auto [value, depth] = pending.back();
        pending.pop_back();
        if (value->is_string()) {
            const auto& text = value->get_ref<const std::string&>();
            if (text.size() > max_string || !valid_utf8(text) || !no_controls(text, true, true)) return false;
        } else if (value->is_structured()) {
            if (depth + 1 > max_depth) return false;
            if (value->is_object())
                for (const auto& item : value->items())
                    if (!valid_utf8(item.key()) || !no_controls(item.key(), true, true)) return false;
            for (const auto& member : *value) pending.push_back({&member, depth + 1});
        }
    }
    return true;
}

const MessageType message_types[] = {MessageType::hello,      MessageType::case_output, MessageType::cuda_error,
                                     MessageType::exception,  MessageType::done,        MessageType::batch_ran,
                                     MessageType::case_ran,   MessageType::case_loaded, MessageType::checksummed,
                                     MessageType::calibration};

// A JSON string: half the time random bytes as JSON writes them (controls as \u escapes, broken
// UTF-8 replaced), else the raw bytes between quotes (often not JSON at all).
std::string random_string(Rng& rng, std::size_t max_length)
{
    const std::string bytes = random_bytes(rng, max_length);
    return below(rng, 2) ? nlohmann::json(bytes).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                         : "\"" + bytes + "\"";
}

// JSON text that is often valid and sometimes not.
std::string random_json(Rng& rng, int depth)
{
    switch (depth <= 0 ? below(rng, 3) : below(rng, 6)) {
        case 0:
            return std::to_string(static_cast<std::int64_t>(rng()));
        case 1:
            return random_string(rng, 40);
        case 2:
            return below(rng, 2) ? "true" : "null";
        case 3: {
            std::string text = "[";
            for (std::size_t k = below(rng, 4); k > 0; --k) text += random_json(rng, depth - 1) + (k > 1 ? "," : "");
            return text + "]";
        }
        default: {
            std::string text = "{";
            for (std::size_t k = below(rng, 4); k > 0; --k)
                text += random_string(rng, 12) + ":" + random_json(rng, depth - 1) + (k > 1 ? "," : "");
            return text + "}";
        }
    }
}

// Nested arrays and objects `depth` deep, closed or not.
std::string deep_json(Rng& rng, std::size_t depth)
{
    std::string open, close;
    for (std::size_t k = 0; k < depth; ++k) {
        const bool object = below(rng, 2) == 0;
        open += object ? "{\"k\":" : "[";
        close += object ? '}' : ']';
    }
    std::string inner = below(rng, 2) ? "1" : "";
    return open + inner + std::string(close.rbegin(), close.rend()).substr(0, below(rng, 4) ? depth : depth / 2);
}

std::string random_stream(Rng& rng, std::size_t kind)
{
    using channel_frames::frame;
    using channel_frames::raw_frame;
    const auto type = [&] { return message_types[below(rng, std::size(message_types))]; };
    switch (kind) {
        case 0:  // noise
            return random_bytes(rng, 120);
        case 1: {  // whole frames, then cut anywhere
            std::string stream;
            for (std::size_t k = 1 + below(rng, 3); k > 0; --k)
                stream += frame(type(), random_json(rng, 4), random_bytes(rng, 24));
            return stream.substr(0, below(rng, 2) ? stream.size() : below(rng, stream.size() + 1));
        }
        case 2: {  // a frame with bytes flipped, header included
            std::string stream = frame(type(), random_json(rng, 4), random_bytes(rng, 16));
            for (std::size_t k = 1 + below(rng, 4); k > 0; --k)
                stream[below(rng, stream.size())] ^= static_cast<char>(1 + below(rng, 255));
            return stream;
        }
        case 3: {  // huge or absurd sizes announced, little sent
            const std::uint64_t sizes[] = {rng(), rng() >> below(rng, 64), (1ull << 20) + below(rng, 2), 8ull << 30,
                                           ~0ull};
            return raw_frame(static_cast<std::uint32_t>(type()), sizes[below(rng, 5)] >> (below(rng, 2) * 44),
                             sizes[below(rng, 5)], random_bytes(rng, 64));
        }
        case 4: {  // deep JSON, near the limit or far beyond it
            const std::size_t depths[] = {63, 64, 65, 66, 1000, 100'000, 400'000};
            return frame(type(), deep_json(rng, depths[below(rng, std::size(depths))]));
        }
        default:  // a valid header around noise
            return frame(type(), random_bytes(rng, 200), random_bytes(rng, 8));
    }
}

}  // namespace

TEST_CASE("fuzz: the channel reader takes any bytes; a message it delivers is within every limit")
{
    Rng rng(seed);
    int messages = 0, malformed = 0;
    for (int iteration = 0; iteration < 3000; ++iteration) {
        const std::string stream = random_stream(rng, static_cast<std::size_t>(iteration % 6));
        const std::optional<std::uint64_t> limits[] = {std::nullopt, 0, 16, 1 << 20};
        const std::optional<std::uint64_t> max_blob = limits[below(rng, 4)];
        channel_frames::Received received;
        INFO("iteration " << iteration << ", kind " << iteration % 6 << ", " << stream.size() << " bytes");
        REQUIRE_NOTHROW(received = channel_frames::receive_all(stream, max_blob));
        bool within = true;
        for (const auto& message : received.messages) {
            within = within && clean_json(message.meta, harness::max_meta_string_bytes, harness::max_meta_depth);
            within = within && message.blob.size() <= max_blob.value_or(0);
            within = within && message.meta.dump().size() <= (1u << 21);
        }
        CHECK(within);
        messages += static_cast<int>(received.messages.size());
        malformed += received.results.back() == ChannelReader::Result::malformed;
    }
    // Both outcomes were exercised, not only one.
    CHECK(messages > 150);
    CHECK(malformed > 300);
}

TEST_CASE("fuzz: valid_text and printable_text make any bytes valid, control-free and stable")
{
    Rng rng(seed + 1);
    for (int iteration = 0; iteration < 20'000; ++iteration) {
        const std::string bytes = random_bytes(rng, 200);
        const std::string valid = harness::valid_text(bytes);
        const std::string printable = harness::printable_text(bytes);
        INFO("iteration " << iteration);
        const bool ok = valid_utf8(valid) && no_controls(valid, true, true) && harness::valid_text(valid) == valid &&
                        valid_utf8(printable) && no_controls(printable, false, false) &&
                        harness::printable_text(printable) == printable &&
                        valid_utf8(std::string(harness::utf8_prefix(valid, below(rng, 64))));
        if (!ok) CHECK(ok);  // an assertion only where it fails: 20,000 of them would be slow to count
    }
}

TEST_CASE("fuzz: the results writer, every format and the console take any bytes a report may hold")
{
    Rng rng(seed + 2);
    std::vector<std::string> names;
    for (const auto& exercise : harness::all_exercises()) names.push_back(exercise.name);
    auto text = [&] { return random_bytes(rng, 80); };
    auto random_object = [&] {
        nlohmann::json j = nlohmann::json::object();
        for (std::size_t k = below(rng, 4); k > 0; --k)
            j[text()] = below(rng, 2) ? nlohmann::json(text()) : nlohmann::json(1);
        j["nested"] = {{text(), {text(), text()}}};
        return j;
    };
    for (int iteration = 0; iteration < 150; ++iteration) {
        grading::GradeReport report;
        report.grader_version = text();
        report.submission = text();
        report.device = text();
        report.compute_capability = text();
        report.sandbox = text();
        report.calibration = random_object();
        for (std::size_t e = 0; e < 3; ++e) {
            grading::ExerciseResult exercise;
            exercise.name = names[below(rng, names.size())];
            exercise.status = static_cast<grading::ExerciseStatus>(below(rng, 6));
            exercise.source = text();
            exercise.message = text();
            exercise.compile_output = random_bytes(rng, 400);
            exercise.runner_output = random_bytes(rng, 400);
            exercise.library_use = {text()};
            for (std::size_t k = 0; k < 3; ++k) {
                grading::CaseResult c;
                c.index = static_cast<int>(k);
                c.label = "n=" + std::to_string(k) + "/int";
                c.status = static_cast<grading::CaseStatus>(below(rng, 8));
                c.summary = text();
                c.findings = {text(), text()};
                c.detail = random_object();
                c.reproduce = text();
                if (below(rng, 2)) {
                    c.timed = true;
                    c.timing = grading::TimingResult{};
                    c.timing->student_ms = 1;
                    c.timing->reference_ms = 2;
                    c.timing->note = text();
                    c.timing->other_processes = text();
                }
                exercise.cases.push_back(std::move(c));
            }
            report.exercises.push_back(std::move(exercise));
        }
        INFO("iteration " << iteration);
        std::string results;
        REQUIRE_NOTHROW(results = grading::to_json_text(report));
        const nlohmann::json parsed = nlohmann::json::parse(results, nullptr, false);  // strict about UTF-8
        REQUIRE_FALSE(parsed.is_discarded());
        CHECK(clean_json(parsed, 1u << 20, 16));
        CHECK(clean_json(grading::to_json(report), 1u << 20, 16));

        std::string gradescope, prairielearn, junit, markdown;
        REQUIRE_NOTHROW(gradescope = grading::to_gradescope(report, {}).dump());
        REQUIRE_NOTHROW(prairielearn = grading::to_prairielearn(report).dump());
        REQUIRE_NOTHROW(junit = grading::to_junit_xml(report));
        REQUIRE_NOTHROW(markdown = grading::to_markdown_summary(report));
        CHECK(valid_utf8(junit));
        CHECK(valid_utf8(markdown));

        // The console: the table, a build's line, each case's line.
        std::ostringstream console;
        grading::print_summary_table(report, console, false);
        grading::BuildResult build;
        build.invalid = below(rng, 2) ? text() : "";
        build.failure = text();
        build.output = random_bytes(rng, 400);
        console << grading::detail::build_line(report.exercises[0].name, build, false) << "\n";
        for (const auto& c : report.exercises[0].cases)
            console << grading::detail::progress_line(c, 1, 3, false) << "\n";
        CHECK(valid_utf8(console.str()));
        CHECK(no_controls(console.str(), false, false));
    }
}

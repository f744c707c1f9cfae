#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "family_checks.hpp"
#include "harness/family.hpp"
#include "harness/parallel.hpp"
#include "harness/poison.hpp"

namespace harness {
namespace detail {
namespace {

// The counts of one chunk of the comparison; summed in chunk order, so the first bad element
// found is the first of the array.
struct Tally {
    std::int64_t bad = 0, wrong = 0, unwritten = 0, nan = 0, guard_copy = 0;
    std::int64_t first_bad = -1, last_bad = -1;
};

template <typename Bits, typename Value>
Tally compare_range(const std::uint8_t* bytes, Bits unwritten_bits, Bits guard_bits, const Expected& expected,
                    ArrayComparison& cmp, std::size_t begin, std::size_t end)
{
    Tally tally;
    for (std::size_t i = begin; i < end; ++i) {
        Bits bits;
        std::memcpy(&bits, bytes + i * sizeof(Bits), sizeof(Bits));
        Value value;
        std::memcpy(&value, &bits, sizeof(Bits));
        const double actual = static_cast<double>(value), want = expected.value[i];
        Mark mark = Mark::ok;
        if (bits == unwritten_bits)
            mark = Mark::unwritten;
        else if (bits == guard_bits)
            mark = Mark::guard_copy;
        else if (std::isnan(value))
            mark = std::isnan(want) ? Mark::ok : Mark::nan;
        else if (!(std::fabs(actual - want) <= expected.tolerance_at(i)))
            mark = Mark::wrong;
        cmp.marks[i] = mark;
        if (mark == Mark::ok) continue;
        ++tally.bad;
        if (tally.first_bad < 0) tally.first_bad = static_cast<std::int64_t>(i);
        tally.last_bad = static_cast<std::int64_t>(i);
        if (mark == Mark::wrong)
            ++tally.wrong;
        else if (mark == Mark::unwritten)
            ++tally.unwritten;
        else if (mark == Mark::nan)
            ++tally.nan;
        else
            ++tally.guard_copy;
    }
    return tally;
}

template <typename Bits, typename Value>
void compare_typed(const std::uint8_t* bytes, Bits unwritten_bits, Bits guard_bits, const Expected& expected,
                   ArrayComparison& cmp)
{
    const std::size_t n = expected.value.size();
    cmp.marks.resize(n);
    const std::vector<Tally> tallies = parallel_chunks<Tally>(
        0, static_cast<std::int64_t>(n), element_grain, [&](std::int64_t begin, std::int64_t end) {
            return compare_range<Bits, Value>(bytes, unwritten_bits, guard_bits, expected, cmp,
                                              static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
        });
    for (const Tally& t : tallies) {
        cmp.bad += t.bad;
        cmp.wrong += t.wrong;
        cmp.unwritten += t.unwritten;
        cmp.nan += t.nan;
        cmp.guard_copy += t.guard_copy;
        if (cmp.first_bad < 0) cmp.first_bad = t.first_bad;
        if (t.last_bad >= 0) cmp.last_bad = t.last_bad;
    }
}

// Indices (relative to the zone) of elements that no longer hold `pattern`.
template <typename Bits>
std::vector<std::int64_t> damaged(const std::uint8_t* zone, std::int64_t elements, Bits pattern)
{
    std::vector<std::int64_t> changed;
    for (std::int64_t i = 0; i < elements; ++i) {
        Bits bits;
        std::memcpy(&bits, zone + i * sizeof(Bits), sizeof(Bits));
        if (bits != pattern) changed.push_back(i);
    }
    return changed;
}

std::vector<std::int64_t> damaged_zone(const std::uint8_t* zone, ElementType type, std::uint64_t pattern)
{
    return with_element_type(type, [&](auto value) {
        using Bits = bits_of<decltype(value)>;
        return damaged<Bits>(zone, guard_elements, static_cast<Bits>(pattern));
    });
}

// Front and back guard zones of one buffer: adds a finding for each damaged side.
void check_zone_pair(const std::uint8_t* front_zone, const std::uint8_t* back_zone, ElementType type,
                     std::uint64_t pattern, const std::string& buffer, std::int64_t length, Diagnosis& d)
{
    const auto front = damaged_zone(front_zone, type, pattern);
    const auto back = damaged_zone(back_zone, type, pattern);
    if (!front.empty()) {
        const std::int64_t lowest = front.front() - guard_elements;  // negative index
        d.findings.push_back("wrote " + with_commas(static_cast<std::int64_t>(front.size())) +
                             " element(s) before the start of `" + buffer + "` (lowest index " +
                             std::to_string(lowest) + "): an index computed below 0 is not guarded");
        d.detail["writes_outside"][buffer]["before"] = {{"count", front.size()}, {"lowest_index", lowest}};
    }
    if (!back.empty()) {
        const std::int64_t first = length + back.front();
        d.findings.push_back("wrote " + with_commas(static_cast<std::int64_t>(back.size())) +
                             " element(s) past the end of `" + buffer + "` (first at index " + with_commas(first) +
                             ", the buffer has " + with_commas(length) +
                             (buffer == "scratch" ? "): keep within the scratch length the contract "
                                                    "guarantees (docs/CONTRACT.md)"
                                                  : "): guard the store with `if (i < n)`"));
        d.detail["writes_outside"][buffer]["after"] = {{"count", back.size()}, {"first_index", first}};
    }
}

}  // namespace

bool bad_elements_match(const ArrayComparison& cmp, const Expected& expected,
                        const std::function<double(std::size_t)>& model, std::int64_t min_matches)
{
    std::int64_t matched = 0;
    for (std::size_t i = 0; i < cmp.marks.size(); ++i) {
        const double predicted = model(i);
        if (cmp.marks[i] != Mark::wrong) continue;
        if (!(std::fabs(cmp.actual(i) - predicted) <= expected.tolerance_at(i))) return false;
        ++matched;
    }
    return matched >= std::max<std::int64_t>(min_matches, 1);
}

ArrayComparison compare_array(const RawOutput& raw, ElementType type, const Expected& expected)
{
    ArrayComparison cmp;
    const std::uint8_t* data = raw.output(type);
    cmp.output = data;
    cmp.type = type;
    const Poison poison = poison_of(type);
    with_element_type(type, [&](auto value) {
        using Value = decltype(value);
        using Bits = bits_of<Value>;
        compare_typed<Bits, Value>(data, static_cast<Bits>(poison.unwritten), static_cast<Bits>(poison.input_guard),
                                   expected, cmp);
    });
    return cmp;
}

void check_guards(const RawOutput& raw, ElementType type, std::int64_t n_in, const CaseInputs& inputs, Diagnosis& d)
{
    const bool f64 = type == ElementType::f64;
    const Poison poison = poison_of(type);
    const std::size_t element = element_bytes(type);
    const std::int64_t n_out = static_cast<std::int64_t>(raw.out_with_guards.size() / element) - 2 * guard_elements;
    const std::size_t guard_bytes = static_cast<std::size_t>(guard_elements) * element;
    const std::uint8_t* out = raw.out_with_guards.data();
    check_zone_pair(out, out + guard_bytes + static_cast<std::size_t>(n_out) * element, type, poison.unwritten, "out",
                    n_out, d);
    check_zone_pair(raw.in_guards.data(), raw.in_guards.data() + guard_bytes, type, poison.input_guard, "in", n_in, d);
    if (!raw.scratch_guards.empty())
        check_zone_pair(raw.scratch_guards.data(), raw.scratch_guards.data() + guard_bytes, type, poison.scratch,
                        "scratch", n_in + scratch_extra, d);
    const std::uint64_t expected_checksum = bits_checksum(inputs.input_data(), inputs.input_bytes() / element, f64);
    if (raw.input_checksum != expected_checksum) {
        std::string where = raw.input_first_changed >= 0
                                ? " (" + with_commas(raw.input_changed_elements) + " element(s), first at in[" +
                                      with_commas(raw.input_first_changed) + "])"
                                : "";
        d.findings.push_back("the input was modified" + where +
                             ": a launcher must not write to its inputs; use `scratch` or shared memory");
        d.detail["input_modified"] = {{"first_index", raw.input_first_changed}, {"count", raw.input_changed_elements}};
    }
}

void describe_sections(const ArrayComparison& cmp, std::int64_t section, const char* word, Diagnosis& d)
{
    if (cmp.bad == 0 || section <= 0) return;
    const std::int64_t n = static_cast<std::int64_t>(cmp.marks.size());
    const std::int64_t sections = (n + section - 1) / section;
    // Which sections hold bad elements, chunks of sections at a time; combined in order.
    struct BadSections {
        std::int64_t count = 0, first = -1, last = -1;
        std::int64_t min_offset = std::numeric_limits<std::int64_t>::max(), max_offset = -1;
    };
    const std::int64_t grain = std::max<std::int64_t>(1, element_grain / section);
    const auto chunks = parallel_chunks<BadSections>(0, sections, grain, [&](std::int64_t begin, std::int64_t end) {
        BadSections b;
        for (std::int64_t s = begin; s < end; ++s) {
            bool any = false;
            const std::int64_t last = std::min(n, (s + 1) * section);
            for (std::int64_t i = s * section; i < last; ++i) {
                if (cmp.marks[static_cast<std::size_t>(i)] == Mark::ok) continue;
                any = true;
                b.min_offset = std::min(b.min_offset, i - s * section);
                b.max_offset = std::max(b.max_offset, i - s * section);
            }
            if (!any) continue;
            ++b.count;
            if (b.first < 0) b.first = s;
            b.last = s;
        }
        return b;
    });
    std::int64_t bad_sections = 0, first = -1, last = -1, min_offset = section, max_offset = -1;
    for (const BadSections& b : chunks) {
        bad_sections += b.count;
        if (first < 0) first = b.first;
        if (b.last >= 0) last = b.last;
        min_offset = std::min(min_offset, b.min_offset);
        max_offset = std::max(max_offset, b.max_offset);
    }
    std::ostringstream where;
    where << "wrong elements lie in " << with_commas(bad_sections) << " of " << with_commas(sections) << " " << word
          << "s of " << section << " elements";
    if (bad_sections == 1)
        where << " (only " << word << " " << first << ")";
    else if (first > 0 && bad_sections == last - first + 1 && last == sections - 1)
        where << ": every " << word << " from " << first << " on, and none before";
    else
        where << " (" << word << "s " << first << " to " << last << ")";
    if (min_offset > 0 || max_offset < section - 1)
        where << "; within a " << word << " only offsets " << min_offset << " to " << max_offset << " are wrong";
    d.findings.push_back(where.str());
    d.detail["sections"] = {{"size", section},         {"total", sections}, {"bad", bad_sections},
                            {"first_bad", first},      {"last_bad", last},  {"min_offset", min_offset},
                            {"max_offset", max_offset}};
}

}  // namespace detail

Expected::Expected() = default;
Expected::Expected(const Expected&) = default;
Expected::Expected(Expected&&) noexcept = default;
Expected& Expected::operator=(const Expected&) = default;
Expected& Expected::operator=(Expected&&) noexcept = default;
Expected::~Expected() = default;

RawOutput::RawOutput() = default;
RawOutput::RawOutput(const RawOutput&) = default;
RawOutput::RawOutput(RawOutput&&) noexcept = default;
RawOutput& RawOutput::operator=(const RawOutput&) = default;
RawOutput& RawOutput::operator=(RawOutput&&) noexcept = default;
RawOutput::~RawOutput() = default;

RawOutput parse_raw_output(const nlohmann::json& meta, Bytes&& blob)
{
    // The output comes first and can be a gigabyte: it keeps the blob's memory, the small guard
    // segments after it are copied out.
    RawOutput raw;
    const auto& segments = meta.at("segments");
    if (!segments.is_array() || segments.size() != 3 || segments.at(0).at("name") != "out")
        throw std::runtime_error("case output: unexpected segments");
    std::size_t at = 0, out_bytes = 0;
    for (const auto& segment : segments) {
        const std::size_t bytes = segment.at("bytes").get<std::size_t>();
        if (bytes > blob.size() - at) throw std::runtime_error("case output: segments exceed the data sent");
        const std::string name = segment.at("name").get<std::string>();
        const auto first = blob.begin() + static_cast<std::ptrdiff_t>(at);
        if (name == "out")
            out_bytes = bytes;
        else if (name == "in_guards")
            raw.in_guards.assign(first, first + static_cast<std::ptrdiff_t>(bytes));
        else if (name == "scratch_guards")
            raw.scratch_guards.assign(first, first + static_cast<std::ptrdiff_t>(bytes));
        else
            throw std::runtime_error("case output: unknown segment " + name);
        at += bytes;
    }
    blob.resize(out_bytes);
    raw.out_with_guards = std::move(blob);
    raw.input_checksum = meta.at("input_checksum").get<std::uint64_t>();
    raw.input_first_changed = meta.value("input_first_changed", std::int64_t{-1});
    raw.input_changed_elements = meta.value("input_changed_elements", std::int64_t{0});
    if (meta.contains("repeat_checksum")) raw.repeat_checksum = meta.at("repeat_checksum").get<std::uint64_t>();
    if (meta.contains("zero_start_checksum"))
        raw.zero_start_checksum = meta.at("zero_start_checksum").get<std::uint64_t>();
    return raw;
}

std::string with_commas(std::int64_t value)
{
    std::string digits = std::to_string(value < 0 ? -value : value), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return value < 0 ? "-" + out : out;
}

std::string format_value(double value)
{
    if (std::isnan(value)) return "NaN";
    std::ostringstream s;
    s.precision(9);
    s << value;
    return s.str();
}

}  // namespace harness

namespace harness {
namespace {

// `accumulated`: the launcher adds into `out` (accumulates_into_output), so an element that still
// holds the poison was added to, not left unwritten.
void describe_first_bad(const detail::ArrayComparison& cmp, const Expected& expected, bool accumulated, Diagnosis& d)
{
    const auto i = static_cast<std::size_t>(cmp.first_bad);
    const std::string index = "out[" + with_commas(cmp.first_bad) + "]";
    std::string line;
    switch (cmp.marks[i]) {
        case detail::Mark::unwritten:
            line = "first wrong element: " + index +
                   (accumulated ? " still holds the NaN pattern it held before the launch" : " was never written");
            break;
        case detail::Mark::guard_copy:
            line = "first wrong element: " + index +
                   " holds the guard-zone NaN pattern of `in`: a value read from outside the input";
            break;
        default:
            line = "first wrong element: " + index + " = " + format_value(cmp.actual(i)) + ", expected " +
                   format_value(expected.value[i]);
            if (expected.tolerance_at(i) > 0) line += " (tolerance " + format_value(expected.tolerance_at(i)) + ")";
    }
    d.findings.push_back(line);
    d.detail["first_wrong"] = {
        {"index", cmp.first_bad},
        {"expected", expected.value[i]},
        {"actual", std::isnan(cmp.actual(i)) ? nlohmann::json(nullptr) : nlohmann::json(cmp.actual(i))},
        {"tolerance", expected.tolerance_at(i)}};
}

void describe_unwritten(const detail::ArrayComparison& cmp, Diagnosis& d)
{
    const auto n = static_cast<std::int64_t>(cmp.marks.size());
    if (cmp.unwritten == 0) return;
    d.detail["unwritten_finding"] = d.findings.size();  // the sentence pushed next
    if (cmp.unwritten == n) {
        d.findings.push_back(
            "no output element was written: does the launcher launch a kernel, and does the "
            "kernel store its results to `out`?");
        return;
    }
    std::int64_t tail = 0;
    while (tail < n && cmp.marks[static_cast<std::size_t>(n - 1 - tail)] == detail::Mark::unwritten) ++tail;
    if (tail == cmp.unwritten)
        d.findings.push_back("the last " + with_commas(tail) + " element(s) were never written (out[" +
                             with_commas(n - tail) + "] to out[" + with_commas(n - 1) +
                             "]): the grid does not cover all n elements (round the block count up)");
    else
        d.findings.push_back(with_commas(cmp.unwritten) + " element(s) were never written");
}

// NaN in the output, copies of the input's guard zone, and the family's own findings.
void describe_nan_and_family(const Exercise& exercise, const Case& c, const CaseInputs& inputs,
                             const Expected& expected, const detail::ArrayComparison& cmp, Diagnosis& d)
{
    if (cmp.nan > 0)
        d.findings.push_back(with_commas(cmp.nan) + " element(s) are NaN: " +
                             (uses_scratch(exercise) ? "the input's guard zones and fresh scratch hold NaN, so the "
                                                       "kernel read outside `in` or read scratch before writing it"
                                                     : "the input's guard zones hold NaN, so the kernel read "
                                                       "outside `in`"));
    if (cmp.guard_copy > 0)
        d.findings.push_back(with_commas(cmp.guard_copy) +
                             " element(s) are copies of the guard zone around "
                             "`in`: the kernel read outside the input");
    detail::checks_of(exercise).diagnose(exercise, c, inputs, expected, cmp, d);
}

// Whether the launcher, run again from an output of zeros, gave the right output: then the wrong
// one comes from adding into `out` (atomicAdd, +=) what the poison before the launch stood in
// for the 0 the kernel assumed. Decided only where every correct order is exact (a checksum
// cannot say "within the tolerance") and the right output is not all zeros (what a launcher that
// does nothing leaves from zeros).
bool accumulates_into_output(const RawOutput& raw, const Expected& expected, ElementType type)
{
    if (!raw.zero_start_checksum || !expected.tolerance.empty()) return false;
    const bool all_zero = std::all_of(expected.value.begin(), expected.value.end(), [](double v) { return v == 0.0; });
    return !all_zero && *raw.zero_start_checksum == expected_checksum(expected, type);
}

void describe_accumulation(std::size_t n_out, Diagnosis& d)
{
    d.findings.push_back(
        n_out == 1
            ? "out[0] is the right sum plus the value it held before the launch (the grader fills `out` with a NaN "
              "pattern, which stays NaN; run again from out[0] = 0 your launcher gives the right sum): your kernel "
              "adds into out[0] (atomicAdd) without setting it to 0 first; set it with cudaMemset or a first kernel"
            : "the output is the right result plus what `out` held before the launch (the grader fills `out` with a "
              "NaN pattern; run again from an output of zeros your launcher gives the right result): your kernel adds "
              "into `out` (+= or atomicAdd) without setting it first; store each result (out[i] = sum) or set `out` "
              "to 0 first with cudaMemset or a first kernel");
    d.detail["pattern"] = "accumulates_into_output";
}

}  // namespace

Diagnosis check_case(const Exercise& exercise, const Case& c, const CaseInputs& inputs, const Expected& expected,
                     const RawOutput& raw)
{
    const ElementType type = element_type(exercise);
    const std::size_t n_out = expected.value.size();
    const std::size_t guards = 2 * guard_elements * element_bytes(type);
    if (raw.out_with_guards.size() != n_out * element_bytes(type) + guards || raw.in_guards.size() != guards ||
        raw.scratch_guards.size() != (uses_scratch(exercise) ? guards : 0))
        throw std::runtime_error("case output: the runner sent buffers of the wrong size");

    Diagnosis d;
    const detail::ArrayComparison cmp = detail::compare_array(raw, type, expected);
    d.detail["elements"] = n_out;
    d.detail["wrong"] = cmp.bad;
    if (cmp.bad > 0) {
        d.summary =
            with_commas(cmp.bad) + " of " + with_commas(static_cast<std::int64_t>(n_out)) + " output element(s) wrong";
        d.detail["never_written"] = cmp.unwritten;
        d.detail["nan"] = cmp.nan + cmp.guard_copy;
        const bool accumulated = accumulates_into_output(raw, expected, type);
        describe_first_bad(cmp, expected, accumulated, d);
        if (accumulated) {
            // What is left in `out` is the poison after arithmetic, not "never written" or a read
            // outside the input: the one explanation that fits.
            describe_accumulation(n_out, d);
        } else {
            describe_unwritten(cmp, d);
            describe_nan_and_family(exercise, c, inputs, expected, cmp, d);
        }
    }
    // A named mistake's sentence is the last finding pushed with it (the family checks' convention).
    if (d.detail.contains("pattern")) d.detail["pattern_finding"] = d.findings.size() - 1;
    if (cmp.bad > 0 && raw.repeat_checksum) {
        const bool changed = raw.output_checksum(type) != *raw.repeat_checksum;
        d.detail["changes_between_runs"] = changed;
        if (changed)
            d.findings.push_back(
                "a second run on the same input gave a different output: a race (a missing "
                "__syncthreads() or __syncwarp(), or blocks that wait for each other's results in one "
                "launch)");
    }
    const std::size_t findings_before_guards = d.findings.size();
    detail::check_guards(raw, type, c.n, inputs, d);
    d.correct = cmp.bad == 0 && d.findings.size() == findings_before_guards;
    if (cmp.bad == 0)
        d.summary = d.correct ? "all " + with_commas(static_cast<std::int64_t>(n_out)) + " output element(s) correct"
                              : "output correct, but " + d.findings[findings_before_guards];
    return d;
}

}  // namespace harness

// Golden results, the tolerance model and the diagnosis, fed with hand-made outputs of the kinds
// of mistakes students make: a shifted scan, a missing block offset, an unwritten tail, a damaged
// guard zone, a modified input, NaN from reading outside the input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "harness/check.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "scan/scan.hpp"

using namespace harness;

namespace {

template <typename T>
void put(std::vector<std::uint8_t>& bytes, std::size_t element, T value)
{
    std::memcpy(bytes.data() + element * sizeof(T), &value, sizeof(T));
}

// What a runner would send for `values` written to out (NaN entries with `unwritten` left alone).
struct FakeOutput {
    std::vector<float> values;
    std::vector<bool> unwritten;
    RawOutput raw(const CaseInputs& inputs, bool with_scratch) const
    {
        RawOutput r;
        const std::size_t n = values.size(), g = guard_elements;
        r.out_with_guards.resize((n + 2 * g) * 4);
        for (std::size_t i = 0; i < n + 2 * g; ++i) put(r.out_with_guards, i, unwritten_f32);
        for (std::size_t i = 0; i < n; ++i)
            if (unwritten.empty() || !unwritten[i]) put(r.out_with_guards, g + i, values[i]);
        r.in_guards.resize(2 * g * 4);
        for (std::size_t i = 0; i < 2 * g; ++i) put(r.in_guards, i, input_guard_f32);
        if (with_scratch) {
            r.scratch_guards.resize(2 * g * 4);
            for (std::size_t i = 0; i < 2 * g; ++i) put(r.scratch_guards, i, scratch_f32);
        }
        r.input_checksum = checksum64(inputs.input_data(), inputs.input_bytes());
        return r;
    }
};

struct ScanFixture {
    const Exercise& exercise;
    Case c;
    CaseInputs inputs;
    Expected expected;
    FakeOutput out;

    ScanFixture(const char* name, std::int64_t n, DataKind data = DataKind::integers) : exercise(*find_exercise(name))
    {
        c.n = n;
        c.data = data;
        c.seed = 99;
        inputs = make_inputs(exercise, c);
        expected = golden(exercise, c, inputs);
        for (double v : expected.value) out.values.push_back(static_cast<float>(v));
    }
    RawOutput raw() const { return out.raw(inputs, uses_scratch(exercise)); }
    Diagnosis check() const { return check_case(exercise, c, inputs, expected, raw()); }
};

bool mentions(const Diagnosis& d, const std::string& text)
{
    for (const auto& f : d.findings)
        if (f.find(text) != std::string::npos) return true;
    return d.summary.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("golden scan: sections restart, the whole-array scan does not")
{
    CaseInputs inputs;
    inputs.in_f32.assign(2050, 1.0f);
    Case c;
    c.n = 2050;
    const Expected sections = golden(*find_exercise("scan_kogge_stone"), c, inputs);
    CHECK(sections.value[0] == 1);
    CHECK(sections.value[1023] == 1024);
    CHECK(sections.value[1024] == 1);
    CHECK(sections.value[2049] == 2);
    const Expected whole = golden(*find_exercise("scan_hierarchical"), c, inputs);
    CHECK(whole.value[2049] == 2050);
    CHECK(whole.tolerance_at(2049) == 0);  // integer data: exact
}

TEST_CASE("tolerance model: gamma(depth) times the sum of magnitudes")
{
    CHECK(float_sum_tolerance(0, 1.0) == doctest::Approx(std::ldexp(1.0, -24)).epsilon(1e-6));
    CHECK(float_sum_tolerance(1023, 100.0) == doctest::Approx(1024 * std::ldexp(1.0, -24) * 100).epsilon(1e-3));
    CHECK(double_sum_tolerance(10, 1.0) < 1e-14);
    CHECK(scan_order_depth(1) == 0);
    CHECK(scan_order_depth(2048) == 2047);
    CHECK(scan_order_depth(2049) > 2048);
    CHECK(scan_order_depth(10'000'000) < 20'000);
    // A correct float scan in a bad but legal order stays inside the tolerance...
    ScanFixture f("scan_brent_kung", 2048, DataKind::fractions);
    float running = 0;
    for (std::size_t i = 0; i < 2048; ++i) f.out.values[i] = (running += f.inputs.in_f32[i]);  // sequential order
    CHECK(f.check().correct);
    // ...and one missing element does not.
    f.out.values[100] -= f.inputs.in_f32[100] == 0 ? 1.0f : f.inputs.in_f32[100];
    CHECK_FALSE(f.check().correct);
}

TEST_CASE("a correct output passes with no findings")
{
    ScanFixture f("scan_kogge_stone", 5000);
    const Diagnosis d = f.check();
    CHECK(d.correct);
    CHECK(d.findings.empty());
    CHECK(d.summary == "all 5,000 output element(s) correct");
}

TEST_CASE("exclusive instead of inclusive scan")
{
    ScanFixture f("scan_kogge_stone", 3000);
    for (std::size_t i = 0; i < f.out.values.size(); ++i) f.out.values[i] -= f.inputs.in_f32[i];
    const Diagnosis d = f.check();
    CHECK_FALSE(d.correct);
    CHECK(d.detail["pattern"] == "exclusive_scan");
    CHECK(mentions(d, "exclusive scan"));
    CHECK(mentions(d, "first wrong element: out["));
}

TEST_CASE("missing block offsets in the whole-array scan")
{
    ScanFixture f("scan_hierarchical", 3 * 2048 + 77);
    float local = 0;
    for (std::size_t i = 0; i < f.out.values.size(); ++i) {
        if (i % 2048 == 0) local = 0;
        f.out.values[i] = (local += f.inputs.in_f32[i]);
    }
    const Diagnosis d = f.check();
    CHECK(d.detail["pattern"] == "missing_block_offsets");
    CHECK(mentions(d, "sums of all earlier sections are never added"));
    CHECK(mentions(d, "every section from 1 on, and none before"));
}

TEST_CASE("sections of the wrong size")
{
    ScanFixture f("scan_brent_kung", 4096);
    float local = 0;
    for (std::size_t i = 0; i < f.out.values.size(); ++i) {
        if (i % 1024 == 0) local = 0;
        f.out.values[i] = (local += f.inputs.in_f32[i]);
    }
    const Diagnosis d = f.check();
    CHECK(d.detail["pattern"] == "wrong_section_size");
    CHECK(d.detail["matches_section_size"] == 1024);
    CHECK(mentions(d, "only offsets 1024 to 2047 are wrong"));
}

TEST_CASE("a wrong offset added to whole sections")
{
    ScanFixture f("scan_hierarchical", 5 * 2048);
    for (std::size_t i = 3 * 2048; i < 4 * 2048; ++i) f.out.values[i] += 17;
    const Diagnosis d = f.check();
    CHECK(d.detail["pattern"] == "wrong_section_offset");
    CHECK(mentions(d, "section 3: off by 17"));
    CHECK(mentions(d, "(only section 3)"));
}

TEST_CASE("one wrong element is no pattern: no offset or section size is claimed for it")
{
    ScanFixture f("scan_hierarchical", 5 * 2048);
    f.out.values[3 * 2048 + 5] += 17;
    const Diagnosis d = f.check();
    CHECK_FALSE(d.correct);
    CHECK_FALSE(d.detail.contains("pattern"));
    ScanFixture k("scan_kogge_stone", 4096);
    k.out.values[1500] += 3;
    CHECK_FALSE(k.check().detail.contains("pattern"));  // section scans add no offsets at all
}

TEST_CASE("a wrong output that changes between two runs is called a race; a stable one is not")
{
    ScanFixture f("scan_kogge_stone", 3000);
    f.out.values[2500] += 1;
    RawOutput raw = f.raw();
    raw.repeat_checksum = 12345;
    Diagnosis d = check_case(f.exercise, f.c, f.inputs, f.expected, raw);
    CHECK(mentions(d, "a second run on the same input gave a different output: a race"));
    const std::size_t g = guard_elements * 4;
    raw.repeat_checksum = checksum64(raw.out_with_guards.data() + g, 3000 * 4);
    d = check_case(f.exercise, f.c, f.inputs, f.expected, raw);
    CHECK_FALSE(mentions(d, "race"));
    CHECK(d.detail["changes_between_runs"] == false);
}

TEST_CASE("an unwritten tail and a fully unwritten output")
{
    ScanFixture f("scan_kogge_stone", 2500);
    f.out.unwritten.assign(2500, false);
    for (std::size_t i = 2048; i < 2500; ++i) f.out.unwritten[i] = true;
    Diagnosis d = f.check();
    CHECK(mentions(d, "the last 452 element(s) were never written (out[2,048] to out[2,499])"));
    CHECK(mentions(d, "out[2,048] was never written"));
    f.out.unwritten.assign(2500, true);
    d = f.check();
    CHECK(mentions(d, "no output element was written"));
    CHECK(d.summary == "2,500 of 2,500 output element(s) wrong");
}

TEST_CASE("writes outside the output, before and after, are caught in the guard zones")
{
    ScanFixture f("scan_kogge_stone", 1000);
    RawOutput raw = f.raw();
    put(raw.out_with_guards, guard_elements + 1000 + 5, 1.0f);  // out[1005]
    put(raw.out_with_guards, guard_elements - 3, 1.0f);         // out[-3]
    const Diagnosis d = check_case(f.exercise, f.c, f.inputs, f.expected, raw);
    CHECK_FALSE(d.correct);
    CHECK(mentions(d, "past the end of `out` (first at index 1,005"));
    CHECK(mentions(d, "before the start of `out` (lowest index -3)"));
    CHECK(d.summary.rfind("output correct, but", 0) == 0);
}

TEST_CASE("writes into the input's guard zone and a modified input")
{
    ScanFixture f("scan_brent_kung", 1000);
    RawOutput raw = f.raw();
    put(raw.in_guards, guard_elements + 2, 0.0f);  // in[1002]
    raw.input_checksum ^= 1;
    raw.input_first_changed = 17;
    raw.input_changed_elements = 3;
    const Diagnosis d = check_case(f.exercise, f.c, f.inputs, f.expected, raw);
    CHECK_FALSE(d.correct);
    CHECK(mentions(d, "past the end of `in`"));
    CHECK(mentions(d, "the input was modified (3 element(s), first at in[17])"));
}

TEST_CASE("NaN from reading outside the input, and copies of the guard pattern")
{
    ScanFixture f("scan_hierarchical", 2000);
    f.out.values[0] = std::nanf("");
    RawOutput raw = f.raw();
    put(raw.out_with_guards, guard_elements + 1, input_guard_f32);
    const Diagnosis d = check_case(f.exercise, f.c, f.inputs, f.expected, raw);
    CHECK(mentions(d, "1 element(s) are NaN"));
    CHECK(mentions(d, "copies of the guard zone around `in`"));
    CHECK(d.detail["nan"] == 2);
}

TEST_CASE("parse_raw_output splits the segments and rejects inconsistent ones")
{
    nlohmann::json meta = {{"segments",
                            {{{"name", "out"}, {"bytes", 8}},
                             {{"name", "in_guards"}, {"bytes", 4}},
                             {{"name", "scratch_guards"}, {"bytes", 2}}}},
                           {"input_checksum", 5}};
    std::vector<std::uint8_t> blob(14);
    for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::uint8_t>(i);
    RawOutput raw = parse_raw_output(meta, std::vector<std::uint8_t>(blob));
    CHECK(raw.out_with_guards == std::vector<std::uint8_t>(blob.begin(), blob.begin() + 8));
    CHECK(raw.in_guards == std::vector<std::uint8_t>{8, 9, 10, 11});
    CHECK(raw.scratch_guards == std::vector<std::uint8_t>{12, 13});
    CHECK(raw.input_checksum == 5);
    CHECK_THROWS(parse_raw_output(meta, std::vector<std::uint8_t>(13, 1)));
    // Sizes that wrap around when added, a missing field, or garbage instead of segments.
    nlohmann::json huge = meta;
    huge["segments"][1]["bytes"] = ~std::uint64_t{0} - 7;
    CHECK_THROWS(parse_raw_output(huge, std::vector<std::uint8_t>(blob)));
    CHECK_THROWS(parse_raw_output({{"input_checksum", 5}}, std::vector<std::uint8_t>(blob)));
    CHECK_THROWS(parse_raw_output({{"segments", "x"}, {"input_checksum", 5}}, std::vector<std::uint8_t>(blob)));
}

TEST_CASE("number formatting for reports")
{
    CHECK(with_commas(0) == "0");
    CHECK(with_commas(999) == "999");
    CHECK(with_commas(1000) == "1,000");
    CHECK(with_commas(-4196353) == "-4,196,353");
    CHECK(format_value(std::nan("")) == "NaN");
    CHECK(format_value(0.3125) == "0.3125");
}

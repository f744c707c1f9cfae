// Golden results, the tolerance model and the diagnosis, fed with hand-made outputs of the kinds
// of mistakes students make: a shifted scan, a missing block offset, an unwritten tail, a damaged
// guard zone, a modified input, NaN from reading outside the input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "harness/check.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "harness/timed_data.hpp"
#include "scan/scan.hpp"
#include "support/thread_limit.hpp"

using namespace harness;

namespace {

template <typename Buffer, typename T>
void put(Buffer& bytes, std::size_t element, T value)
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
        r.input_checksum = bits_checksum(inputs.input_data(), inputs.in_f32.size(), false);
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

// The golden scan as one sequential pass in double (what golden() computes, on any threads).
Expected sequential_scan(const UninitializedVector<float>& in, std::int64_t section, bool exact)
{
    Expected e;
    double sum = 0, abs_sum = 0;
    std::int64_t terms = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (section > 0 && static_cast<std::int64_t>(i) % section == 0) sum = abs_sum = 0, terms = 0;
        sum += in[i];
        abs_sum += std::fabs(in[i]);
        ++terms;
        e.value.push_back(sum);
        if (!exact) e.tolerance.push_back(float_sum_tolerance(scan_order_depth(terms), abs_sum));
    }
    return e;
}

// Bit for bit, NaN included.
bool same_bits(const UninitializedVector<double>& a, const UninitializedVector<double>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
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
    // The sentence that names it, for the first-fix summary (grading/first_fix.hpp): not the findings
    // on the first wrong element or on the sections, which come before it.
    REQUIRE(d.detail.contains("pattern_finding"));
    CHECK(d.findings.at(d.detail["pattern_finding"].get<std::size_t>()).find("sums of all earlier sections are never "
                                                                             "added") != std::string::npos);
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
    CHECK_FALSE(d.detail.contains("pattern_finding"));
    CHECK_FALSE(d.detail.contains("unwritten_finding"));
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
    raw.repeat_checksum = bits_checksum(raw.out_with_guards.data() + g, 3000, false);
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
    // The sentence that says so (grading/first_fix.hpp quotes it), not the first wrong element's.
    CHECK(d.findings.at(d.detail["unwritten_finding"].get<std::size_t>()).rfind("the last 452 element(s)", 0) == 0);
    f.out.unwritten.assign(2500, true);
    d = f.check();
    CHECK(mentions(d, "no output element was written"));
    CHECK(d.findings.at(d.detail["unwritten_finding"].get<std::size_t>()).rfind("no output element was written", 0) == 0);
    CHECK(d.summary == "2,500 of 2,500 output element(s) wrong");
}

TEST_CASE("an output that is right when run from zeros: the kernel adds into `out` without setting it")
{
    // `out[i] += ...` on the poison: float arithmetic on a NaN gives the GPU's canonical NaN.
    ScanFixture f("scan_kogge_stone", 2500);
    const std::vector<float> right = f.out.values;
    std::uint32_t canonical = 0x7fffffffu;
    float nan_value;
    std::memcpy(&nan_value, &canonical, sizeof nan_value);
    f.out.values.assign(2500, nan_value);
    RawOutput raw = f.raw();
    raw.zero_start_checksum = output_checksum(right.data(), right.size());
    Diagnosis d = check_case(f.exercise, f.c, f.inputs, f.expected, raw);
    CHECK(mentions(d, "the output is the right result plus what `out` held before the launch"));
    CHECK(mentions(d, "your kernel adds into `out` (+= or atomicAdd) without setting it first"));
    CHECK(mentions(d, "first wrong element: out[0] = NaN"));
    CHECK_FALSE(mentions(d, "read outside"));
    CHECK(d.detail["pattern"] == "accumulates_into_output");

    // Run from zeros it is wrong too (or did nothing): the NaN keeps its usual explanation.
    raw.zero_start_checksum = output_checksum(right.data(), right.size()) + 1;
    d = check_case(f.exercise, f.c, f.inputs, f.expected, raw);
    CHECK(mentions(d, "2,500 element(s) are NaN: the input's guard zones hold NaN"));
    CHECK_FALSE(mentions(d, "held before the launch"));

    // Fractional data: a checksum cannot say "within the tolerance", so nothing is concluded.
    ScanFixture frac("scan_kogge_stone", 2500, DataKind::fractions);
    const std::vector<float> frac_right = frac.out.values;
    frac.out.values.assign(2500, nan_value);
    raw = frac.raw();
    raw.zero_start_checksum = output_checksum(frac_right.data(), frac_right.size());
    CHECK_FALSE(mentions(check_case(frac.exercise, frac.c, frac.inputs, frac.expected, raw), "held before the launch"));
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
    Bytes blob(14);
    for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::uint8_t>(i);
    RawOutput raw = parse_raw_output(meta, Bytes(blob));
    CHECK(raw.out_with_guards == Bytes(blob.begin(), blob.begin() + 8));
    CHECK(raw.in_guards == std::vector<std::uint8_t>{8, 9, 10, 11});
    CHECK(raw.scratch_guards == std::vector<std::uint8_t>{12, 13});
    CHECK(raw.input_checksum == 5);
    CHECK_FALSE(raw.zero_start_checksum);
    meta["zero_start_checksum"] = 77;
    CHECK(parse_raw_output(meta, Bytes(blob)).zero_start_checksum == std::uint64_t{77});
    CHECK_THROWS(parse_raw_output(meta, Bytes(13, 1)));
    // Sizes that wrap around when added, a missing field, or garbage instead of segments.
    nlohmann::json huge = meta;
    huge["segments"][1]["bytes"] = ~std::uint64_t{0} - 7;
    CHECK_THROWS(parse_raw_output(huge, Bytes(blob)));
    CHECK_THROWS(parse_raw_output({{"input_checksum", 5}}, Bytes(blob)));
    CHECK_THROWS(parse_raw_output({{"segments", "x"}, {"input_checksum", 5}}, Bytes(blob)));
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

TEST_CASE("golden scans computed in parallel are one sequential pass's, on one thread and on many")
{
    struct Input {
        const char* what;
        UninitializedVector<float> in;
        DataKind data;
    };
    std::vector<Input> inputs;
    Case c;
    c.seed = 31;
    c.n = 3 * scan_period + 5;
    inputs.push_back({"integer data", make_inputs(*find_exercise("scan_hierarchical"), c).in_f32, DataKind::integers});
    c.n = 1'000'003;
    c.data = DataKind::fractions;
    inputs.push_back({"fractional data", make_inputs(*find_exercise("scan_hierarchical"), c).in_f32, c.data});
    // Sums that round: each chunk cannot start from the sum before it, so one pass runs.
    UninitializedVector<float> rounding(300'000);
    SplitMix64 rng(8);
    for (auto& v : rounding)
        v = std::ldexp(static_cast<float>(rng.uniform_int(-(1 << 23), 1 << 23)),
                       static_cast<int>(rng.uniform_int(-60, 0)));
    inputs.push_back({"values of mixed magnitudes", rounding, DataKind::fractions});
    // Exact integers whose sum passes 2^53: 1e30 + 1 - 1e30 is 0 in one pass, 1 exactly.
    UninitializedVector<float> huge(200'000, 1.0f);
    for (std::size_t i = 65'530; i < huge.size(); i += 65'536) huge[i] = (i / 65'536) % 2 ? -1e30f : 1e30f;
    inputs.push_back({"exact integers beyond 2^53", huge, DataKind::fractions});
    UninitializedVector<float> nan(100'000, 0.5f);
    nan[70'000] = std::nanf("");
    inputs.push_back({"a NaN", nan, DataKind::fractions});

    for (const Input& input : inputs) {
        const std::string what = input.what;
        CAPTURE(what);
        Case k;
        k.n = static_cast<std::int64_t>(input.in.size());
        k.data = input.data;
        CaseInputs data;
        data.in_f32 = input.in;
        for (const char* name : {"scan_hierarchical", "scan_kogge_stone", "scan_brent_kung"}) {
            const std::string exercise = name;
            CAPTURE(exercise);
            const Exercise& e = *find_exercise(name);
            const Expected wanted = sequential_scan(input.in, e.family == Family::full_scan ? 0 : scan_section(e),
                                                    input.data == DataKind::integers);
            for (int threads : {1, many_threads}) {
                const Expected got = with_threads(threads, [&] { return golden(e, k, data); });
                CHECK(same_bits(got.value, wanted.value));
                CHECK(same_bits(got.tolerance, wanted.tolerance));
            }
        }
    }
}

TEST_CASE("a wrong output gets the same diagnosis on one thread and on many, first wrong element first")
{
    for (const char* name : {"scan_hierarchical", "scan_kogge_stone"}) {
        const std::string exercise = name;
        CAPTURE(exercise);
        ScanFixture f(name, 1'000'003);
        for (std::size_t i = 700'000; i < 702'048; ++i) f.out.values[i] += 5;  // late chunks first
        f.out.values[400'001] = std::nanf("");
        f.out.unwritten.assign(f.out.values.size(), false);
        for (std::size_t i = 999'000; i < f.out.values.size(); ++i) f.out.unwritten[i] = true;
        f.out.values[131'072] += 1;  // the first wrong element, the first of a chunk
        const RawOutput raw = f.raw();
        const Diagnosis one = with_threads(1, [&] { return check_case(f.exercise, f.c, f.inputs, f.expected, raw); });
        const Diagnosis many =
            with_threads(many_threads, [&] { return check_case(f.exercise, f.c, f.inputs, f.expected, raw); });
        CHECK(one.summary == "3,053 of 1,000,003 output element(s) wrong");
        CHECK(one.detail["first_wrong"]["index"] == 131'072);
        CHECK(one.detail["never_written"] == 1003);
        CHECK(one.detail["nan"] == 1);
        CHECK(one.summary == many.summary);
        CHECK(one.findings == many.findings);
        CHECK(one.detail.dump() == many.detail.dump());
    }
}

TEST_CASE("golden_checksum is the checksum of the golden output as stored, on one thread and on many")
{
    for (const char* name : {"scan_hierarchical", "reduce_unroll_last_warp"}) {
        const std::string exercise = name;
        CAPTURE(exercise);
        const Exercise& e = *find_exercise(name);
        Case c;
        c.n = 1'000'003;
        c.seed = 4;
        const CaseInputs variant = make_timed_inputs(e, c, 0xfeed, 3);
        const Expected expected = golden(e, c, variant);
        std::uint64_t wanted = 0;
        if (element_type(e) == ElementType::f64) {
            wanted = output_checksum(expected.value.data(), expected.value.size());
        } else {
            const std::vector<float> stored(expected.value.begin(), expected.value.end());
            wanted = output_checksum(stored.data(), stored.size());
        }
        CHECK(with_threads(1, [&] { return golden_checksum(e, c, variant); }) == wanted);
        CHECK(with_threads(many_threads, [&] { return golden_checksum(e, c, variant); }) == wanted);
    }
}

TEST_CASE("one place picks an element type's patterns and its C++ type")
{
    const Poison floats = poison_of(ElementType::f32), doubles = poison_of(ElementType::f64);
    CHECK(floats.unwritten == unwritten_f32);
    CHECK(floats.input_guard == input_guard_f32);
    CHECK(floats.scratch == scratch_f32);
    CHECK(doubles.unwritten == unwritten_f64);
    CHECK(doubles.input_guard == input_guard_f64);
    CHECK(doubles.scratch == scratch_f64);
    const auto size_of = [](auto value) { return sizeof(value) + sizeof(bits_of<decltype(value)>); };
    CHECK(with_element_type(ElementType::f32, size_of) == 8);
    CHECK(with_element_type(ElementType::f64, size_of) == 16);
}

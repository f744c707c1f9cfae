// Case lists and input generation: the sizes the issue requires, reproducible seeds and data,
// integer scan data whose every partial sum is exact in float, never all zeros.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/cases.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "harness/family.hpp"
#include "../../../harness/runner/launchers.hpp"  // the runner's LauncherArgs (plain C++)
#include "convolution/convolution.hpp"
#include "harness/launcher_signatures.hpp"
#include "scan/scan.hpp"
#include "support/thread_limit.hpp"

using namespace harness;

namespace {

const ConvolutionShape& conv(const Case& c)
{
    return shape_of<ConvolutionShape>(c);
}

bool has_size(const std::vector<Case>& cases, std::int64_t n)
{
    return std::any_of(cases.begin(), cases.end(), [n](const Case& c) { return c.n == n; });
}

}  // namespace

TEST_CASE("every exercise of the contract is registered once, with its launcher signature")
{
    std::set<std::string> names;
    for (const auto& e : all_exercises()) {
        CHECK(names.insert(e.name).second);
        CHECK(e.signature.find(e.name + "(") != std::string::npos);
        CHECK(find_exercise(e.name) == &e);
    }
    CHECK(names.size() == 10);
    CHECK(find_exercise("scan_nonexistent") == nullptr);
}

TEST_CASE("launcher signatures are exactly CONTRACT.md's")
{
    // The text students see is produced from the same macro that declares the launcher in the runner.
    CHECK(find_exercise("scan_kogge_stone")->signature == "void scan_kogge_stone(const float* in, float* out, int n)");
    CHECK(find_exercise("scan_hierarchical")->signature ==
          "void scan_hierarchical(const float* in, float* out, int n, float* scratch)");
    CHECK(find_exercise("reduce_unroll_last_warp")->signature ==
          "void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch)");
    CHECK(find_exercise("conv1d_tiled")->signature ==
          "void conv1d_tiled(const float* in, const float* mask, float* out, int n, int mask_width)");
    CHECK(find_exercise("conv2d_tiled")->signature ==
          "void conv2d_tiled(const float* in, const float* mask, float* out, int height, int width, int mask_width)");
}

namespace {

// Launchers of the contract's signatures that record what the runner's LAUNCHER_CALL passes them.
struct Received {
    const void* in = nullptr;
    const float* mask = nullptr;
    void* out = nullptr;
    std::vector<int> numbers;
    const void* scratch = nullptr;
};
Received received;
LAUNCHER_SIGNATURE_section_scan(fake_section_scan)
{
    received = {in, nullptr, out, {n}, nullptr};
}
LAUNCHER_SIGNATURE_full_scan(fake_full_scan)
{
    received = {in, nullptr, out, {n}, scratch};
}
LAUNCHER_SIGNATURE_conv1d(fake_conv1d)
{
    received = {in, mask, out, {n, mask_width}, nullptr};
}
LAUNCHER_SIGNATURE_conv2d(fake_conv2d)
{
    received = {in, mask, out, {height, width, mask_width}, nullptr};
}

}  // namespace

TEST_CASE("the runner's launcher calls pass each family's case shape in the contract's order")
{
    float in[4] = {}, out[4] = {}, scratch[4] = {};
    const float mask[9] = {};
    auto args_of = [&](const char* exercise, const char* label) {
        const auto cases = cases_for(*find_exercise(exercise));
        runner::LauncherArgs a;
        a.in = in, a.out = out, a.mask = mask, a.scratch = scratch;
        runner::set_shape(a, *find_case(cases, label));
        return a;
    };
    const runner::LauncherArgs scan = args_of("scan_kogge_stone", "n=1025/int");
    LAUNCHER_CALL_section_scan(fake_section_scan, scan);
    CHECK(received.numbers == std::vector<int>{1025});
    CHECK(received.in == in);
    CHECK(received.out == out);
    LAUNCHER_CALL_full_scan(fake_full_scan, scan);
    CHECK(received.scratch == scratch);
    LAUNCHER_CALL_conv1d(fake_conv1d, args_of("conv1d_tiled", "n=65537/mw=9/frac"));
    CHECK(received.numbers == std::vector<int>{65537, 9});
    CHECK(received.mask == mask);
    LAUNCHER_CALL_conv2d(fake_conv2d, args_of("conv2d_tiled", "33x17/mw=7/int"));
    CHECK(received.numbers == std::vector<int>{33, 17, 7});
    CHECK(received.in == in);
    CHECK(received.out == out);
    // A convolution's call without a convolution's shape throws rather than passing zeros.
    CHECK_THROWS_AS(LAUNCHER_CALL_conv2d(fake_conv2d, scan), std::bad_any_cast);
}

TEST_CASE("a case's shape: its family writes it, reads it back, and the case spec carries it")
{
    CHECK(family_of(*find_exercise("scan_brent_kung")).shape_json(*find_case(cases_for(*find_exercise("scan_brent_kung")), "n=1025/int")) ==
          nlohmann::json{{"n", 1025}});
    const auto conv1d = cases_for(*find_exercise("conv1d_tiled"));
    CHECK(family_of(*find_exercise("conv1d_tiled")).shape_json(*find_case(conv1d, "n=65537/mw=9/frac")) ==
          nlohmann::json{{"n", 65537}, {"mask_width", 9}});
    const auto conv2d = cases_for(*find_exercise("conv2d_tiled"));
    CHECK(family_of(*find_exercise("conv2d_tiled")).shape_json(*find_case(conv2d, "33x17/mw=7/int")) ==
          nlohmann::json{{"height", 33}, {"width", 17}, {"mask_width", 7}});
    // Every case of every exercise comes back the same from its shape and from its spec.
    for (const auto& e : all_exercises())
        for (const auto& own : cases_for(e)) {
            CAPTURE(own.label);
            Case shaped;
            family_of(e).read_shape(family_of(e).shape_json(own), shaped);
            CHECK(shaped.n == own.n);
            CHECK(family_of(e).shape_json(shaped) == family_of(e).shape_json(own));
            const Case sent = case_from_spec(e, case_spec(e, own), own.index);
            CHECK(sent.label == own.label);
            CHECK(case_label(e, sent) == own.label);
            CHECK(sent.n == own.n);
            CHECK(sent.seed == own.seed);
            CHECK(sent.data == own.data);
            CHECK(sent.timed == own.timed);
            CHECK(sent.index == own.index);
        }
}

TEST_CASE("a shape that is not its family's is refused, saying what the family's is")
{
    auto refusal = [](const char* exercise, const nlohmann::json& shape) -> std::string {
        Case c;
        try {
            family_of(*find_exercise(exercise)).read_shape(shape, c);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "accepted";
    };
    CHECK(refusal("scan_brent_kung", {{"n", 1}, {"height", 3}}) == "an array given by n (not height)");
    CHECK(refusal("scan_brent_kung", nlohmann::json::object()) == "an array given by n");
    CHECK(refusal("scan_brent_kung", {{"n", 0}}) == "n 0: not an integer from 1 to 2147483647");
    CHECK(refusal("scan_brent_kung", {{"n", std::int64_t{1} << 31}}) == "n 2147483648: not an integer from 1 to 2147483647");
    CHECK(refusal("scan_brent_kung", {{"n", "5"}}) == "n \"5\": not an integer from 1 to 2147483647");
    CHECK(refusal("scan_brent_kung", nlohmann::json::array({5})) == "an array given by an object of n");
    CHECK(refusal("reduce_unroll_last_warp", {{"n", 5}}) == "accepted");
    CHECK(refusal("conv1d_tiled", {{"n", 5}}) == "an array given by n and mask_width");
    CHECK(refusal("conv1d_tiled", {{"n", 5}, {"mask_width", 0}}) == "mask_width 0: not an integer from 1 to 255");
    CHECK(refusal("conv2d_tiled", {{"n", 100}, {"mask_width", 5}}) ==
          "an image given by height, width and mask_width (not n)");
    CHECK(refusal("conv2d_tiled", {{"height", 70000}, {"width", 70000}, {"mask_width", 5}}) ==
          "an image of 4900000000 pixels: more than an int counts");
    CHECK(refusal("conv2d_tiled", {{"height", 7}, {"width", 3}, {"mask_width", 5}}) == "accepted");
    Case image;
    family_of(*find_exercise("conv2d_tiled")).read_shape({{"height", 7}, {"width", 3}, {"mask_width", 5}}, image);
    CHECK(image.n == 21);
    CHECK(conv(image).mask_width == 5);
    // A spec without a shape, or with another family's, is not run.
    const Exercise& brent_kung = *find_exercise("scan_brent_kung");
    nlohmann::json spec = case_spec(brent_kung, cases_for(brent_kung).front());
    CHECK_NOTHROW(case_from_spec(brent_kung, spec, 0));
    spec["shape"] = {{"height", 7}, {"width", 3}, {"mask_width", 5}};
    CHECK_THROWS_AS(case_from_spec(brent_kung, spec, 0), std::invalid_argument);
    spec.erase("shape");
    CHECK_THROWS_AS(case_from_spec(brent_kung, spec, 0), std::exception);
    CHECK_THROWS_AS(case_from_spec(brent_kung, nlohmann::json::array(), 0), std::invalid_argument);
}

TEST_CASE("scan cases cover the edge sizes, one timed case, and the large size for the whole-array scan")
{
    for (const char* name : {"scan_kogge_stone", "scan_brent_kung", "scan_hierarchical"}) {
        const auto cases = cases_for(*find_exercise(name));
        for (std::int64_t n : {1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 4096, 65537, 1'000'000, 4'125'000,
                               4'194'304, 4'196'353, 10'000'000})
            CHECK_MESSAGE(has_size(cases, n), name << " lacks n=" << n);
        CHECK(std::count_if(cases.begin(), cases.end(), [](const Case& c) { return c.timed; }) == 1);
        CHECK(find_case(cases, "n=67108864/int")->timed);
        CHECK(std::any_of(cases.begin(), cases.end(), [](const Case& c) { return c.data == DataKind::fractions; }));
        std::set<std::string> labels;
        for (std::size_t i = 0; i < cases.size(); ++i) {
            CHECK(cases[i].index == static_cast<int>(i));
            CHECK(labels.insert(cases[i].label).second);
            CHECK(find_case(cases, cases[i].label) == &cases[i]);
        }
    }
    CHECK(has_size(cases_for(*find_exercise("scan_hierarchical")), (std::int64_t{1} << 28) + 3));
    CHECK_FALSE(has_size(cases_for(*find_exercise("scan_kogge_stone")), (std::int64_t{1} << 28) + 3));
}

TEST_CASE("every exercise times one case, of speed_n elements, and keeps 10,000,000 as an untimed case")
{
    const std::map<std::string, std::string> timed_label = {
        {"reduce_sequential_addressing", "n=67108864/int"},
        {"conv1d_tiled", "n=67108864/mw=7/int"},
        {"conv2d_tiled", "8192x8192/mw=5/int"},
    };
    for (const auto& [name, label] : timed_label) {
        const auto cases = cases_for(*find_exercise(name));
        CHECK(std::count_if(cases.begin(), cases.end(), [](const Case& c) { return c.timed; }) == 1);
        const Case* timed = find_case(cases, label);
        REQUIRE_MESSAGE(timed != nullptr, name << " lacks " << label);
        CHECK(timed->timed);
        CHECK(timed->n == speed_n);
    }
    CHECK(has_size(cases_for(*find_exercise("reduce_unroll_last_warp")), 10'000'000));
    CHECK(find_case(cases_for(*find_exercise("conv1d_tiled")), "n=10000000/mw=7/int") != nullptr);
    CHECK(find_case(cases_for(*find_exercise("conv2d_tiled")), "4096x4096/mw=5/int") != nullptr);
}

TEST_CASE("seeds come from the exercise and label, identically on every machine")
{
    // Pinned values: a change here changes every student's data and must be deliberate.
    CHECK(fnv1a64("", 0) == 0xcbf29ce484222325ull);
    CHECK(fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    CHECK(seed_for("scan_kogge_stone", "n=1/int") == seed_for("scan_kogge_stone", "n=1/int"));
    CHECK(seed_for("scan_kogge_stone", "n=1/int") != seed_for("scan_brent_kung", "n=1/int"));
    SplitMix64 rng(0);
    CHECK(rng.next() == 0xe220a8397b1dcdafull);  // splitmix64's published first output for seed 0
}

TEST_CASE("inputs are reproducible bit for bit and differ between cases")
{
    const Exercise& e = *find_exercise("scan_brent_kung");
    const auto cases = cases_for(e);
    const Case& c = *find_case(cases, "n=65537/int");
    const CaseInputs a = make_inputs(e, c), b = make_inputs(e, c);
    CHECK(checksum64(a.input_data(), a.input_bytes()) == checksum64(b.input_data(), b.input_bytes()));
    const CaseInputs other = make_inputs(e, *find_case(cases, "n=65537/frac"));
    CHECK(checksum64(a.input_data(), a.input_bytes()) != checksum64(other.input_data(), other.input_bytes()));
    // Pinned: the generator and the checksum must not drift between versions or machines (a
    // change here changes every student's data and must be deliberate).
    CHECK(checksum64(a.input_data(), a.input_bytes()) == 15928895981467536694ull);
}

TEST_CASE("integer scan data: integer values, never all zero, every range sum exact in float")
{
    const Exercise& e = *find_exercise("scan_hierarchical");
    Case c;
    c.n = 6'000'000;  // several periods
    c.seed = 12345;
    const CaseInputs inputs = make_inputs(e, c);
    double prefix = 0, lowest = 0, highest = 0, lowest_after_start = 1e300;
    std::int64_t nonzero = 0, i = 0;
    for (float v : inputs.in_f32) {
        REQUIRE(v == std::floor(v));
        nonzero += v != 0;
        prefix += v;
        lowest = std::min(lowest, prefix);
        highest = std::max(highest, prefix);
        if (++i > 2000) lowest_after_start = std::min(lowest_after_start, prefix);
    }
    CHECK(nonzero > c.n / 2);
    // Any sum of consecutive elements is a difference of two prefixes.
    CHECK(highest - lowest <= scan_prefix_bound);
    CHECK(scan_prefix_bound < 16'777'216.0);              // 2^24: exact in float
    CHECK(lowest_after_start >= scan_prefix_floor - 12);  // block offsets far from zero: a missing one shows
}

TEST_CASE("integer scan data: sums of scattered elements, as a strided or tree order forms them, stay small")
{
    // A kernel may add a block's elements in any order: a thread's loads at a stride, then a tree
    // over threads. Every such partial sum must stay far below 2^24 (exact in float). Checked here
    // on 2^25 elements for the sums of every other group of g elements and of each residue class
    // mod g (g a power of two); they grow like the square root of the size, so 2^28 stays below 2^22.
    const Exercise& e = *find_exercise("scan_hierarchical");
    Case c;
    c.n = std::int64_t{1} << 25;
    c.seed = seed_for("scan_hierarchical", "n=268435459/int");
    const CaseInputs inputs = make_inputs(e, c);
    const auto& v = inputs.in_f32;
    double largest = 0;
    for (std::int64_t g = 1; g <= (std::int64_t{1} << 22); g *= 2) {
        double every_other = 0;
        std::vector<double> residue(static_cast<std::size_t>(std::min<std::int64_t>(g, 64)), 0.0);
        for (std::int64_t i = 0; i < c.n; ++i) {
            if ((i / g) % 2 == 0) every_other += v[static_cast<std::size_t>(i)];
            if (i % g < 64) residue[static_cast<std::size_t>(i % g)] += v[static_cast<std::size_t>(i)];
        }
        largest = std::max(largest, std::fabs(every_other));
        for (double r : residue) largest = std::max(largest, std::fabs(r));
    }
    MESSAGE("largest scattered sum on 2^25 elements: " << largest);
    CHECK(largest < double(1 << 20));
}

TEST_CASE("fractional scan data: exact floats of mixed sign")
{
    const Exercise& e = *find_exercise("scan_kogge_stone");
    Case c;
    c.n = 100'000;
    c.seed = 7;
    c.data = DataKind::fractions;
    const CaseInputs inputs = make_inputs(e, c);
    std::int64_t negative = 0, fractional = 0;
    for (float v : inputs.in_f32) {
        negative += v < 0;
        fractional += v != std::floor(v);
        CHECK(v * 1048576.0f == std::floor(v * 1048576.0f));  // multiples of 2^-20
    }
    CHECK(negative > 10'000);
    CHECK(fractional > 90'000);
}

TEST_CASE(
    "integer scan data at scale: periods that start from 1000 to 14999, prefixes inside the bound, blocks not zero")
{
    // Forty periods and part of another: the chunks the generator runs in parallel.
    const Exercise& e = *find_exercise("scan_hierarchical");
    Case c;
    c.n = 40 * scan_period + 12'345;
    c.seed = seed_for("scan_hierarchical", "large");
    const CaseInputs inputs = make_inputs(e, c);
    REQUIRE(inputs.in_f32.size() == static_cast<std::size_t>(c.n));
    double prefix = 0, lowest = 0, highest = 0, block_sum = 0;
    std::int64_t non_integers = 0, nonzero = 0, zero_blocks = 0, period_ends = 0, below_floor = 0;
    for (std::int64_t i = 0; i < c.n; ++i) {
        const float v = inputs.in_f32[static_cast<std::size_t>(i)];
        non_integers += v != std::floor(v);
        nonzero += v != 0;
        prefix += v;
        lowest = std::min(lowest, prefix);
        highest = std::max(highest, prefix);
        if (i % scan_period == scan_period - 1) {
            // The last element of a period brings the sum to the next period's start, never 0 (a
            // missing offset at a period boundary must show): the one value that may leave [-12, 12].
            CHECK(prefix >= 1000);
            CHECK(prefix < 15000);
            CHECK(std::fabs(v) <= scan_prefix_bound);
            ++period_ends;
        } else if (v < -12 || v > 12) {
            FAIL_CHECK("in[" << i << "] = " << v << " is outside [-12, 12]");
        } else if (i > 2000) {
            below_floor += prefix < scan_prefix_floor - 12;
        }
        block_sum += v;
        if (i % 2048 == 2047) zero_blocks += block_sum == 0, block_sum = 0;
    }
    CHECK(non_integers == 0);
    CHECK(period_ends == 40);
    CHECK(below_floor == 0);  // every block offset far from zero: a missing one shows
    CHECK(nonzero > c.n / 2);
    CHECK(lowest >= -40);
    CHECK(highest - lowest <= scan_prefix_bound);
    CHECK(zero_blocks < c.n / 2048 / 200);  // block sums are rarely zero: a wrong block sum shows
}

TEST_CASE("inputs are the same on one thread and on many")
{
    struct Input {
        const char* exercise;
        std::int64_t n;
        DataKind data;
    };
    // Sizes of many chunks, not multiples of a chunk.
    for (const Input& input : {Input{"scan_hierarchical", 3 * scan_period + 5, DataKind::integers},
                               Input{"scan_kogge_stone", 1'000'003, DataKind::fractions},
                               Input{"reduce_unroll_last_warp", 1'000'003, DataKind::integers},
                               Input{"reduce_unroll_last_warp", 1'000'003, DataKind::fractions},
                               Input{"reduce_unroll_last_warp", 1'000'003, DataKind::mixed_magnitudes},
                               Input{"conv1d_tiled", 1'000'003, DataKind::fractions},
                               Input{"conv2d_tiled", 1'000'003, DataKind::integers}}) {
        const std::string what = std::string(input.exercise) + " " + data_kind_name(input.data);
        CAPTURE(what);
        const Exercise& e = *find_exercise(input.exercise);
        Case c;
        c.n = input.n;
        c.data = input.data;
        c.seed = 2024;
        c.shape = e.family == Family::conv2d ? ConvolutionShape{1'000'003, 1, 7} : ConvolutionShape{0, 0, 7};
        const CaseInputs one = with_threads(1, [&] { return make_inputs(e, c); });
        const CaseInputs many = with_threads(many_threads, [&] { return make_inputs(e, c); });
        CHECK(one.in_f32 == many.in_f32);
        CHECK(one.in_f64 == many.in_f64);
        CHECK(one.mask == many.mask);
        const CaseInputs timed_one = with_threads(1, [&] { return make_timed_inputs(e, c, 99, 2); });
        const CaseInputs timed_many = with_threads(many_threads, [&] { return make_timed_inputs(e, c, 99, 2); });
        CHECK(timed_one.in_f32 == timed_many.in_f32);
        CHECK(timed_one.in_f64 == timed_many.in_f64);
        CHECK(timed_one.mask == one.mask);
    }
}

TEST_CASE("inputs generated in parallel are those of one pass over the seed's stream, as before")
{
    // Pinned from the sequential generators these replaced: the parallel ones skip ahead in the
    // same stream (SplitMix64::discard), so no data changed but integer scan data past one period.
    struct Pinned {
        const char* exercise;
        const char* label;
        std::uint64_t input_fnv1a;
    };
    for (const Pinned& pinned : {Pinned{"scan_kogge_stone", "n=1000000/frac", 0x89a17016b1df015bull},
                                 Pinned{"reduce_unroll_last_warp", "n=1000000/frac", 0xa699ba8994bdadccull},
                                 Pinned{"reduce_unroll_last_warp", "n=1000000/mixed", 0x32eb3ac84698e367ull},
                                 Pinned{"conv1d_tiled", "n=1000000/mw=31/frac", 0xe5e4ad43fd30dec3ull},
                                 Pinned{"conv2d_tiled", "1023x1025/mw=9/int", 0xa5d1d83606749095ull}}) {
        const std::string label = pinned.label;
        CAPTURE(label);
        const Exercise& e = *find_exercise(pinned.exercise);
        const auto cases = cases_for(e);
        const CaseInputs inputs = make_inputs(e, *find_case(cases, pinned.label));
        CHECK(fnv1a64(inputs.input_data(), inputs.input_bytes()) == pinned.input_fnv1a);
    }
}

TEST_CASE("timed inputs: independent draws per seed and repetition, integers in the family's range")
{
    for (const char* name : {"scan_hierarchical", "reduce_unroll_last_warp", "conv1d_tiled"}) {
        const std::string exercise = name;
        CAPTURE(exercise);
        const Exercise& e = *find_exercise(name);
        const TimedValues range = family_of(e).timed_values();
        REQUIRE(range.lo < 0);
        REQUIRE(range.hi > 0);
        Case c;
        c.n = 100'000;
        c.shape = ConvolutionShape{0, 0, 7};  // read by the convolution only
        c.seed = 5;
        const CaseInputs a = make_timed_inputs(e, c, 0x1234, 0);
        const CaseInputs b = make_timed_inputs(e, c, 0x1234, 1);
        const CaseInputs other_seed = make_timed_inputs(e, c, 0x1235, 0);
        auto values = [](const CaseInputs& in) {
            std::vector<double> v(in.in_f32.begin(), in.in_f32.end());
            v.insert(v.end(), in.in_f64.begin(), in.in_f64.end());
            return v;
        };
        const std::vector<double> va = values(a), vb = values(b), vc = values(other_seed);
        REQUIRE(va.size() == static_cast<std::size_t>(c.n));
        int same_rep = 0, same_seed = 0, low = 0, high = 0;
        for (std::size_t i = 0; i < va.size(); ++i) {
            CHECK(va[i] == std::floor(va[i]));
            low += va[i] == range.lo;
            high += va[i] == range.hi;
            CHECK((va[i] >= range.lo && va[i] <= range.hi));
            same_rep += va[i] == vb[i];
            same_seed += va[i] == vc[i];
        }
        // Independent draws agree about once in (hi - lo + 1); a sign flip of one base would agree far more.
        const double chance = 1.0 / (range.hi - range.lo + 1);
        CHECK(same_rep < 2 * chance * c.n + 50);
        CHECK(same_seed < 2 * chance * c.n + 50);
        CHECK(low > 0);
        CHECK(high > 0);
        CHECK(a.mask == family_of(e).mask(c));
    }
}

TEST_CASE("each exercise's block is the one number its family reads")
{
    CHECK(scan_section(*find_exercise("scan_kogge_stone")) == 1024);
    CHECK(scan_section(*find_exercise("scan_brent_kung")) == 2048);
    CHECK(scan_section(*find_exercise("scan_hierarchical")) == 2048);
    CHECK(find_exercise("reduce_interleaved_divergent")->block == 256);
    CHECK(find_exercise("reduce_first_add_during_load")->block == 512);
    CHECK(find_exercise("conv1d_tiled")->block == 1024);
    CHECK(find_exercise("conv2d_tiled")->block == 32);
    for (const auto& e : all_exercises()) CHECK_MESSAGE(e.block > 0, e.name);
}

TEST_CASE("labels come from the family: sizes, and a convolution's shape and mask width")
{
    Case c;
    c.n = 4099;
    c.shape = ConvolutionShape{0, 0, 7};
    CHECK(case_label(*find_exercise("conv1d_tiled"), c) == "n=4099/mw=7/int");
    c.shape = ConvolutionShape{70, 45, 3}, c.n = 70 * 45, c.data = DataKind::fractions;
    CHECK(case_label(*find_exercise("conv2d_tiled"), c) == "70x45/mw=3/frac");
    Case plain;
    plain.n = 2049;
    plain.data = DataKind::mixed_magnitudes;
    CHECK(case_label(*find_exercise("reduce_unroll_last_warp"), plain) == "n=2049/mixed");
    // Every case's label is the one its family gives its shape.
    for (const auto& e : all_exercises())
        for (const auto& own : cases_for(e)) CHECK_MESSAGE(case_label(e, own) == own.label, e.name << " " << own.label);
}

TEST_CASE("the bench's plan and case come from the family (grade bench, both sides)")
{
    using Oracle = BenchPlan::Oracle;
    const BenchPlan kogge_stone = bench_plan(*find_exercise("scan_kogge_stone"));
    CHECK(kogge_stone.oracle == Oracle::cub_inclusive_scan);
    CHECK(kogge_stone.section == 1024);
    CHECK(kogge_stone.output_moves_bytes);
    CHECK(kogge_stone.timed_beside_cub());
    CHECK(bench_plan(*find_exercise("scan_brent_kung")).section == 2048);
    CHECK(bench_plan(*find_exercise("scan_hierarchical")).section == 0);  // CUB's whole-array scan is its own
    const BenchPlan reduction = bench_plan(*find_exercise("reduce_sequential_addressing"));
    CHECK(reduction.oracle == Oracle::cub_sum);
    CHECK_FALSE(reduction.output_moves_bytes);
    CHECK(reduction.timed_beside_cub());
    for (const char* name : {"conv1d_tiled", "conv2d_tiled"}) {
        const BenchPlan conv = bench_plan(*find_exercise(name));
        CHECK(conv.oracle == Oracle::direct_convolution);
        CHECK_FALSE(conv.timed_beside_cub());
        CHECK(conv.section == 0);
    }

    const Case scan = bench_case(*find_exercise("scan_hierarchical"), 10'000'000);
    CHECK(scan.n == 10'000'000);
    CHECK_FALSE(scan.shape.has_value());
    CHECK(scan.label == "bench/n=10000000");
    CHECK(scan.data == DataKind::integers);
    CHECK(scan.seed == seed_for("scan_hierarchical", "bench/n=10000000"));
    const Case conv1d = bench_case(*find_exercise("conv1d_tiled"), 10'000'000);
    CHECK(conv1d.n == 10'000'000);
    CHECK(conv(conv1d).height == 0);
    CHECK(conv(conv1d).mask_width == 7);
    // The smallest square image of at least `size` pixels.
    const Case conv2d = bench_case(*find_exercise("conv2d_tiled"), 10'000'000);
    CHECK(conv(conv2d).height == 3163);
    CHECK(conv(conv2d).width == 3163);
    CHECK(conv2d.n == 3163 * 3163);
    CHECK(conv(conv2d).mask_width == 5);
    CHECK(conv(bench_case(*find_exercise("conv2d_tiled"), std::int64_t{1} << 26)).height == 8192);
    CHECK(conv(bench_case(*find_exercise("conv2d_tiled"), 1)).height == 1);
    CHECK(conv(bench_case(*find_exercise("conv2d_tiled"), 5)).height == 3);
}

TEST_CASE("a case scaled down by its family: an image keeps its width, whole rows")
{
    Case image;
    image.shape = ConvolutionShape{8192, 8192, 5};
    image.n = 8192 * 8192;
    const Case small_image = family_of(*find_exercise("conv2d_tiled")).scaled_down(image, 1'000'000);
    CHECK(conv(small_image).width == 8192);
    CHECK(conv(small_image).height == 122);
    CHECK(small_image.n == 122 * 8192);
    CHECK(conv(small_image).mask_width == 5);
    CHECK(conv(image).height == 8192);  // the case itself is as it was
    image.shape = ConvolutionShape{1, 2'000'000, 5}, image.n = 2'000'000;  // wider than the target: one row
    CHECK(conv(family_of(*find_exercise("conv2d_tiled")).scaled_down(image, 1'000'000)).height == 1);

    Case row;
    row.n = std::int64_t{1} << 26;
    row.shape = ConvolutionShape{0, 0, 7};
    const Case small_row = family_of(*find_exercise("conv1d_tiled")).scaled_down(row, 1'000'000);
    CHECK(small_row.n == 1'000'000);
    CHECK(conv(small_row).height == 0);
    CHECK(conv(small_row).mask_width == 7);
    Case array;
    array.n = std::int64_t{1} << 27;
    CHECK(family_of(*find_exercise("reduce_unroll_last_warp")).scaled_down(array, 1'000'000).n == 1'000'000);
}

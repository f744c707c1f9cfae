// Case lists and input generation: the sizes the issue requires, reproducible seeds and data,
// integer scan data whose every partial sum is exact in float, never all zeros.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "harness/cases.hpp"
#include "harness/data.hpp"
#include "harness/exercise.hpp"
#include "scan/scan.hpp"

using namespace harness;

namespace {

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

TEST_CASE("scan cases cover the edge sizes, one timed case, and the large size for the whole-array scan")
{
    for (const char* name : {"scan_kogge_stone", "scan_brent_kung", "scan_hierarchical"}) {
        const auto cases = cases_for(*find_exercise(name));
        for (std::int64_t n : {1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 4096, 65537, 1'000'000, 4'125'000,
                               4'194'304, 4'196'353, 10'000'000})
            CHECK_MESSAGE(has_size(cases, n), name << " lacks n=" << n);
        CHECK(std::count_if(cases.begin(), cases.end(), [](const Case& c) { return c.timed; }) == 1);
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
    CHECK(checksum64(a.input_data(), a.input_bytes()) == 15029513871276744601ull);
}

TEST_CASE("integer scan data: integer values, never all zero, every range sum exact in float")
{
    const Exercise& e = *find_exercise("scan_hierarchical");
    Case c;
    c.n = 6'000'000;  // several periods of the target wave
    c.seed = 12345;
    const CaseInputs inputs = make_inputs(e, c);
    double prefix = 0, lowest = 0, highest = 0;
    std::int64_t nonzero = 0;
    for (float v : inputs.in_f32) {
        REQUIRE(v == std::floor(v));
        nonzero += v != 0;
        prefix += v;
        lowest = std::min(lowest, prefix);
        highest = std::max(highest, prefix);
    }
    CHECK(nonzero > c.n / 2);
    // Any sum of consecutive elements is a difference of two prefixes.
    CHECK(highest - lowest <= scan_prefix_bound);
    CHECK(scan_prefix_bound < 16'777'216.0);  // 2^24: exact in float
    CHECK(highest > 1'000'000);               // block sums are far from zero, so a missing offset shows
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

// Golden results and diagnosis for the reductions (one output value) and the convolutions
// (clusters at borders and tile edges, flipped or transposed masks, clamped or wrapped ghosts).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "harness/baseline.hpp"
#include "harness/cases.hpp"
#include "harness/check.hpp"
#include "harness/family.hpp"
#include "harness/poison.hpp"
#include "harness/timed_data.hpp"
#include "convolution/convolution.hpp"
#include "support/thread_limit.hpp"

using namespace harness;

namespace {

template <typename T>
RawOutput raw_output(const std::vector<T>& values, const CaseInputs& inputs)
{
    RawOutput r;
    const std::size_t n = values.size(), g = guard_elements;
    r.out_with_guards.resize((n + 2 * g) * sizeof(T));
    r.in_guards.resize(2 * g * sizeof(T));
    const auto unwritten = sizeof(T) == 8 ? unwritten_f64 : unwritten_f32;
    const auto guard = sizeof(T) == 8 ? input_guard_f64 : input_guard_f32;
    for (std::size_t i = 0; i < n + 2 * g; ++i)
        std::memcpy(r.out_with_guards.data() + i * sizeof(T), &unwritten, sizeof(T));
    for (std::size_t i = 0; i < 2 * g; ++i) std::memcpy(r.in_guards.data() + i * sizeof(T), &guard, sizeof(T));
    for (std::size_t i = 0; i < n; ++i)
        std::memcpy(r.out_with_guards.data() + (g + i) * sizeof(T), &values[i], sizeof(T));
    if (sizeof(T) == 8) {  // reductions get scratch
        r.scratch_guards.resize(2 * g * 8);
        for (std::size_t i = 0; i < 2 * g; ++i) std::memcpy(r.scratch_guards.data() + i * 8, &scratch_f64, 8);
    }
    r.input_checksum = bits_checksum(inputs.input_data(), inputs.input_bytes() / sizeof(T), sizeof(T) == 8);
    return r;
}

bool mentions(const Diagnosis& d, const std::string& text)
{
    for (const auto& f : d.findings)
        if (f.find(text) != std::string::npos) return true;
    return false;
}

struct Reduction {
    const Exercise& exercise = *find_exercise("reduce_sequential_addressing");
    Case c;
    CaseInputs inputs;
    Expected expected;
    explicit Reduction(std::int64_t n, DataKind data = DataKind::integers)
    {
        c.n = n;
        c.data = data;
        c.seed = 5;
        inputs = make_inputs(exercise, c);
        expected = golden(exercise, c, inputs);
    }
    double sum(std::int64_t from, std::int64_t to) const
    {
        double s = 0;
        for (std::int64_t i = from; i < to; ++i) s += inputs.in_f64[static_cast<std::size_t>(i)];
        return s;
    }
    Diagnosis check(double value) const
    {
        return check_case(exercise, c, inputs, expected, raw_output(std::vector<double>{value}, inputs));
    }
};

struct Conv {
    const Exercise& exercise;
    Case c;
    CaseInputs inputs;
    Expected expected;
    // One of the exercise's own cases, by its label.
    Conv(const char* name, const char* label) : exercise(*find_exercise(name))
    {
        const auto cases = cases_for(exercise);
        c = *find_case(cases, label);
        inputs = make_inputs(exercise, c);
        expected = golden(exercise, c, inputs);
    }
    Conv(const char* name, int height, int width, int mask_width, DataKind data = DataKind::integers)
        : exercise(*find_exercise(name))
    {
        c.n = std::int64_t{height} * width;
        c.shape = exercise.family == Family::conv2d ? ConvolutionShape{height, width, mask_width}
                                                    : ConvolutionShape{0, 0, mask_width};
        c.data = data;
        c.seed = 11;
        inputs = make_inputs(exercise, c);
        expected = golden(exercise, c, inputs);
    }
    std::vector<float> correct() const
    {
        std::vector<float> out;
        for (double v : expected.value) out.push_back(static_cast<float>(v));
        return out;
    }
    Diagnosis check(const std::vector<float>& out) const
    {
        return check_case(exercise, c, inputs, expected, raw_output(out, inputs));
    }
    // What a float kernel computes with `mask` (row-major, this case's mask_width), ghosts 0.
    std::vector<float> convolved_with(const std::vector<float>& mask) const
    {
        const bool two_d = exercise.family == Family::conv2d;
        const ConvolutionShape& shape = shape_of<ConvolutionShape>(c);
        const std::int64_t height = two_d ? shape.height : 1, width = two_d ? shape.width : c.n;
        const int w = shape.mask_width, r = w / 2, rows = two_d ? w : 1;
        std::vector<float> out(static_cast<std::size_t>(c.n));
        for (std::int64_t y = 0; y < height; ++y)
            for (std::int64_t x = 0; x < width; ++x) {
                float s = 0;
                for (int j = 0; j < rows; ++j)
                    for (int k = 0; k < w; ++k) {
                        const std::int64_t yy = two_d ? y - r + j : 0, xx = x - r + k;
                        if (yy >= 0 && yy < height && xx >= 0 && xx < width)
                            s += mask[static_cast<std::size_t>(j * w + k)] *
                                 inputs.in_f32[static_cast<std::size_t>(yy * width + xx)];
                    }
                out[static_cast<std::size_t>(y * width + x)] = s;
            }
        return out;
    }
};

}  // namespace

TEST_CASE("reduction data: integer sums are exact, fractions get a tolerance relative to sum |x|")
{
    Reduction ints(100'000);
    CHECK(ints.expected.tolerance_at(0) == 0);
    CHECK(ints.expected.value[0] == ints.sum(0, 100'000));
    Reduction mixed(100'000, DataKind::mixed_magnitudes);
    double abs_sum = 0, smallest = 1e300, largest = 0;
    for (double x : mixed.inputs.in_f64) {
        abs_sum += std::fabs(x);
        smallest = std::min(smallest, std::fabs(x));
        largest = std::max(largest, std::fabs(x));
    }
    CHECK(largest / smallest > 1e11);
    CHECK(mixed.expected.tolerance_at(0) == doctest::Approx(double_sum_tolerance(99'999, abs_sum)));
    CHECK(mixed.check(mixed.expected.value[0] + 0.5 * mixed.expected.tolerance_at(0)).correct);
}

TEST_CASE("reduction golden results: the same on one thread and on many")
{
    for (DataKind data : {DataKind::integers, DataKind::fractions, DataKind::mixed_magnitudes}) {
        const std::string kind = data_kind_name(data);
        CAPTURE(kind);
        Reduction r(1'000'003, data);
        const Expected one = with_threads(1, [&] { return golden(r.exercise, r.c, r.inputs); });
        const Expected many = with_threads(many_threads, [&] { return golden(r.exercise, r.c, r.inputs); });
        CHECK(one.value == many.value);
        CHECK(one.tolerance == many.tolerance);
        if (data == DataKind::integers) CHECK(one.value[0] == r.sum(0, r.c.n));  // integers: exact in double
    }
}

TEST_CASE("reduction diagnosis: a pass short, a dropped tail, one block twice, float precision, NaN")
{
    Reduction r(10'000);
    Diagnosis d = r.check(r.sum(0, 256));
    CHECK(mentions(d, "equals the sum of the first 256 elements only"));
    CHECK(d.detail["pattern"] == "prefix_only");

    d = r.check(r.sum(0, 9984));  // 39 whole blocks of 256
    CHECK(mentions(d, "the last 16 element(s), a partial block at the end, are never added"));
    CHECK(d.detail["pattern"] == "tail_dropped");

    Reduction r2049(2049);  // 4 blocks of 512 rounded down: also a power of two
    d = r2049.check(r2049.sum(0, 2048));
    CHECK(d.detail["pattern"] == "prefix_or_tail");
    CHECK(mentions(d, "or the last 1 element(s), a partial block at the end"));

    d = r.check(r.expected.value[0] + r.sum(0, 256));
    CHECK(mentions(d, "the first block or partial sum (in[0] to in[255]): that partial sum is added twice"));
    d = r.check(r.expected.value[0] + r.sum(9984, 10000));  // (missing, it is a dropped tail: above)
    CHECK(mentions(d, "the last block (in[9,984] to in[9,999]): that partial sum is added twice"));
    // An error some middle block's sum happens to equal is not blamed on that block.
    d = r.check(r.expected.value[0] + r.sum(512, 768));
    CHECK_FALSE(mentions(d, "partial sum is"));

    d = r.check(r.expected.value[0] + 3);
    CHECK(mentions(d, "off by 3 (integer data"));

    Reduction f(100'000, DataKind::fractions);
    d = f.check(static_cast<double>(static_cast<float>(f.expected.value[0])) + 1e-3);
    CHECK(d.detail["pattern"] == "float_precision");

    // Just past the tolerance: no block or prefix "explains" a rounding-sized error by chance.
    d = f.check(f.expected.value[0] + 2 * f.expected.tolerance_at(0));
    CHECK(d.detail["pattern"] == "float_precision");
    CHECK_FALSE(mentions(d, "block"));

    d = r.check(std::nan(""));
    CHECK(mentions(d, "load past the end of the input"));
}

TEST_CASE("reduction diagnosis: values through an int lose their fractions")
{
    // Each element through an int where it is loaded.
    Reduction mixed(2049, DataKind::mixed_magnitudes);
    std::int64_t each = 0;
    for (double x : mixed.inputs.in_f64) each += static_cast<std::int64_t>(x);
    Diagnosis d = mixed.check(static_cast<double>(each));
    CHECK(mentions(d, "the result equals the sum of the inputs with each element truncated to an integer (" +
                          with_commas(each) + "): the values pass through an `int`"));
    CHECK(mentions(d, "keep every value and partial sum in double"));
    CHECK(d.detail["pattern"] == "integer_truncation");

    // Fractions in [-1, 1) all truncate to 0; pairs added during the load (reduction 4, 256 threads)
    // truncate to -1, 0 or 1.
    Reduction fractions(65'537, DataKind::fractions);
    d = fractions.check(0.0);
    CHECK(mentions(d, "truncated to an integer (0)"));
    CHECK(mentions(d, "every value lies in (-1, 1); or nothing at all was added into out[0]"));
    const auto& in = fractions.inputs.in_f64;
    std::int64_t pairs = 0;
    for (std::size_t i = 0; i < in.size(); ++i)
        if (i % 512 < 256) pairs += static_cast<std::int64_t>(in[i] + (i + 256 < in.size() ? in[i + 256] : 0.0));
    REQUIRE(pairs != 0);
    d = fractions.check(static_cast<double>(pairs));
    CHECK(mentions(d, "with each pair in[i] + in[i + 256] (the first add during the load) truncated to an integer"));

    // A float accumulator is not an int: its result is not called truncated.
    float f = 0;
    for (double x : mixed.inputs.in_f64) f += static_cast<float>(x);
    CHECK_FALSE(mentions(mixed.check(static_cast<double>(f)), "truncated"));
    // Integer data: truncation changes nothing, so nothing is claimed.
    Reduction ints(2049);
    CHECK_FALSE(mentions(ints.check(ints.expected.value[0] + 1), "truncated"));
}

TEST_CASE("reduction diagnosis: atomicAdd into out[0] without setting it to 0 first")
{
    // The poison is a signalling NaN that an atomicAdd leaves as it is: out[0] looks never written.
    // Run again from out[0] = 0, the launcher gives the right sum.
    Reduction r(10'000);
    double poison;
    std::memcpy(&poison, &unwritten_f64, sizeof poison);
    RawOutput raw = raw_output(std::vector<double>{poison}, r.inputs);
    raw.zero_start_checksum = output_checksum(r.expected.value.data(), 1);
    Diagnosis d = check_case(r.exercise, r.c, r.inputs, r.expected, raw);
    CHECK(mentions(d, "out[0] is the right sum plus the value it held before the launch"));
    CHECK(mentions(d,
                   "your kernel adds into out[0] (atomicAdd) without setting it to 0 first; set it with "
                   "cudaMemset or a first kernel"));
    CHECK(mentions(d, "first wrong element: out[0] still holds the NaN pattern it held before the launch"));
    CHECK_FALSE(mentions(d, "no output element was written"));
    CHECK_FALSE(mentions(d, "never written"));

    // The same with the poison quieted by the addition.
    d = check_case(r.exercise, r.c, r.inputs, r.expected, [&] {
        RawOutput quiet = raw_output(std::vector<double>{std::nan("")}, r.inputs);
        quiet.zero_start_checksum = raw.zero_start_checksum;
        return quiet;
    }());
    CHECK(mentions(d, "out[0] is the right sum plus the value it held before the launch"));
    CHECK_FALSE(mentions(d, "load past the end of the input"));

    // A launcher that writes nothing leaves 0 from zeros: still "no output element was written".
    raw.zero_start_checksum = output_checksum(std::vector<double>{0.0}.data(), 1);
    d = check_case(r.exercise, r.c, r.inputs, r.expected, raw);
    CHECK(mentions(d, "no output element was written"));
    CHECK_FALSE(mentions(d, "held before the launch"));
    // Nor is anything concluded where the right sum is 0 (the same 0 a launcher that does nothing leaves).
    Reduction zero(1);
    zero.inputs.in_f64[0] = 0;
    zero.expected = golden(zero.exercise, zero.c, zero.inputs);
    RawOutput untouched = raw_output(std::vector<double>{poison}, zero.inputs);
    untouched.zero_start_checksum = output_checksum(zero.expected.value.data(), 1);
    CHECK(mentions(check_case(zero.exercise, zero.c, zero.inputs, zero.expected, untouched),
                   "no output element was written"));
}

TEST_CASE("reduction diagnosis: a last warp unrolled without volatile or __syncwarp reads stale slots")
{
    // What thread 0 ends with when every read of the unrolled steps sees the slots as the tree loop
    // left them: the elements whose index modulo 64 is 0, 1, 2, 4, 8, 16 or 32.
    auto in_slots = [](std::int64_t j) {
        const std::int64_t t = j % 64;
        return t == 0 || t == 1 || t == 2 || t == 4 || t == 8 || t == 16 || t == 32;
    };
    auto stale_sum = [&](const Reduction& r, int block_shift, int passes) {
        double s = 0;
        for (std::int64_t j = 0; j < r.c.n; ++j) {
            bool counts = in_slots(j);
            for (int level = 1; level < passes; ++level) counts = counts && in_slots(j >> (level * block_shift));
            if (counts) s += r.inputs.in_f64[static_cast<std::size_t>(j)];
        }
        return s;
    };

    Reduction one_block(100);  // one pass
    Diagnosis d = one_block.check(stale_sum(one_block, 0, 1));
    CHECK(mentions(d, "off by"));
    CHECK(mentions(d,
                   "the sum of only the elements whose index modulo 64 is 0, 1, 2, 4, 8, 16 or 32 (in the first "
                   "pass)"));
    CHECK(mentions(d, "declare the shared array `volatile` in the unrolled steps and put `__syncwarp()`"));
    CHECK(d.detail["pattern"] == "stale_last_warp");

    // Blocks of 512 elements (256 threads), the same kernel for every pass: 10,000 -> 20 -> 1.
    Reduction r(10'000);
    d = r.check(stale_sum(r, 9, 2));
    CHECK(mentions(d, "(in blocks of 512 elements, at every one of the 2 passes)"));
    CHECK(d.detail["stale_warp"]["block_elements"] == 512);
    // Stale in the first pass only (block sums added by atomicAdd or on the host).
    d = r.check(stale_sum(r, 0, 1));
    CHECK(mentions(d, "(in the first pass)"));

    // Three passes of blocks of 1024 at 1,048,577 elements, on fractional data within the tolerance.
    Reduction big(1'048'577, DataKind::fractions);
    d = big.check(stale_sum(big, 10, 3) + 0.5 * big.expected.tolerance_at(0));
    CHECK(mentions(d, "(in blocks of 1,024 elements, at every one of the 3 passes)"));

    // An error of another kind is not called a stale warp.
    d = r.check(r.expected.value[0] + 7);
    CHECK_FALSE(mentions(d, "modulo 64"));
}

TEST_CASE("reduction cases: block edges of the variant, a large size, three kinds of data")
{
    const auto cases = cases_for(*find_exercise("reduce_first_add_during_load"));
    auto has = [&](std::int64_t n, DataKind k) {
        return std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.n == n && c.data == k; });
    };
    for (std::int64_t n : {511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4'125'000, 10'000'000})
        CHECK(has(n, DataKind::integers));
    CHECK(has(std::int64_t{1} << 27, DataKind::integers));
    CHECK(has(1'000'000, DataKind::fractions));
    CHECK(has(1'000'000, DataKind::mixed_magnitudes));
}

TEST_CASE("convolution inputs: masks change between cases and are neither symmetric nor transposable")
{
    const Exercise& e = *find_exercise("conv2d_tiled");
    const auto cases = cases_for(e);
    std::vector<std::vector<float>> masks;
    for (const auto& c : cases) {
        const CaseInputs inputs = make_inputs(e, c);
        const int w = shape_of<ConvolutionShape>(c).mask_width;
        REQUIRE(inputs.mask.size() == static_cast<std::size_t>(w * w));
        if (w > 1) {
            CHECK(inputs.mask.front() != inputs.mask.back());
            CHECK(inputs.mask[1] != inputs.mask[static_cast<std::size_t>(w)]);
        }
        masks.push_back(inputs.mask);
    }
    CHECK(masks[3] != masks[4]);
    bool square = false, non_square_large = false;
    for (const auto& c : cases) {
        const ConvolutionShape& s = shape_of<ConvolutionShape>(c);
        square = square || (s.height == 8192 && s.width == 8192 && c.timed);
        non_square_large = non_square_large || (s.height * std::int64_t{s.width} > 4'000'000 && s.height != s.width);
    }
    CHECK(square);
    CHECK(non_square_large);
}

TEST_CASE("conv1d golden: zero ghosts, the mask applied as written")
{
    Conv conv("conv1d_tiled", 1, 5, 3);
    const auto& in = conv.inputs.in_f32;
    const auto& m = conv.inputs.mask;
    CHECK(conv.expected.value[0] == m[1] * in[0] + m[2] * in[1]);
    CHECK(conv.expected.value[2] == m[0] * in[1] + m[1] * in[2] + m[2] * in[3]);
    CHECK(conv.expected.value[4] == m[0] * in[3] + m[1] * in[4]);
}

TEST_CASE("conv1d diagnosis: flipped mask, clamped ghosts, a halo error at tile edges")
{
    Conv conv("conv1d_tiled", 1, 4099, 5);
    const auto& in = conv.inputs.in_f32;
    const auto& m = conv.inputs.mask;
    std::vector<float> flipped(4099);
    for (int i = 0; i < 4099; ++i) {
        float s = 0;
        for (int j = 0; j < 5; ++j)
            if (i - 2 + j >= 0 && i - 2 + j < 4099)
                s += m[static_cast<std::size_t>(4 - j)] * in[static_cast<std::size_t>(i - 2 + j)];
        flipped[static_cast<std::size_t>(i)] = s;
    }
    CHECK(mentions(conv.check(flipped), "the mask reversed"));

    std::vector<float> clamped = conv.correct();
    clamped[0] += m[0] * in[0] + m[1] * in[0];
    clamped[1] += m[0] * in[0];
    CHECK(mentions(conv.check(clamped), "within r = 2 of the array's ends"));
    CHECK(mentions(conv.check(clamped), "clamped to the nearest edge value"));

    std::vector<float> halo = conv.correct();
    for (int tile = 1; tile <= 3; ++tile) halo[static_cast<std::size_t>(1024 * tile - 1)] += 1;
    const Diagnosis d = conv.check(halo);
    CHECK(mentions(d, "of a multiple of 1024: the halo cells"));
    CHECK(d.detail["where"] == "tile_borders");
}

TEST_CASE("conv2d diagnosis: rows and columns, wrapped ghosts, swapped dimensions")
{
    Conv conv("conv2d_tiled", 20, 30, 3);
    std::vector<float> out = conv.correct();
    out[5 * 30 + 7] += 1;
    Diagnosis d = conv.check(out);
    CHECK(mentions(d, "row 5, column 7; wrong elements in 1 of 20 rows and 1 of 30 columns"));
    CHECK(d.detail["where"] == "everywhere");

    // Wrapped ghosts: recompute the border outputs periodically.
    const auto& in = conv.inputs.in_f32;
    const auto& m = conv.inputs.mask;
    std::vector<float> wrapped = conv.correct();
    for (int y = 0; y < 20; ++y)
        for (int x = 0; x < 30; ++x) {
            if (y > 0 && y < 19 && x > 0 && x < 29) continue;
            float s = 0;
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 3; ++k)
                    s += m[static_cast<std::size_t>(j * 3 + k)] *
                         in[static_cast<std::size_t>(((y - 1 + j + 20) % 20) * 30 + (x - 1 + k + 30) % 30)];
            wrapped[static_cast<std::size_t>(y * 30 + x)] = s;
        }
    d = conv.check(wrapped);
    CHECK(mentions(d, "within r = 1 of the image's borders"));
    CHECK(mentions(d, "wrap around"));

    // Column-major addressing throughout: the transpose of the image convolved with the
    // transposed mask, written back column-major.
    std::vector<float> swapped(600);
    for (int y = 0; y < 30; ++y)  // rows of the 30 x 20 reading
        for (int x = 0; x < 20; ++x) {
            float s = 0;
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 3; ++k) {
                    const int yy = y - 1 + j, xx = x - 1 + k;
                    if (yy >= 0 && yy < 30 && xx >= 0 && xx < 20)
                        s += m[static_cast<std::size_t>(k * 3 + j)] * in[static_cast<std::size_t>(yy * 20 + xx)];
                }
            swapped[static_cast<std::size_t>(y * 20 + x)] = s;
        }
    CHECK(mentions(conv.check(swapped), "rows and columns are swapped"));
}

TEST_CASE("convolution diagnosis: a mask other than the case's, fitted from the output")
{
    // The mask copied to __constant__ memory once, on the first case (mask_width 1): the kernel of
    // a later case with mask_width 3 reads that weight and the zeros after it.
    const Exercise& e1 = *find_exercise("conv1d_tiled");
    const auto cases = cases_for(e1);
    const std::vector<float> first_mask = family_of(e1).mask(*find_case(cases, "n=4099/mw=1/int"));
    REQUIRE(first_mask.size() == 1);
    Conv later("conv1d_tiled", "n=4099/mw=3/int");
    Diagnosis d = later.check(later.convolved_with({first_mask[0], 0.0f, 0.0f}));
    CHECK(mentions(d, "the output is the convolution with the mask (" + format_value(first_mask[0]) +
                          ", 0, 0) instead of this case's"));
    CHECK(mentions(d, "which is the mask of case n=4099/mw=1/int"));
    CHECK(mentions(d,
                   "your kernel used a mask other than this case's: copy the mask into __constant__ memory on "
                   "every call"));
    CHECK(d.detail["pattern"] == "other_mask");

    // A mask of no case, on fractional data in 2D: the values the kernel used are named.
    Conv conv2("conv2d_tiled", 60, 70, 3, DataKind::fractions);
    const std::vector<float> other = {0.5f, -1.25f, 2.0f, 0.75f, 1.0f, -0.5f, 0.25f, 3.0f, -2.0f};
    d = conv2.check(conv2.convolved_with(other));
    CHECK(mentions(d, "the output is the convolution with the mask (0.5, -1.25, 2, 0.75, 1, -0.5, 0.25, 3, -2)"));
    CHECK_FALSE(mentions(d, "which is the mask of case"));
    CHECK(mentions(d, "your kernel used a mask other than this case's"));

    // A 2D __constant__ float M[10][10] filled by one copy of mask_width^2 weights: row j of what the
    // kernel reads is weights 10 j to 10 j + 4 of the mask, zeros past the 25 copied.
    Conv conv5("conv2d_tiled", 40, 50, 5);
    std::vector<float> pitched(25, 0.0f);
    for (int j = 0; j < 5; ++j)
        for (int k = 0; k < 5; ++k)
            if (10 * j + k < 25)
                pitched[static_cast<std::size_t>(5 * j + k)] = conv5.inputs.mask[static_cast<std::size_t>(10 * j + k)];
    d = conv5.check(conv5.convolved_with(pitched));
    CHECK(mentions(d,
                   "the first row of the mask is right, the other rows are not; row j is weights j * 10 to j * 10 + "
                   "mask_width - 1 of the mask: it sits in a __constant__ array with rows of 10 floats"));
    CHECK(mentions(d, "Declare a 1D __constant__ array and read M[j * mask_width + k]"));
    CHECK(d.detail["pattern"] == "mask_row_length");
    CHECK(d.detail["constant_row_length"] == 10);
    // With mask_width 3 no row but the first lies inside the copy: no row length is named.
    Conv conv3("conv2d_tiled", 40, 50, 3);
    std::vector<float> first_row(9, 0.0f);
    std::copy(conv3.inputs.mask.begin(), conv3.inputs.mask.begin() + 3, first_row.begin());
    d = conv3.check(conv3.convolved_with(first_row));
    CHECK(mentions(d,
                   "the first row of the mask is right, the other rows are not: is the mask in a 2D __constant__ "
                   "array with rows longer than mask_width"));
    CHECK_FALSE(mentions(d, "rows of 10 floats"));

    // The mask never copied: __constant__ memory holds zeros.
    Conv conv1("conv1d_tiled", 1, 5000, 7);
    d = conv1.check(std::vector<float>(5000, 0.0f));
    CHECK(mentions(d, "the output is what a mask of zeros gives"));
    CHECK(d.detail["pattern"] == "zero_mask");

    // Not a convolution with any mask: no mask is named. The right mask with a few wrong elements
    // (a halo error) is not another mask either.
    std::vector<float> noisy = conv1.correct();
    for (std::size_t i = 0; i < noisy.size(); i += 3) noisy[i] += static_cast<float>(i % 7) + 1;
    CHECK_FALSE(mentions(conv1.check(noisy), "mask"));
    std::vector<float> halo = conv1.correct();
    for (int tile = 1; tile <= 3; ++tile) halo[static_cast<std::size_t>(1024 * tile - 1)] += 1;
    CHECK_FALSE(mentions(conv1.check(halo), "a mask other than"));

    // A flipped mask keeps its own, more precise name.
    std::vector<float> flipped(conv1.inputs.mask.rbegin(), conv1.inputs.mask.rend());
    d = conv1.check(conv1.convolved_with(flipped));
    CHECK(mentions(d, "the mask reversed"));
    CHECK_FALSE(mentions(d, "a mask other than"));
}

TEST_CASE("convolution golden results and diagnoses: the same on one thread and on many")
{
    for (const Conv& conv :
         {Conv("conv2d_tiled", 700, 301, 7, DataKind::fractions), Conv("conv1d_tiled", 1, 300'001, 15)}) {
        const Expected one = with_threads(1, [&] { return golden(conv.exercise, conv.c, conv.inputs); });
        const Expected many = with_threads(many_threads, [&] { return golden(conv.exercise, conv.c, conv.inputs); });
        CHECK(one.value == conv.expected.value);
        CHECK(one.value == many.value);
        CHECK(one.tolerance == many.tolerance);
        CHECK(one.tolerance.size() == (conv.c.data == DataKind::integers ? 0 : one.value.size()));
        // Wrong at the ends only: the diagnosis convolves the input with each mistake's model.
        std::vector<float> out = conv.correct();
        out.front() += 1000;
        out.back() += 1000;
        const Diagnosis d1 = with_threads(1, [&] { return conv.check(out); });
        const Diagnosis dn = with_threads(many_threads, [&] { return conv.check(out); });
        CHECK(d1.findings == dn.findings);
        CHECK(d1.detail.dump() == dn.detail.dump());
        CHECK(d1.detail["where"] == "image_borders");
    }
}

TEST_CASE("the CPU baseline of a case above 2^23 elements is timed on a scaled-down copy of it")
{
    // The case's own inputs are not even made (it is given empty ones, which it would read out of
    // bounds): the copy of 1024 rows of 8192 pixels gets its own.
    const Exercise& e = *find_exercise("conv2d_tiled");
    const auto cases = cases_for(e);
    const Case* timed = find_case(cases, "8192x8192/mw=5/int");
    REQUIRE(timed != nullptr);
    REQUIRE(timed->n > cpu_baseline_elements);
    CHECK(cpu_baseline_ms(e, *timed, CaseInputs{}, 1) > 0);
}

TEST_CASE("convolution golden results: every tap inside the array, in order, ghosts skipped, bit for bit")
{
    // The golden loop visits only the taps inside the array; here the plain loop over all taps
    // with a test for each, in double, in the same order: the same sums exactly, on images smaller
    // than the mask, one row or column, and the edges of larger ones, of integers and fractions.
    for (const DataKind data : {DataKind::integers, DataKind::fractions})
        for (const auto& [name, height, width, mask_width] :
             std::vector<std::tuple<const char*, int, int, int>>{{"conv2d_tiled", 1, 1, 5},   {"conv2d_tiled", 3, 2, 7},
                                                                 {"conv2d_tiled", 1, 40, 3},  {"conv2d_tiled", 37, 1, 5},
                                                                 {"conv2d_tiled", 33, 45, 7}, {"conv2d_tiled", 20, 19, 15},
                                                                 {"conv1d_tiled", 1, 1, 7},   {"conv1d_tiled", 1, 6, 15},
                                                                 {"conv1d_tiled", 1, 1000, 9}}) {
            CAPTURE(name);
            CAPTURE(height);
            CAPTURE(width);
            CAPTURE(mask_width);
            const Conv conv(name, height, width, mask_width, data);
            const bool two_d = conv.exercise.family == Family::conv2d;
            const std::int64_t h = two_d ? height : 1, wd = two_d ? width : std::int64_t{height} * width;
            const int w = mask_width, r = w / 2, rows = two_d ? w : 1;
            bool all_equal = true, tolerances_equal = true;
            for (std::int64_t y = 0; y < h; ++y)
                for (std::int64_t x = 0; x < wd; ++x) {
                    double sum = 0, abs_sum = 0;
                    for (int j = 0; j < rows; ++j)
                        for (int k = 0; k < w; ++k) {
                            const std::int64_t yy = two_d ? y - r + j : 0, xx = x - r + k;
                            if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                            const double term = static_cast<double>(conv.inputs.mask[static_cast<std::size_t>(j * w + k)]) *
                                                conv.inputs.in_f32[static_cast<std::size_t>(yy * wd + xx)];
                            sum += term;
                            abs_sum += std::fabs(term);
                        }
                    const auto i = static_cast<std::size_t>(y * wd + x);
                    all_equal = all_equal && conv.expected.value[i] == sum;
                    if (data != DataKind::integers)
                        tolerances_equal = tolerances_equal &&
                                           conv.expected.tolerance[i] == float_sum_tolerance(std::int64_t{rows} * w, abs_sum);
                }
            CHECK(all_equal);
            CHECK(tolerances_equal);
            CHECK(conv.expected.tolerance.empty() == (data == DataKind::integers));
        }
}

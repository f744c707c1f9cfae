// Convolution cases and inputs (harness_core: the runner generates the same inputs as the grader).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "convolution/convolution.hpp"
#include "harness/family.hpp"

namespace harness {
namespace {

// Integers in [-magnitude, magnitude] (sums of up to 225 products with the mask are exact), or
// multiples of 2^-16 in [-1, 1); one draw each, from draw `first_draw` of the stream of `seed` on.
template <typename Vector>
Vector conv_values(std::int64_t count, DataKind kind, std::uint64_t seed, std::uint64_t first_draw, int magnitude)
{
    Vector values(static_cast<std::size_t>(count));
    fill_from_stream(values, seed, first_draw, 1, [kind, magnitude](SplitMix64& rng) {
        return kind == DataKind::integers ? static_cast<float>(rng.uniform_int(-magnitude, magnitude))
                                          : static_cast<float>(rng.uniform_int(-(1 << 16), (1 << 16) - 1)) / 65536.0f;
    });
    return values;
}

// A mask that is not symmetric (a flipped mask is caught) and, in 2D, not equal to its transpose
// (swapped rows and columns are caught), with no zero weight.
// Draws 0 to mask_width (2D: mask_width^2) - 1 of the case's stream.
std::vector<float> conv_mask(const Case& c, bool two_d)
{
    const int w = shape_of<ConvolutionShape>(c).mask_width;
    auto mask = conv_values<std::vector<float>>(two_d ? w * w : w, c.data, c.seed, 0, 4);
    const float one = c.data == DataKind::integers ? 1.0f : 0.25f;
    // No zero entries: a zero weight would hide a wrong or missing input cell under it.
    for (auto& m : mask)
        if (m == 0) m = one;
    if (w > 1) {
        const std::size_t last = two_d ? static_cast<std::size_t>(w * w - 1) : static_cast<std::size_t>(w - 1);
        // The negation differs from a nonzero weight and is itself nonzero.
        if (mask[0] == mask[last]) mask[last] = -mask[0];
        if (two_d && mask[1] == mask[static_cast<std::size_t>(w)]) mask[static_cast<std::size_t>(w)] = -mask[1];
    }
    return mask;
}

// The widest mask a case spec may ask for (the exercises' own go to 31 in 1D, 15 in 2D).
constexpr std::int64_t max_mask_width = 255;

class ConvolutionFamily : public ExerciseFamily {
public:
    explicit ConvolutionFamily(bool two_d) : two_d_(two_d) {}
    ElementType element_type() const override { return ElementType::f32; }
    bool uses_scratch() const override { return false; }
    // The mask read from constant memory, the tile (with its halo) staged in shared memory behind
    // a barrier.
    std::vector<Technique> technique() const override
    {
        return {Technique::reads_constant_memory, Technique::uses_shared_memory, Technique::synchronizes_block};
    }
    std::vector<Case> cases(const Exercise& exercise) const override
    {
        return two_d_ ? cases_2d(exercise) : cases_1d(exercise);
    }

    // Every case has its own mask (from its seed), so a kernel that copies the mask to constant
    // memory only once fails the later cases. The input's values follow the mask's in the stream.
    CaseInputs inputs(const Exercise&, const Case& c) const override
    {
        CaseInputs inputs;
        inputs.mask = conv_mask(c, two_d_);
        inputs.in_f32 = conv_values<UninitializedVector<float>>(c.n, c.data, c.seed, inputs.mask.size(), 8);
        return inputs;
    }

    // As the integer cases: sums of up to 225 products with the mask are exact.
    TimedValues timed_values() const override { return {-8, 8}; }
    std::vector<float> mask(const Case& c) const override { return conv_mask(c, two_d_); }

    // "n=4099/mw=7/int" (1D), "70x45/mw=3/frac" (2D).
    std::string label(const Case& c) const override
    {
        const ConvolutionShape& s = shape_of<ConvolutionShape>(c);
        const std::string shape =
            two_d_ ? std::to_string(s.height) + "x" + std::to_string(s.width) : "n=" + std::to_string(c.n);
        return shape + "/mw=" + std::to_string(s.mask_width) + "/" + (c.data == DataKind::integers ? "int" : "frac");
    }

    // {"n", "mask_width"} (1D), {"height", "width", "mask_width"} (2D).
    nlohmann::json shape_json(const Case& c) const override
    {
        const ConvolutionShape& s = shape_of<ConvolutionShape>(c);
        if (two_d_) return {{"height", s.height}, {"width", s.width}, {"mask_width", s.mask_width}};
        return {{"n", c.n}, {"mask_width", s.mask_width}};
    }
    void read_shape(const nlohmann::json& shape, Case& c) const override
    {
        ConvolutionShape s;
        if (two_d_) {
            require_shape_fields(shape, {"height", "width", "mask_width"}, "an image");
            s.height = static_cast<int>(shape_field(shape, "height", 1, max_case_elements));
            s.width = static_cast<int>(shape_field(shape, "width", 1, max_case_elements));
            c.n = std::int64_t{s.height} * s.width;
            if (c.n > max_case_elements)
                throw std::invalid_argument("an image of " + std::to_string(c.n) + " pixels: more than an int counts");
        } else {
            require_shape_fields(shape, {"n", "mask_width"}, "an array");
            c.n = shape_field(shape, "n", 1, max_case_elements);
        }
        s.mask_width = static_cast<int>(shape_field(shape, "mask_width", 1, max_mask_width));
        c.shape = s;
    }
    std::vector<std::string> shape_choices() const override { return {"mask_width"}; }

    // An image keeps its width and loses rows.
    Case scaled_down(const Case& c, std::int64_t elements) const override
    {
        if (!two_d_) return ExerciseFamily::scaled_down(c, elements);
        Case small = c;
        ConvolutionShape s = shape_of<ConvolutionShape>(c);
        s.height = static_cast<int>(std::max<std::int64_t>(1, elements / s.width));
        small.n = static_cast<std::int64_t>(s.height) * s.width;
        small.shape = s;
        return small;
    }

    // CUB has no convolution: checked against the definition, timed beside the copy alone.
    BenchPlan bench_plan(const Exercise&) const override
    {
        BenchPlan plan;
        plan.oracle = BenchPlan::Oracle::direct_convolution;
        return plan;
    }
    // 1D: `size` elements, a 7-wide mask. 2D: the smallest square image of at least `size` pixels
    // (3163 x 3163 for 10^7, 8192 x 8192 for 2^26), a 5 x 5 mask.
    Case bench_shape(std::int64_t size) const override
    {
        Case c;
        c.n = size;
        ConvolutionShape s;
        s.mask_width = two_d_ ? 5 : 7;
        if (two_d_) {
            auto side = static_cast<std::int64_t>(std::sqrt(static_cast<double>(size)));
            while (side * side < size) ++side;
            while (side > 1 && (side - 1) * (side - 1) >= size) --side;
            s.height = s.width = static_cast<int>(side);
            c.n = side * side;
        }
        c.shape = s;
        return c;
    }

private:
    void add(CaseList& cases, std::int64_t height, std::int64_t width, int mask_width,
             DataKind data = DataKind::integers, bool timed = false) const
    {
        Case c;
        c.n = height * width;
        ConvolutionShape s;
        if (two_d_) s.height = static_cast<int>(height), s.width = static_cast<int>(width);
        s.mask_width = mask_width;
        c.shape = s;
        c.data = data;
        c.timed = timed;
        c.label = label(c);
        cases.add(c);
    }

    // 1D: every mask width on a few tiles, then the edges (1, mask_width - 1, a tile and its
    // neighbours) and large sizes.
    std::vector<Case> cases_1d(const Exercise& exercise) const
    {
        CaseList cases(exercise);
        const std::int64_t tile = conv_tile(exercise);
        for (int mw : {1, 3, 5, 7, 9, 15, 31}) add(cases, 1, 4 * tile + 3, mw);
        add(cases, 1, 1, 3);
        add(cases, 1, 1, 31);
        add(cases, 1, 30, 31);
        add(cases, 1, tile - 1, 7);
        add(cases, 1, tile, 9);
        add(cases, 1, tile + 1, 15);
        add(cases, 1, 2 * tile + 1, 31);
        add(cases, 1, 65537, 9, DataKind::fractions);
        add(cases, 1, 1'000'000, 31, DataKind::fractions);
        add(cases, 1, 4'125'000, 15);
        add(cases, 1, 10'000'000, 7);
        add(cases, 1, speed_n, 7, DataKind::integers, true);
        return cases.take();
    }

    // 2D: every mask width, degenerate shapes, odd shapes that are no multiple of the tile, and
    // large square and non-square images.
    std::vector<Case> cases_2d(const Exercise& exercise) const
    {
        CaseList cases(exercise);
        for (int mw : {1, 3, 5, 7, 9, 11, 13, 15}) add(cases, 70, 45, mw);
        add(cases, 1, 1, 1);
        add(cases, 1, 1, 5);
        add(cases, 1, 1000, 5);
        add(cases, 1000, 1, 5);
        add(cases, 17, 33, 3);
        add(cases, 33, 17, 7);
        add(cases, 1023, 1025, 9);
        add(cases, 513, 257, 7, DataKind::fractions);
        add(cases, 2000, 3000, 15);
        add(cases, 4096, 4096, 5);
        add(cases, 8192, 8192, 5, DataKind::integers, true);  // speed_n pixels
        return cases.take();
    }

    bool two_d_;
};

}  // namespace

const ExerciseFamily& conv1d_family()
{
    return single_instance<ConvolutionFamily, false>();
}

const ExerciseFamily& conv2d_family()
{
    return single_instance<ConvolutionFamily, true>();
}

}  // namespace harness

#include "harness/data.hpp"

#include "harness/variant.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace harness {
namespace {

// Integer-valued scan input whose running sum follows a slow triangle wave between 0 and about
// 2^21: each value is drawn from [-3, 12] while the sum is below the target and from [-12, 3]
// while above, so the sum tracks the target within a few units. Block sums are therefore rarely
// zero (a missing block offset shows), yet no prefix leaves [-12, scan_prefix_bound].
std::vector<float> scan_integers(std::int64_t n, std::uint64_t seed)
{
    constexpr std::int64_t period = std::int64_t{1} << 20;   // target rises 4 per element, then falls
    constexpr std::int64_t slope = 4;
    SplitMix64 rng(seed);
    std::vector<float> values(static_cast<std::size_t>(n));
    std::int64_t prefix = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t phase = i % period;
        const std::int64_t target = slope * (phase < period / 2 ? phase : period - phase);
        const std::int64_t v = prefix < target ? rng.uniform_int(-3, 12) : rng.uniform_int(-12, 3);
        prefix += v;
        values[static_cast<std::size_t>(i)] = static_cast<float>(v);
    }
    return values;
}

// Multiples of 2^-20 in [-0.5, 1.5): exact floats, mixed sign, positive mean.
std::vector<float> scan_fractions(std::int64_t n, std::uint64_t seed)
{
    SplitMix64 rng(seed);
    std::vector<float> values(static_cast<std::size_t>(n));
    for (auto& v : values) v = static_cast<float>(rng.uniform_int(-(1 << 19), 3 * (1 << 19) - 1)) / float(1 << 20);
    return values;
}

// Reductions. Integers in [-1000, 1000]: every partial sum of up to 2^30 of them is far below 2^53,
// so every order is exact. Fractions: full 53-bit doubles in [-1, 1). Mixed magnitudes: random
// sign, mantissa and an exponent from -20 to 20, so large and small values meet in one sum.
std::vector<double> reduction_values(std::int64_t n, DataKind kind, std::uint64_t seed)
{
    SplitMix64 rng(seed);
    std::vector<double> values(static_cast<std::size_t>(n));
    for (auto& v : values) {
        switch (kind) {
        case DataKind::integers: v = static_cast<double>(rng.uniform_int(-1000, 1000)); break;
        case DataKind::fractions: v = std::ldexp(static_cast<double>(rng.next() >> 11), -52) - 1.0; break;
        case DataKind::mixed_magnitudes: {
            const double mantissa = 1.0 + std::ldexp(static_cast<double>(rng.next() >> 11), -53);
            const int exponent = static_cast<int>(rng.uniform_int(-20, 20));
            v = (rng.next() & 1 ? -1.0 : 1.0) * std::ldexp(mantissa, exponent);
            break;
        }
        }
    }
    return values;
}

// Convolution inputs: integers in [-8, 8] (sums of up to 225 products with the mask are exact), or
// multiples of 2^-16 in [-1, 1).
std::vector<float> conv_values(std::int64_t count, DataKind kind, SplitMix64& rng, int magnitude)
{
    std::vector<float> values(static_cast<std::size_t>(count));
    for (auto& v : values)
        v = kind == DataKind::integers ? static_cast<float>(rng.uniform_int(-magnitude, magnitude))
                                       : static_cast<float>(rng.uniform_int(-(1 << 16), (1 << 16) - 1)) / 65536.0f;
    return values;
}

// A mask that is not symmetric (a flipped mask is caught) and, in 2D, not equal to its transpose
// (swapped rows and columns are caught), with no zero weight.
std::vector<float> conv_mask(const Case& c, bool two_d, SplitMix64& rng)
{
    const int w = c.mask_width;
    std::vector<float> mask = conv_values(two_d ? w * w : w, c.data, rng, 4);
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

}  // namespace

const void* CaseInputs::input_data() const
{
    return in_f64.empty() ? static_cast<const void*>(in_f32.data()) : static_cast<const void*>(in_f64.data());
}

std::size_t CaseInputs::input_bytes() const
{
    return in_f64.empty() ? in_f32.size() * sizeof(float) : in_f64.size() * sizeof(double);
}

CaseInputs make_inputs(const Exercise& exercise, const Case& c)
{
    CaseInputs inputs;
    switch (exercise.family) {
    case Family::section_scan:
    case Family::full_scan:
        inputs.in_f32 = c.data == DataKind::integers ? scan_integers(c.n, c.seed) : scan_fractions(c.n, c.seed);
        return inputs;
    case Family::reduction: inputs.in_f64 = reduction_values(c.n, c.data, c.seed); return inputs;
    case Family::conv1d:
    case Family::conv2d: {
        SplitMix64 rng(c.seed);
        inputs.mask = conv_mask(c, exercise.family == Family::conv2d, rng);
        inputs.in_f32 = conv_values(c.n, c.data, rng, 8);
        return inputs;
    }
    }
    throw std::logic_error("no inputs defined for family " + std::string(family_name(exercise.family)));
}

std::uint64_t checksum64(const void* data, std::size_t bytes)
{
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint64_t hash = 0x243f6a8885a308d3ull ^ bytes;
    std::size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        std::uint64_t word;
        std::memcpy(&word, p + i, 8);
        hash = (hash ^ word) * 0x9fb21c651e98df25ull;
        hash ^= hash >> 29;
    }
    for (; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
    return hash;
}

CaseInputs make_variant(const CaseInputs& base, std::uint64_t key)
{
    CaseInputs variant = base;
    for (std::size_t i = 0; i < variant.in_f32.size(); ++i)
        if (variant_flips(key, i)) variant.in_f32[i] = -variant.in_f32[i];
    for (std::size_t i = 0; i < variant.in_f64.size(); ++i)
        if (variant_flips(key, i)) variant.in_f64[i] = -variant.in_f64[i];
    return variant;
}

}  // namespace harness

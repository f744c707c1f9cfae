// Case inputs, generated from the case's seed with our own integer generator (splitmix64), so the
// same case gives the same bits on every machine and standard library.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/cases.hpp"
#include "harness/exercise.hpp"

namespace harness {

struct CaseInputs {
    std::vector<float> in_f32;   // scans, convolutions
    std::vector<double> in_f64;  // reductions
    std::vector<float> mask;     // convolutions: mask_width (1D) or mask_width^2 (2D) values

    const void* input_data() const;
    std::size_t input_bytes() const;
};

// The case's inputs, from its family (harness/family.hpp).
CaseInputs make_inputs(const Exercise& exercise, const Case& c);
// The input of a timed repetition: `base` with the signs flipped that `key` selects
// (harness/variant.hpp). The mask stays as it is.
CaseInputs make_variant(const CaseInputs& base, std::uint64_t key);

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform integer in [lo, hi] (the tiny modulo bias does not matter for test data).
    std::int64_t uniform_int(std::int64_t lo, std::int64_t hi)
    {
        return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
    }

private:
    std::uint64_t state_;
};

// Fast 64-bit checksum of a buffer (8 bytes a step), to detect a modified input.
std::uint64_t checksum64(const void* data, std::size_t bytes);

}  // namespace harness

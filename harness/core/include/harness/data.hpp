// Case inputs, generated from the case's seed with our own integer generator (splitmix64), so the
// same case gives the same bits on every machine and standard library, with any number of threads.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "harness/cases.hpp"
#include "harness/exercise.hpp"
#include "harness/parallel.hpp"

namespace harness {

// The input arrays reach a gigabyte and are generated in parallel: vectors whose memory the
// generating threads touch first (harness/parallel.hpp), not one thread zeroing it beforehand.
struct CaseInputs {
    UninitializedVector<float> in_f32;   // scans, convolutions
    UninitializedVector<double> in_f64;  // reductions
    std::vector<float> mask;             // convolutions: mask_width (1D) or mask_width^2 (2D) values

    // The input array of element type Value (in_f32 or in_f64), for code templated on it
    // (with_element_type, harness/exercise.hpp).
    template <typename Value>
    UninitializedVector<Value>& values()
    {
        if constexpr (std::is_same_v<Value, double>)
            return in_f64;
        else
            return in_f32;
    }
    template <typename Value>
    const UninitializedVector<Value>& values() const
    {
        return const_cast<CaseInputs*>(this)->values<Value>();
    }

    const void* input_data() const;
    std::size_t input_bytes() const;

    // Special members out of line, in optimized code: a vector of our allocator is destroyed by a
    // loop over its elements that does nothing, which code built at -O1 (grading/) kept where it
    // inlined it: a second per element for every gigabyte (issue 21).
    CaseInputs();
    CaseInputs(const CaseInputs&);
    CaseInputs(CaseInputs&&) noexcept;
    CaseInputs& operator=(const CaseInputs&);
    CaseInputs& operator=(CaseInputs&&) noexcept;
    ~CaseInputs();
};

// The case's inputs, from its family (harness/family.hpp).
CaseInputs make_inputs(const Exercise& exercise, const Case& c);
// The input of repetition `rep` of a timed batch of `seed`, as the timing server writes it on the
// GPU (harness/timed_data.hpp), with the case's own mask: for checking an output on the CPU.
CaseInputs make_timed_inputs(const Exercise& exercise, const Case& c, std::uint64_t seed, std::uint32_t rep);

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (state_ += step);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform integer in [lo, hi] (the tiny modulo bias does not matter for test data).
    std::int64_t uniform_int(std::int64_t lo, std::int64_t hi)
    {
        return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    // Skips `draws` values: the state advances by one constant a draw, so this is one multiply,
    // and any part of a stream can be generated on its own.
    void discard(std::uint64_t draws) { state_ += draws * step; }

private:
    static constexpr std::uint64_t step = 0x9e3779b97f4a7c15ull;
    std::uint64_t state_;
};

// values[i] = draw(rng) for every i, where rng starts at draw first_draw + i * draws_per_element
// of the stream of `seed` and `draw` takes exactly draws_per_element values: the same values as
// one pass over the stream, generated in parallel.
template <typename Vector, typename Draw>
void fill_from_stream(Vector& values, std::uint64_t seed, std::uint64_t first_draw, std::uint64_t draws_per_element,
                      Draw draw)
{
    parallel_for(0, static_cast<std::int64_t>(values.size()), element_grain, [&](std::int64_t begin, std::int64_t end) {
        SplitMix64 rng(seed);
        rng.discard(first_draw + static_cast<std::uint64_t>(begin) * draws_per_element);
        for (std::int64_t i = begin; i < end; ++i) values[static_cast<std::size_t>(i)] = draw(rng);
    });
}

// Fast 64-bit checksum of a buffer (8 bytes a step). Above 1 MiB it is the checksum of the
// checksums of its 1 MiB blocks, which are computed in parallel.
std::uint64_t checksum64(const void* data, std::size_t bytes);

// The sum of bits_term over the exact bits of `count` floats (f64: doubles), in parallel
// (harness/timed_data.hpp): what the runner computes on the GPU over a device buffer, so that an input
// after the run, or a second run's output, is compared without copying it back. Exact: two NaNs of
// different bits, or -0 and +0, differ (garbage read by a race often is a NaN).
std::uint64_t bits_checksum(const void* values, std::uint64_t count, bool f64);

}  // namespace harness

// What the timed batches compute on, and how their outputs are summed up: formulas shared by the
// grader's timing server (on the GPU) and the grader's checks (on the CPU), host and device.
//
// Each timed repetition's input is written by the timing server, in device memory the runner only
// maps, from a 64-bit seed that the grader draws at that moment and no runner ever sees: element i
// of repetition r is timed_value(seed, r, i) in the family's range. Every element of every
// repetition is an independent draw, so no repetition's partial results help with another's, and
// the values are integers small enough that every correct summation order is exact: a checksum of
// the output can be compared bit for bit, with the reference's on the same seed or with the golden
// one.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define HARNESS_HOST_DEVICE __host__ __device__
#else
#define HARNESS_HOST_DEVICE
#endif

namespace harness {

// The splitmix64 finalizer: a good 64-bit mixing function.
HARNESS_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The integers the timed inputs of a family are drawn from, uniformly: [lo, hi].
struct TimedValues {
    int lo = 0, hi = 0;
};

// The stream of repetition `rep` of the batch of `seed`: what every element of it is drawn from.
HARNESS_HOST_DEVICE inline std::uint64_t timed_stream(std::uint64_t seed, std::uint32_t rep)
{
    return mix64(seed ^ (0x9e3779b97f4a7c15ull * (rep + 1ull)));
}

// Element i of a repetition's stream, in [values.lo, values.hi]: the draw's top 32 bits scaled to
// the span (a multiply and a shift, exact on host and device alike; a 64-bit `%` made the timing
// server's input writing compute-bound, 3 times slower than its stores).
HARNESS_HOST_DEVICE inline int timed_value_of_stream(std::uint64_t stream, std::uint64_t i, TimedValues values)
{
    const std::uint64_t draw = mix64(stream + i * 0xd1b54a32d192ed03ull);
    const auto span = static_cast<std::uint64_t>(values.hi - values.lo + 1);
    return values.lo + static_cast<int>(((draw >> 32) * span) >> 32);
}

// Element i of repetition `rep` of the batch of `seed`, in [values.lo, values.hi].
HARNESS_HOST_DEVICE inline int timed_value(std::uint64_t seed, std::uint32_t rep, std::uint64_t i, TimedValues values)
{
    return timed_value_of_stream(timed_stream(seed, rep), i, values);
}

// One element's share of a checksum of exact bits: a hash of its position and its bits. The
// checksum is the sum of the terms modulo 2^64, so the order in which a kernel adds them does not
// matter.
HARNESS_HOST_DEVICE inline std::uint64_t bits_term(std::uint64_t i, std::uint64_t bits)
{
    return mix64(bits ^ (i * 0xd1b54a32d192ed03ull));
}

// One element's share of the checksum of values: as bits_term, with -0 read as +0 and every NaN
// as one NaN (a correct order may give either zero).
HARNESS_HOST_DEVICE inline std::uint64_t checksum_term(std::uint64_t i, float v)
{
    std::uint32_t bits = 0;
    if (v != v)
        bits = 0x7fc00000u;
    else if (v != 0.0f)
        memcpy(&bits, &v, sizeof bits);
    return bits_term(i, bits);
}

HARNESS_HOST_DEVICE inline std::uint64_t checksum_term(std::uint64_t i, double v)
{
    std::uint64_t bits = 0;
    if (v != v)
        bits = 0x7ff8000000000000ull;
    else if (v != 0.0)
        memcpy(&bits, &v, sizeof bits);
    return bits_term(i, bits);
}

template <typename T>
std::uint64_t output_checksum(const T* values, std::uint64_t count)
{
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < count; ++i) sum += checksum_term(i, values[i]);
    return sum;
}

}  // namespace harness

// Input variants and output checksums for the timed repetitions, shared by the runner's kernels
// and the grader's check (the same formulas on both sides, host and device).
//
// Each timed repetition runs on a variant of the case's input that the grader chooses at that
// moment with a random key: element i has its sign flipped where mix64(key + i * step) is odd.
// Results kept from an earlier call are then wrong, and since timed cases hold integer-valued
// data, every correct summation order gives the exact result, so the grader can compare a
// checksum of the output with its own golden result bit for bit.
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

HARNESS_HOST_DEVICE inline bool variant_flips(std::uint64_t key, std::uint64_t i)
{
    return (mix64(key + i * 0x9e3779b97f4a7c15ull) & 1u) != 0;
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

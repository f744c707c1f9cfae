#include "harness/data.hpp"

#include "harness/variant.hpp"

#include <cstring>

namespace harness {

const void* CaseInputs::input_data() const
{
    return in_f64.empty() ? static_cast<const void*>(in_f32.data()) : static_cast<const void*>(in_f64.data());
}

std::size_t CaseInputs::input_bytes() const
{
    return in_f64.empty() ? in_f32.size() * sizeof(float) : in_f64.size() * sizeof(double);
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

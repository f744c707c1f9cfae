#include "harness/cases.hpp"

#include <cstdio>

namespace harness {

const char* data_kind_name(DataKind kind)
{
    switch (kind) {
        case DataKind::integers:
            return "integers";
        case DataKind::fractions:
            return "fractions";
        case DataKind::mixed_magnitudes:
            return "mixed_magnitudes";
    }
    return "?";
}

const Case* find_case(const std::vector<Case>& cases, const std::string& label)
{
    for (const auto& c : cases)
        if (c.label == label) return &c;
    return nullptr;
}

std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t hash)
{
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

std::string hex64(std::uint64_t value)
{
    char text[19];
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
    return text;
}

std::uint64_t seed_for(const std::string& exercise, const std::string& label)
{
    const std::string key = exercise + "/" + label;
    return fnv1a64(key.data(), key.size());
}

}  // namespace harness

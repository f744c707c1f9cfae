#include "harness/cases.hpp"

#include <stdexcept>

namespace harness {
namespace {

constexpr std::int64_t speed_n = 10'000'000;   // above the L2 of any current GPU (40 MB of floats)

// Sizes every 1D exercise sees: tiny, warp edges, the block edges of both scan section sizes,
// a size just past two levels of 2048 (4,196,353 = 2048 * 2049 + 1), and large sizes.
const std::vector<std::int64_t> common_sizes = {
    1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 4096, 65537,
    1'000'000, 4'125'000, 4'194'304, 4'196'353, speed_n,
};

void add(std::vector<Case>& cases, const Exercise& exercise, Case c)
{
    c.index = static_cast<int>(cases.size());
    c.seed = seed_for(exercise.name, c.label);
    cases.push_back(c);
}

std::string size_label(std::int64_t n, DataKind data)
{
    const char* suffix = data == DataKind::integers ? "int" : data == DataKind::fractions ? "frac" : "mixed";
    return "n=" + std::to_string(n) + "/" + suffix;
}

void add_1d_sizes(std::vector<Case>& cases, const Exercise& exercise, const std::vector<std::int64_t>& sizes,
                  const std::vector<std::int64_t>& fractional_sizes, std::int64_t large_n)
{
    for (auto n : sizes) {
        Case c;
        c.n = n;
        c.label = size_label(n, DataKind::integers);
        c.timed = n == speed_n;
        add(cases, exercise, c);
    }
    for (auto n : fractional_sizes) {
        Case c;
        c.n = n;
        c.data = DataKind::fractions;
        c.label = size_label(n, DataKind::fractions);
        add(cases, exercise, c);
    }
    if (large_n > 0) {
        Case c;
        c.n = large_n;
        c.label = size_label(large_n, DataKind::integers);
        add(cases, exercise, c);
    }
}

std::vector<Case> scan_cases(const Exercise& exercise)
{
    std::vector<Case> cases;
    const std::vector<std::int64_t> fractional = {1025, 2049, 65537, 1'000'000, 4'196'353};
    // With 2048-element sections anything above 2048^2 needs a third level; 2^28 + 3 tests
    // scale and 64-bit index arithmetic of the whole-array scan.
    const std::int64_t large = exercise.family == Family::full_scan ? (std::int64_t{1} << 28) + 3 : 0;
    add_1d_sizes(cases, exercise, common_sizes, fractional, large);
    return cases;
}

}  // namespace

const char* data_kind_name(DataKind kind)
{
    switch (kind) {
    case DataKind::integers: return "integers";
    case DataKind::fractions: return "fractions";
    case DataKind::mixed_magnitudes: return "mixed_magnitudes";
    }
    return "?";
}

std::vector<Case> cases_for(const Exercise& exercise)
{
    switch (exercise.family) {
    case Family::section_scan:
    case Family::full_scan: return scan_cases(exercise);
    default: throw std::logic_error("no cases defined for family " + std::string(family_name(exercise.family)));
    }
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

std::uint64_t seed_for(const std::string& exercise, const std::string& label)
{
    const std::string key = exercise + "/" + label;
    return fnv1a64(key.data(), key.size());
}

}  // namespace harness

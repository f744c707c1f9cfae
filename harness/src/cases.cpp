#include "harness/cases.hpp"

#include <algorithm>
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

std::vector<Case> reduction_cases(const Exercise& exercise)
{
    std::vector<Case> cases;
    // The scan sizes plus the edges of this variant's elements per block, and 2^27 doubles (1 GiB).
    std::vector<std::int64_t> sizes = common_sizes;
    const std::int64_t block = exercise.section;   // elements per block of the reference
    for (std::int64_t edge : {block - 1, block, block + 1, 2 * block * block + 1})
        if (std::find(sizes.begin(), sizes.end(), edge) == sizes.end()) sizes.push_back(edge);
    std::sort(sizes.begin(), sizes.end());
    add_1d_sizes(cases, exercise, sizes, {1025, 65537, 1'000'000, 4'125'000}, std::int64_t{1} << 27);
    for (std::int64_t n : {2049, 1'000'000, 4'196'353}) {
        Case c;
        c.n = n;
        c.data = DataKind::mixed_magnitudes;
        c.label = size_label(n, DataKind::mixed_magnitudes);
        add(cases, exercise, c);
    }
    return cases;
}

std::string conv_label(const Case& c)
{
    const std::string shape = c.height > 0 ? std::to_string(c.height) + "x" + std::to_string(c.width)
                                           : "n=" + std::to_string(c.n);
    return shape + "/mw=" + std::to_string(c.mask_width) + "/" + (c.data == DataKind::integers ? "int" : "frac");
}

void add_conv(std::vector<Case>& cases, const Exercise& exercise, std::int64_t height, std::int64_t width,
              int mask_width, DataKind data = DataKind::integers, bool timed = false)
{
    Case c;
    c.n = height * width;
    if (exercise.family == Family::conv2d) c.height = static_cast<int>(height), c.width = static_cast<int>(width);
    c.mask_width = mask_width;
    c.data = data;
    c.timed = timed;
    c.label = conv_label(c);
    add(cases, exercise, c);
}

// 1D: every mask width on a few tiles, then the edges (1, mask_width - 1, a tile and its
// neighbours) and large sizes. Every case has its own mask (from its seed), so a kernel that
// copies the mask to constant memory only once fails the later cases.
std::vector<Case> conv1d_cases(const Exercise& exercise)
{
    std::vector<Case> cases;
    const std::int64_t tile = exercise.section;
    for (int mw : {1, 3, 5, 7, 9, 15, 31}) add_conv(cases, exercise, 1, 4 * tile + 3, mw);
    add_conv(cases, exercise, 1, 1, 3);
    add_conv(cases, exercise, 1, 1, 31);
    add_conv(cases, exercise, 1, 30, 31);
    add_conv(cases, exercise, 1, tile - 1, 7);
    add_conv(cases, exercise, 1, tile, 9);
    add_conv(cases, exercise, 1, tile + 1, 15);
    add_conv(cases, exercise, 1, 2 * tile + 1, 31);
    add_conv(cases, exercise, 1, 65537, 9, DataKind::fractions);
    add_conv(cases, exercise, 1, 1'000'000, 31, DataKind::fractions);
    add_conv(cases, exercise, 1, 4'125'000, 15);
    add_conv(cases, exercise, 1, speed_n, 7, DataKind::integers, true);
    return cases;
}

// 2D: degenerate shapes, odd shapes that are no multiple of the tile, every mask width, and
// large square and non-square images.
std::vector<Case> conv2d_cases(const Exercise& exercise)
{
    std::vector<Case> cases;
    for (int mw : {1, 3, 5, 7, 9, 11, 13, 15}) add_conv(cases, exercise, 70, 45, mw);
    add_conv(cases, exercise, 1, 1, 1);
    add_conv(cases, exercise, 1, 1, 5);
    add_conv(cases, exercise, 1, 1000, 5);
    add_conv(cases, exercise, 1000, 1, 5);
    add_conv(cases, exercise, 17, 33, 3);
    add_conv(cases, exercise, 33, 17, 7);
    add_conv(cases, exercise, 1023, 1025, 9);
    add_conv(cases, exercise, 513, 257, 7, DataKind::fractions);
    add_conv(cases, exercise, 2000, 3000, 15);
    add_conv(cases, exercise, 4096, 4096, 5, DataKind::integers, true);
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
    case Family::reduction: return reduction_cases(exercise);
    case Family::conv1d: return conv1d_cases(exercise);
    case Family::conv2d: return conv2d_cases(exercise);
    }
    throw std::logic_error("no cases defined for family " + std::string(family_name(exercise.family)));
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

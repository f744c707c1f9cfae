#include "harness/data.hpp"

#include "harness/family.hpp"
#include "harness/timed_data.hpp"

#include <cstring>

namespace harness {

CaseInputs::CaseInputs() = default;
CaseInputs::CaseInputs(const CaseInputs&) = default;
CaseInputs::CaseInputs(CaseInputs&&) noexcept = default;
CaseInputs& CaseInputs::operator=(const CaseInputs&) = default;
CaseInputs& CaseInputs::operator=(CaseInputs&&) noexcept = default;
CaseInputs::~CaseInputs() = default;

const void* CaseInputs::input_data() const
{
    return in_f64.empty() ? static_cast<const void*>(in_f32.data()) : static_cast<const void*>(in_f64.data());
}

std::size_t CaseInputs::input_bytes() const
{
    return in_f64.empty() ? in_f32.size() * sizeof(float) : in_f64.size() * sizeof(double);
}

namespace {

std::uint64_t checksum_of_block(const void* data, std::size_t bytes)
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

}  // namespace

std::uint64_t checksum64(const void* data, std::size_t bytes)
{
    constexpr std::int64_t block = std::int64_t{1} << 20;
    if (bytes <= static_cast<std::size_t>(block)) return checksum_of_block(data, bytes);
    const auto* p = static_cast<const unsigned char*>(data);
    const std::vector<std::uint64_t> blocks = parallel_chunks<std::uint64_t>(
        0, static_cast<std::int64_t>(bytes), block, [&](std::int64_t begin, std::int64_t end) {
            return checksum_of_block(p + begin, static_cast<std::size_t>(end - begin));
        });
    return checksum_of_block(blocks.data(), blocks.size() * sizeof(std::uint64_t));
}

std::uint64_t bits_checksum(const void* values, std::uint64_t count, bool f64)
{
    const std::vector<std::uint64_t> sums = parallel_chunks<std::uint64_t>(
        0, static_cast<std::int64_t>(count), element_grain, [&](std::int64_t begin, std::int64_t end) {
            std::uint64_t sum = 0;
            for (auto i = static_cast<std::uint64_t>(begin); i < static_cast<std::uint64_t>(end); ++i)
                sum += bits_term(i, f64 ? static_cast<const std::uint64_t*>(values)[i]
                                        : static_cast<const std::uint32_t*>(values)[i]);
            return sum;
        });
    std::uint64_t checksum = 0;
    for (std::uint64_t sum : sums) checksum += sum;
    return checksum;
}

namespace {

template <typename Vector>
void fill_timed(Vector& values, std::int64_t n, std::uint64_t seed, std::uint32_t rep, TimedValues range)
{
    values.resize(static_cast<std::size_t>(n));
    parallel_for(0, n, element_grain, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i)
            values[static_cast<std::size_t>(i)] =
                static_cast<typename Vector::value_type>(timed_value(seed, rep, static_cast<std::uint64_t>(i), range));
    });
}

}  // namespace

CaseInputs make_timed_inputs(const Exercise& exercise, const Case& c, std::uint64_t seed, std::uint32_t rep)
{
    const ExerciseFamily& family = family_of(exercise);
    CaseInputs inputs;
    inputs.mask = family.mask(c);
    with_element_type(family.element_type(), [&](auto zero) {
        fill_timed(inputs.values<decltype(zero)>(), c.n, seed, rep, family.timed_values());
    });
    return inputs;
}

}  // namespace harness

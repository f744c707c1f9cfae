#include "harness/cases.hpp"

#include <cstdio>
#include <stdexcept>

#include "harness/family.hpp"

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

std::optional<DataKind> data_kind_named(const std::string& name)
{
    for (DataKind kind : {DataKind::integers, DataKind::fractions, DataKind::mixed_magnitudes})
        if (name == data_kind_name(kind)) return kind;
    return std::nullopt;
}

nlohmann::json case_spec(const Exercise& exercise, const Case& c)
{
    return {{"label", c.label},
            {"shape", family_of(exercise).shape_json(c)},
            {"data", data_kind_name(c.data)},
            {"seed", hex64(c.seed)},
            {"timed", c.timed}};
}

Case case_from_spec(const Exercise& exercise, const nlohmann::json& spec, int index)
{
    if (!spec.is_object()) throw std::invalid_argument("a case spec that is not an object");
    Case c;
    c.index = index;
    c.label = spec.at("label").get<std::string>();
    family_of(exercise).read_shape(spec.at("shape"), c);
    const std::optional<DataKind> data = data_kind_named(spec.at("data").get<std::string>());
    c.timed = spec.at("timed").get<bool>();
    const std::string seed = spec.at("seed").get<std::string>();
    if (!data || seed.size() != 18 || seed.compare(0, 2, "0x") != 0 ||
        seed.find_first_not_of("0123456789abcdef", 2) != std::string::npos)
        throw std::invalid_argument("a case spec out of range");
    c.data = *data;
    c.seed = std::stoull(seed.substr(2), nullptr, 16);
    return c;
}

const Case* find_case(const std::vector<Case>& cases, const std::string& label)
{
    for (const auto& c : cases)
        if (c.label == label) return &c;
    return nullptr;
}

const Case* find_case(const std::vector<Case>& cases, int index)
{
    for (const auto& c : cases)
        if (c.index == index) return &c;
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

// The one table from a family id to its implementation (harness/families.def).
#include "harness/family.hpp"

#include <algorithm>
#include <stdexcept>

namespace harness {

#define FAMILY(ID) const ExerciseFamily& ID##_family();
#include "harness/families.def"
#undef FAMILY

const ExerciseFamily& family_of(const Exercise& exercise)
{
    static const ExerciseFamily* const families[] = {
#define FAMILY(ID) &ID##_family(),
#include "harness/families.def"
#undef FAMILY
    };
    return *families[static_cast<int>(exercise.family)];
}

std::vector<Case> cases_for(const Exercise& exercise)
{
    return family_of(exercise).cases(exercise);
}

CaseInputs make_inputs(const Exercise& exercise, const Case& c)
{
    return family_of(exercise).inputs(exercise, c);
}

Case bench_case(const Exercise& exercise, std::int64_t size)
{
    Case c = family_of(exercise).bench_shape(size);
    c.data = DataKind::integers;
    c.label = "bench/n=" + std::to_string(size);
    c.seed = seed_for(exercise.name, c.label);
    return c;
}

void CaseList::add(Case c)
{
    c.index = static_cast<int>(cases_.size());
    c.seed = seed_for(exercise_.name, c.label);
    cases_.push_back(std::move(c));
}

void CaseList::add_sizes(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& fractional_sizes)
{
    for (auto n : sizes) {
        Case c;
        c.n = n;
        c.label = size_label(n, DataKind::integers);
        c.timed = n == speed_n;
        add(c);
    }
    for (auto n : fractional_sizes) {
        Case c;
        c.n = n;
        c.data = DataKind::fractions;
        c.label = size_label(n, DataKind::fractions);
        add(c);
    }
}

const std::vector<std::int64_t>& common_1d_sizes()
{
    static const std::vector<std::int64_t> sizes = {
        1,    2,    31,   32,    33,        1023,      1024,      1025,      2047,
        2048, 2049, 4096, 65537, 1'000'000, 4'125'000, 4'194'304, 4'196'353, 10'000'000, speed_n,
    };
    return sizes;
}

std::string size_label(std::int64_t n, DataKind data)
{
    const char* suffix = data == DataKind::integers ? "int" : data == DataKind::fractions ? "frac" : "mixed";
    return "n=" + std::to_string(n) + "/" + suffix;
}
std::string ExerciseFamily::label(const Case& c) const
{
    return size_label(c.n, c.data);
}

void ExerciseFamily::read_shape(const nlohmann::json& shape, Case& c) const
{
    require_shape_fields(shape, {"n"}, "an array");
    c.n = shape_field(shape, "n", 1, max_case_elements);
}

void require_shape_fields(const nlohmann::json& shape, const std::vector<std::string>& fields, const std::string& kind)
{
    auto listed = [](const std::vector<std::string>& names) {
        std::string text;
        for (std::size_t i = 0; i < names.size(); ++i)
            text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
        return text;
    };
    if (!shape.is_object()) throw std::invalid_argument(kind + " given by an object of " + listed(fields));
    std::vector<std::string> others;
    for (const auto& item : shape.items())
        if (std::find(fields.begin(), fields.end(), item.key()) == fields.end()) others.push_back(item.key());
    bool all = true;
    for (const auto& field : fields) all = all && shape.contains(field);
    if (!all || !others.empty())
        throw std::invalid_argument(kind + " given by " + listed(fields) + (others.empty() ? "" : " (not " + listed(others) + ")"));
}

std::int64_t shape_field(const nlohmann::json& shape, const std::string& field, std::int64_t lo, std::int64_t hi)
{
    const nlohmann::json& value = shape.at(field);
    if (!value.is_number_integer() || value.get<std::int64_t>() < lo || value.get<std::int64_t>() > hi)
        throw std::invalid_argument(field + " " + value.dump() + ": not an integer from " + std::to_string(lo) +
                                    " to " + std::to_string(hi));
    return value.get<std::int64_t>();
}

std::string case_label(const Exercise& exercise, const Case& c)
{
    return family_of(exercise).label(c);
}

}  // namespace harness

#include "harness/batch_layout.hpp"

#include <algorithm>

namespace harness {
namespace {

std::uint64_t aligned(std::uint64_t offset, std::uint64_t alignment)
{
    return (offset + alignment - 1) / alignment * alignment;
}

}  // namespace

BatchLayout lay_out(const BatchShape& shape, std::uint64_t alignment)
{
    BatchLayout layout;
    layout.shape = shape;
    const auto element = static_cast<std::uint64_t>(shape.element_bytes());
    std::uint64_t at = 0;
    auto place = [&](std::int64_t elements) {
        const std::uint64_t offset = at;
        at = aligned(at + static_cast<std::uint64_t>(elements) * element, alignment);
        return offset;
    };
    for (int k = 0; k < shape.reps; ++k) {
        BatchLayout::Rep rep;
        rep.in = place(shape.elements);
        rep.out = place(shape.out_elements);
        layout.reps.push_back(rep);
    }
    if (shape.scratch_elements > 0) layout.scratch = static_cast<std::int64_t>(place(shape.scratch_elements));
    layout.bytes = aligned(std::max<std::uint64_t>(at, 1), alignment);
    return layout;
}

bool fits(const BatchLayout& layout)
{
    const BatchShape& s = layout.shape;
    constexpr std::int64_t most = std::int64_t{1} << 32;  // elements of any one buffer
    if (s.elements < 1 || s.elements > most || s.out_elements < 1 || s.out_elements > most || s.scratch_elements < 0 ||
        s.scratch_elements > most || s.reps < 1 || s.reps > 64 || static_cast<int>(layout.reps.size()) != s.reps)
        return false;
    const auto element = static_cast<std::uint64_t>(s.element_bytes());
    auto inside = [&](std::uint64_t offset, std::int64_t elements) {
        return offset <= layout.bytes && static_cast<std::uint64_t>(elements) * element <= layout.bytes - offset;
    };
    for (const auto& rep : layout.reps)
        if (!inside(rep.in, s.elements) || !inside(rep.out, s.out_elements)) return false;
    return s.scratch_elements == 0 ? layout.scratch < 0
                                   : layout.scratch >= 0 && inside(static_cast<std::uint64_t>(layout.scratch), s.scratch_elements);
}

nlohmann::json to_json(const BatchShape& shape)
{
    return {{"elements", shape.elements},
            {"out_elements", shape.out_elements},
            {"scratch_elements", shape.scratch_elements},
            {"f64", shape.f64},
            {"reps", shape.reps}};
}

BatchShape shape_from_json(const nlohmann::json& j)
{
    BatchShape shape;
    shape.elements = j.at("elements").get<std::int64_t>();
    shape.out_elements = j.at("out_elements").get<std::int64_t>();
    shape.scratch_elements = j.at("scratch_elements").get<std::int64_t>();
    shape.f64 = j.at("f64").get<bool>();
    shape.reps = j.at("reps").get<int>();
    return shape;
}

nlohmann::json to_json(const BatchLayout& layout)
{
    nlohmann::json reps = nlohmann::json::array();
    for (const auto& rep : layout.reps) reps.push_back({{"in", rep.in}, {"out", rep.out}});
    return {{"shape", to_json(layout.shape)}, {"bytes", layout.bytes}, {"reps", reps}, {"scratch", layout.scratch}};
}

BatchLayout layout_from_json(const nlohmann::json& j)
{
    BatchLayout layout;
    layout.shape = shape_from_json(j.at("shape"));
    layout.bytes = j.at("bytes").get<std::uint64_t>();
    for (const auto& rep : j.at("reps")) layout.reps.push_back({rep.at("in").get<std::uint64_t>(), rep.at("out").get<std::uint64_t>()});
    layout.scratch = j.at("scratch").get<std::int64_t>();
    return layout;
}

}  // namespace harness

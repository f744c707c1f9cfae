#include "grading/reference_timings.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "grader_config.hpp"

namespace grading {
namespace {

constexpr int layout_version = 1;
constexpr std::uintmax_t largest_file = 64ull << 20;

}  // namespace

nlohmann::json to_json(const ReferenceTimings& timings)
{
    nlohmann::json cases = nlohmann::json::object();
    for (const auto& [exercise, labels] : timings.cases)
        for (const auto& [label, record] : labels) cases[exercise][label] = record;
    return {{"reference_timings", layout_version},
            {"grader_version", timings.grader_version},
            {"measured_at", timings.measured_at},
            {"calibration", timings.calibration},
            {"cases", std::move(cases)}};
}

ReferenceTimings read_reference_timings(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ReferenceTimingsUnusable("cannot read " + path);
    std::string text;
    text.resize(largest_file + 1);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > largest_file) throw ReferenceTimingsUnusable(path + " is larger than 64 MiB");
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) throw ReferenceTimingsUnusable(path + " is not JSON");
    try {
        if (j.at("reference_timings") != layout_version)
            throw ReferenceTimingsUnusable(path + " is of another layout");
        ReferenceTimings timings;
        timings.grader_version = j.at("grader_version").get<std::string>();
        timings.measured_at = j.at("measured_at").get<std::string>();
        timings.calibration = j.at("calibration");
        if (!timings.calibration.is_object()) throw ReferenceTimingsUnusable(path + ": calibration is no object");
        for (const auto& [exercise, labels] : j.at("cases").items())
            for (const auto& [label, record] : labels.items()) timings.cases[exercise][label] = record;
        return timings;
    } catch (const nlohmann::json::exception& e) {
        throw ReferenceTimingsUnusable(path + " is not a file of the references' timings (" + e.what() + ")");
    }
}

std::string reference_timings_mismatch(const ReferenceTimings& timings, const nlohmann::json& calibration)
{
    if (timings.grader_version != GRADER_VERSION)
        return "measured by grader " + timings.grader_version + ", this is " + GRADER_VERSION;
    auto uuid = [](const nlohmann::json& c) {
        const auto found = c.find("uuid");
        return found != c.end() && found->is_string() ? found->get<std::string>() : std::string();
    };
    if (!calibration.is_object() || uuid(calibration).empty() || uuid(timings.calibration) != uuid(calibration))
        return "measured on another GPU";
    return {};
}

}  // namespace grading

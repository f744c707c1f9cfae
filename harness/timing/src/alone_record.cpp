#include "harness/timing/alone_record.hpp"

#include <cmath>
#include <stdexcept>

namespace harness::timing {
namespace {

nlohmann::json window_json(const Window& w)
{
    nlohmann::json j = {{"seed", w.seed},
                        {"launched", w.launched},
                        {"warmup", w.warmup},
                        {"window_ms", w.window_ms},
                        {"grader_ms", w.grader_ms},
                        {"generate_gpu_ms", w.generate_gpu_ms},
                        {"checksum_gpu_ms", w.checksum_gpu_ms},
                        {"checksums", w.checksums}};
    j["host_link_bytes"] = w.host_link_bytes ? nlohmann::json(*w.host_link_bytes) : nlohmann::json(nullptr);
    return j;
}

// A time (or a count) as the record holds it: finite and not negative, else the record is refused.
double non_negative(const nlohmann::json& j, const char* key)
{
    const double ms = j.at(key).get<double>();
    if (!std::isfinite(ms) || ms < 0) throw std::runtime_error(std::string(key) + " is not a time");
    return ms;
}

Window window_from(const nlohmann::json& j)
{
    Window w;
    w.seed = j.at("seed").get<std::uint64_t>();
    w.launched = j.at("launched").get<bool>();
    w.warmup = j.at("warmup").get<bool>();
    w.window_ms = non_negative(j, "window_ms");
    w.grader_ms = non_negative(j, "grader_ms");
    w.generate_gpu_ms = non_negative(j, "generate_gpu_ms");
    w.checksum_gpu_ms = non_negative(j, "checksum_gpu_ms");
    w.checksums = j.at("checksums").get<std::vector<std::uint64_t>>();
    if (!j.at("host_link_bytes").is_null()) w.host_link_bytes = j.at("host_link_bytes").get<std::uint64_t>();
    return w;
}

}  // namespace

nlohmann::json alone_subject(const BatchSpec& spec, const TimingPlan& plan)
{
    const BatchShape& s = spec.shape;
    return {{"shape",
             {{"elements", s.elements},
              {"out_elements", s.out_elements},
              {"scratch_elements", s.scratch_elements},
              {"f64", s.f64},
              {"reps", s.reps}}},
            {"args", spec.args},
            {"values", {spec.values.lo, spec.values.hi}},
            {"plan", {{"reps_per_batch", plan.reps_per_batch}, {"warmup_batches", plan.warmup_batches},
                      {"rule", plan.rule.describe()}}}};
}

nlohmann::json alone_record(const BatchSpec& spec, const TimingPlan& plan, const AloneTiming& alone)
{
    nlohmann::json windows = nlohmann::json::array();
    for (const auto& w : alone.windows) windows.push_back(window_json(w));
    return {{"subject", alone_subject(spec, plan)},
            {"windows", std::move(windows)},
            {"capped", alone.capped},
            {"seconds", alone.seconds}};
}

AloneTiming read_alone_record(const nlohmann::json& record, const nlohmann::json& subject)
{
    try {
        if (record.at("subject") != subject)
            throw std::runtime_error("it was measured for other batches or another timing plan");
        AloneTiming alone;
        for (const auto& w : record.at("windows")) alone.windows.push_back(window_from(w));
        alone.capped = record.at("capped").get<bool>();
        alone.seconds = non_negative(record, "seconds");
        bool launched = false, empty = false;
        for (const auto& w : alone.windows) (w.launched ? launched : empty) |= !w.warmup;
        if (!launched || !empty) throw std::runtime_error("it has no counted launched and empty batches");
        return alone;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("it is not a timing alone the grader wrote (") + e.what() + ")");
    }
}

}  // namespace harness::timing

#include "harness/timing/stopping_rule.hpp"

#include "harness/timing/statistics.hpp"

namespace harness::timing {

bool StoppingRule::met(const std::vector<const std::vector<double>*>& sides) const
{
    for (const auto* samples : sides) {
        if (static_cast<int>(samples->size()) < min_batches) return false;
        const SampleSummary s = summarize(*samples);
        if (s.median <= 0 || s.median_rse > target_rse) return false;
    }
    return true;
}

nlohmann::json StoppingRule::describe() const
{
    return {{"name", name},
            {"target_rse", target_rse},
            {"min_batches", min_batches},
            {"max_batches", max_batches},
            {"cap_seconds", std::chrono::duration<double>(cap).count()}};
}

}  // namespace harness::timing

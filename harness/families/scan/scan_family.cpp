// Scan cases and inputs (harness_core: the runner generates the same inputs as the grader).
#include "harness/family.hpp"
#include "scan/scan.hpp"

namespace harness {
namespace {

// The running sum at the start of period `period`: 0 for the first, else 1000 to 14999, never 0,
// so the sums of the blocks before a period boundary never cancel (a missing offset there shows).
std::int64_t period_start_sum(std::uint64_t seed, std::int64_t period)
{
    if (period == 0) return 0;
    SplitMix64 rng(seed ^ (0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(period)));
    return scan_prefix_floor + rng.uniform_int(0, 13'999);
}

// Integer-valued scan input (scan.hpp): a walk of values from [-12, 12], from [0, 12] while the
// running sum is below scan_prefix_floor. After the first few hundred elements every prefix is at
// least 988, so every block offset is far from zero (a missing one shows), and a block of
// 2048 sums to zero only about once in a thousand. Element i takes draw i of the case's stream.
UninitializedVector<float> scan_integers(std::int64_t n, std::uint64_t seed)
{
    UninitializedVector<float> values(static_cast<std::size_t>(n));
    parallel_for(0, n, scan_period, [&](std::int64_t begin, std::int64_t end) {
        SplitMix64 rng(seed);
        rng.discard(static_cast<std::uint64_t>(begin));
        const std::int64_t period = begin / scan_period;  // the chunks are the periods
        std::int64_t prefix = period_start_sum(seed, period);
        const std::int64_t next_start = period_start_sum(seed, period + 1);
        for (std::int64_t i = begin; i < end; ++i) {
            std::int64_t v = next_start - prefix;
            if (i - begin < scan_period - 1)
                v = prefix < scan_prefix_floor ? rng.uniform_int(0, 12) : rng.uniform_int(-12, 12);
            prefix += v;
            values[static_cast<std::size_t>(i)] = static_cast<float>(v);
        }
    });
    return values;
}

// Multiples of 2^-20 in [-0.5, 1.5): exact floats, mixed sign, positive mean.
UninitializedVector<float> scan_fractions(std::int64_t n, std::uint64_t seed)
{
    UninitializedVector<float> values(static_cast<std::size_t>(n));
    fill_from_stream(values, seed, 0, 1, [](SplitMix64& rng) {
        return static_cast<float>(rng.uniform_int(-(1 << 19), 3 * (1 << 19) - 1)) / float(1 << 20);
    });
    return values;
}

class ScanFamily : public ExerciseFamily {
public:
    explicit ScanFamily(bool whole_array) : whole_array_(whole_array) {}
    ElementType element_type() const override { return ElementType::f32; }
    bool uses_scratch() const override { return whole_array_; }
    // Each section scanned in shared memory, its steps separated by barriers.
    std::vector<Technique> technique() const override
    {
        return {Technique::uses_shared_memory, Technique::synchronizes_block};
    }

    std::vector<Case> cases(const Exercise&) const override;

    // CUB scans the whole array; a section scan's output restarts at each of its sections.
    BenchPlan bench_plan(const Exercise& exercise) const override
    {
        BenchPlan plan;
        plan.oracle = BenchPlan::Oracle::cub_inclusive_scan;
        plan.section = whole_array_ ? 0 : scan_section(exercise);
        return plan;
    }

    // A mean-zero walk: over 2^26 elements any run of them sums to a few hundred thousand at most,
    // far below 2^24, so every prefix and every block sum of a correct scan is exact in float.
    TimedValues timed_values() const override { return {-12, 12}; }

    CaseInputs inputs(const Exercise&, const Case& c) const override
    {
        CaseInputs inputs;
        inputs.in_f32 = c.data == DataKind::integers ? scan_integers(c.n, c.seed) : scan_fractions(c.n, c.seed);
        return inputs;
    }

private:
    bool whole_array_;
};

std::vector<Case> ScanFamily::cases(const Exercise& exercise) const
{
    CaseList cases(exercise);
    cases.add_sizes(common_1d_sizes(), {1025, 2049, 65537, 1'000'000, 4'196'353});
    if (whole_array_) {
        // With 2048-element sections anything above 2048^2 needs a third level; 2^28 + 3 tests
        // scale and 64-bit index arithmetic of the whole-array scan.
        Case c;
        c.n = (std::int64_t{1} << 28) + 3;
        c.label = size_label(c.n, DataKind::integers);
        cases.add(c);
    }
    return cases.take();
}

}  // namespace

const ExerciseFamily& section_scan_family()
{
    return single_instance<ScanFamily, false>();
}

const ExerciseFamily& full_scan_family()
{
    return single_instance<ScanFamily, true>();
}

}  // namespace harness

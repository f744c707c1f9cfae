// Reduction cases and inputs (harness_core: the runner generates the same inputs as the grader).
#include <algorithm>
#include <cmath>

#include "harness/family.hpp"
#include "reduction/reduction.hpp"

namespace harness {
namespace {

// Integers in [-1000, 1000]: every partial sum of up to 2^30 of them is far below 2^53, so every
// order is exact. Fractions: full 53-bit doubles in [-1, 1). Mixed magnitudes: random sign,
// mantissa and an exponent from -20 to 20, so large and small values meet in one sum.
UninitializedVector<double> reduction_values(std::int64_t n, DataKind kind, std::uint64_t seed)
{
    UninitializedVector<double> values(static_cast<std::size_t>(n));
    switch (kind) {
        case DataKind::integers:
            fill_from_stream(values, seed, 0, 1,
                             [](SplitMix64& rng) { return static_cast<double>(rng.uniform_int(-1000, 1000)); });
            break;
        case DataKind::fractions:
            fill_from_stream(values, seed, 0, 1, [](SplitMix64& rng) {
                return std::ldexp(static_cast<double>(rng.next() >> 11), -52) - 1.0;
            });
            break;
        case DataKind::mixed_magnitudes:
            fill_from_stream(values, seed, 0, 3, [](SplitMix64& rng) {
                const double mantissa = 1.0 + std::ldexp(static_cast<double>(rng.next() >> 11), -53);
                const int exponent = static_cast<int>(rng.uniform_int(-20, 20));
                return (rng.next() & 1 ? -1.0 : 1.0) * std::ldexp(mantissa, exponent);
            });
            break;
    }
    return values;
}

class ReductionFamily : public ExerciseFamily {
public:
    ElementType element_type() const override { return ElementType::f64; }
    bool uses_scratch() const override { return true; }
    std::int64_t output_elements(const Case&) const override { return 1; }
    // Partial sums in shared memory between barriers, added as doubles.
    std::vector<Technique> technique() const override
    {
        return {Technique::uses_shared_memory, Technique::synchronizes_block, Technique::adds_in_double};
    }

    // The scan sizes plus the edges of this variant's elements per block, 2^27 doubles (1 GiB) and
    // data of mixed magnitudes.
    std::vector<Case> cases(const Exercise& exercise) const override
    {
        std::vector<std::int64_t> sizes = common_1d_sizes();
        const std::int64_t block = reduction_block(exercise);
        for (std::int64_t edge : {block - 1, block, block + 1, 2 * block * block + 1})
            if (std::find(sizes.begin(), sizes.end(), edge) == sizes.end()) sizes.push_back(edge);
        std::sort(sizes.begin(), sizes.end());
        CaseList cases(exercise);
        cases.add_sizes(sizes, {1025, 65537, 1'000'000, 4'125'000});
        Case large;
        large.n = std::int64_t{1} << 27;
        large.label = size_label(large.n, DataKind::integers);
        cases.add(large);
        for (std::int64_t n : {2049, 1'000'000, 4'196'353}) {
            Case c;
            c.n = n;
            c.data = DataKind::mixed_magnitudes;
            c.label = size_label(n, DataKind::mixed_magnitudes);
            cases.add(c);
        }
        return cases.take();
    }

    // Its one output element is no traffic to speak of.
    BenchPlan bench_plan(const Exercise&) const override
    {
        BenchPlan plan;
        plan.oracle = BenchPlan::Oracle::cub_sum;
        plan.output_moves_bytes = false;
        return plan;
    }

    // As the integer cases: every partial sum of 2^26 of them is far below 2^53.
    TimedValues timed_values() const override { return {-1000, 1000}; }

    CaseInputs inputs(const Exercise&, const Case& c) const override
    {
        CaseInputs inputs;
        inputs.in_f64 = reduction_values(c.n, c.data, c.seed);
        return inputs;
    }
};

}  // namespace

const ExerciseFamily& reduction_family()
{
    return single_instance<ReductionFamily>();
}

}  // namespace harness

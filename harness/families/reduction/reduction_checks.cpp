// Reduction golden results, tolerances, the CPU version and the diagnosis (harness_checking:
// grader only). A reduction has one output value, so the diagnosis is about that value: how far it is off, in
// units of the tolerance, and which specific mistake would produce exactly it (a sum of the first
// K elements only, a dropped partial block, one block's sum added twice or missing, the stale reads
// of a last warp unrolled without volatile or __syncwarp(), values truncated by an int, float
// accumulation).
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compensated_sum.hpp"
#include "family_checks.hpp"

namespace harness::detail {
namespace {

// Sums of the first k elements for every k in `lengths`.
std::map<std::int64_t, double> prefix_sums(const UninitializedVector<double>& in, const std::set<std::int64_t>& lengths)
{
    std::map<std::int64_t, double> sums;
    CompensatedSum acc;
    auto next = lengths.begin();
    for (std::int64_t i = 0; i <= static_cast<std::int64_t>(in.size()) && next != lengths.end(); ++i) {
        while (next != lengths.end() && *next == i) sums[*next++] = acc.value();
        if (i < static_cast<std::int64_t>(in.size())) acc.add(in[static_cast<std::size_t>(i)]);
    }
    return sums;
}

bool same(double a, double b, double tolerance)
{
    return std::fabs(a - b) <= std::max(tolerance, 1e-12 * std::fabs(b));
}

// The last warp unrolled on a plain shared array without __syncwarp():
//   if (tid < 32) { sdata[tid] += sdata[tid + 32]; sdata[tid] += sdata[tid + 16]; ... += sdata[tid + 1]; }
// The compiler may load sdata[tid + 32], [tid + 16], ..., [tid + 1] before any lane has stored its
// previous step (nothing tells it that other threads write them), and lanes need not run in step
// since Volta: each read then sees the slot as the tree loop left it, and thread 0 ends with
// sdata[0] + sdata[1] + sdata[2] + sdata[4] + sdata[8] + sdata[16] + sdata[32] of the 64 slots.
// Slot t holds the block's elements whose index within the block is t modulo 64 (sequential
// addressing, any block size that is a multiple of 64), so a block's result is the sum of its
// elements whose index modulo 64 is one of these seven.
constexpr int stale_warp_offsets[] = {0, 1, 2, 4, 8, 16, 32};
constexpr std::uint64_t stale_warp_slots = 0x0000'0001'0001'0117ull;  // bits 0, 1, 2, 4, 8, 16, 32

// The result of such a kernel: with the stale warp in the first pass only (the block sums then
// added correctly: atomicAdd, the host, a correct last pass), and with it in every pass of a
// launcher that reduces blocks of 2^shift elements until one value is left (element j then counts
// if the digits j >> (level * shift) modulo 64 of every pass are among the seven).
struct StaleWarpModel {
    int shift = 0;   // log2 of the elements per block; 0: the first pass only
    int passes = 1;  // how many passes reduce n elements to one
    double sum = 0;
};

std::vector<StaleWarpModel> stale_warp_models(const UninitializedVector<double>& in)
{
    const auto n = static_cast<std::int64_t>(in.size());
    std::vector<StaleWarpModel> models{StaleWarpModel{}};
    for (int shift = 7; shift <= 12; ++shift) {  // 128 to 4096 elements per block
        StaleWarpModel m{shift, 1, 0};
        for (std::int64_t count = (n + (std::int64_t{1} << shift) - 1) >> shift; count > 1;
             count = (count + (std::int64_t{1} << shift) - 1) >> shift)
            ++m.passes;
        if (m.passes > 1) models.push_back(m);  // one pass: the same as the first-pass-only model
    }
    using Sums = std::vector<double>;
    const std::int64_t groups = (n + 63) / 64;  // elements 64 g + offset
    const std::vector<Sums> chunks =
        parallel_chunks<Sums>(0, groups, element_grain / 64, [&](std::int64_t begin, std::int64_t end) {
            Sums sums(models.size(), 0.0);
            for (std::int64_t g = begin; g < end; ++g)
                for (int offset : stale_warp_offsets) {
                    const std::int64_t j = 64 * g + offset;
                    if (j >= n) break;
                    const double x = in[static_cast<std::size_t>(j)];
                    sums[0] += x;
                    for (std::size_t k = 1; k < models.size(); ++k) {
                        bool counts = true;
                        for (int level = 1; level < models[k].passes && counts; ++level)
                            counts = (stale_warp_slots >> ((j >> (level * models[k].shift)) & 63)) & 1;
                        if (counts) sums[k] += x;
                    }
                }
            return sums;
        });
    for (const Sums& sums : chunks)
        for (std::size_t k = 0; k < models.size(); ++k) models[k].sum += sums[k];
    return models;
}

// The sum of all inputs: exact for integer data (int64, summed in parallel: any order gives the
// same integer), otherwise compensated (Neumaier), whose error is negligible next to the
// tolerance. Any summation order, sequential included, is within gamma(n - 1) * sum |x| of the
// exact sum. The compensated sum stays one sequential pass: its rounding depends on the order,
// and fractional cases are small (4 million elements at most).
Expected reduction_golden(const Case& c, const UninitializedVector<double>& in)
{
    Expected e;
    if (c.data == DataKind::integers) {
        const std::vector<std::int64_t> sums = parallel_chunks<std::int64_t>(
            0, static_cast<std::int64_t>(in.size()), element_grain, [&](std::int64_t begin, std::int64_t end) {
                std::int64_t sum = 0;
                for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i)
                    sum += static_cast<std::int64_t>(in[i]);
                return sum;
            });
        std::int64_t exact = 0;
        for (std::int64_t sum : sums) exact += sum;
        e.value = {static_cast<double>(exact)};
        return e;
    }
    CompensatedSum sum;
    double abs_sum = 0;
    for (double x : in) {
        abs_sum += std::fabs(x);
        sum.add(x);
    }
    e.value = {sum.value()};
    e.tolerance = {double_sum_tolerance(c.n - 1, abs_sum)};
    return e;
}

// The result of a kernel whose values pass through an int (a shared array or accumulator declared
// int): each element truncated toward 0 where it is loaded, or, in reductions 4 and 5, each pair
// in[i] + in[i + blockDim.x] that a thread adds during the load, in blocks of 2 * blockDim.x
// elements. Integer sums from there on: exact (in int64 here; an int that overflowed matches none).
struct TruncationModel {
    std::int64_t pair_stride = 0;  // blockDim.x of the pairs; 0: each element alone
    std::int64_t sum = 0;
};

std::vector<TruncationModel> truncation_models(const UninitializedVector<double>& in)
{
    const auto n = static_cast<std::int64_t>(in.size());
    std::vector<TruncationModel> models{TruncationModel{}};
    for (std::int64_t stride = 32; stride <= 1024; stride *= 2) models.push_back(TruncationModel{stride, 0});
    auto truncated = [](double x) {
        return std::fabs(x) < 9.2e18 ? static_cast<std::int64_t>(x) : std::int64_t{0};  // toward 0
    };
    using Sums = std::vector<std::int64_t>;
    const std::vector<Sums> chunks =
        parallel_chunks<Sums>(0, n, element_grain, [&](std::int64_t begin, std::int64_t end) {
            Sums sums(models.size(), 0);
            for (std::int64_t i = begin; i < end; ++i) {
                const double x = in[static_cast<std::size_t>(i)];
                sums[0] += truncated(x);
                for (std::size_t k = 1; k < models.size(); ++k) {
                    const std::int64_t stride = models[k].pair_stride;
                    if (i % (2 * stride) >= stride) continue;  // the second of a pair: added by its first
                    const double second = i + stride < n ? in[static_cast<std::size_t>(i + stride)] : 0.0;
                    sums[k] += truncated(x + second);
                }
            }
            return sums;
        });
    for (const Sums& sums : chunks)
        for (std::size_t k = 0; k < models.size(); ++k) models[k].sum += sums[k];
    return models;
}

void diagnose_reduction(const Case& c, const CaseInputs& inputs, const Expected& expected, const ArrayComparison& cmp,
                        Diagnosis& d)
{
    const double want = expected.value[0], tolerance = expected.tolerance_at(0), actual = cmp.actual(0);
    const auto& in = inputs.in_f64;
    if (cmp.marks[0] == Mark::nan || cmp.marks[0] == Mark::guard_copy) {
        d.findings.push_back(
            "the result is NaN although the input holds no NaN: the guard zones around `in` hold "
            "NaN, so a load past the end of the input (an unguarded in[i + blockDim.x]?) or a read "
            "of scratch before it was written");
        d.detail["pattern"] = "nan";
        return;
    }
    if (cmp.marks[0] != Mark::wrong) return;
    if (std::isinf(actual)) {
        d.findings.push_back("the result is infinite");
        return;
    }
    const double diff = actual - want;
    d.detail["difference"] = diff;
    d.findings.push_back(tolerance > 0
                             ? "off by " + format_value(diff) + ", " + format_value(std::fabs(diff) / tolerance) +
                                   " times the tolerance " + format_value(tolerance)
                             : "off by " + format_value(diff) +
                                   " (integer data: every correct summation order gives the exact sum)");

    // Values through an int: an exact integer model, decisive however small the error.
    if (c.data != DataKind::integers) {
        for (const TruncationModel& m : truncation_models(in)) {
            if (actual != static_cast<double>(m.sum)) continue;
            const std::string what = m.pair_stride == 0 ? "each element"
                                                        : "each pair in[i] + in[i + " + std::to_string(m.pair_stride) +
                                                              "] (the first add during the load)";
            d.findings.push_back(
                "the result equals the sum of the inputs with " + what + " truncated to an integer (" +
                with_commas(m.sum) +
                "): the values pass through an `int` (a shared array, variable or accumulator "
                "declared int) and lose their fractions" +
                (m.sum == 0 ? " (every value lies in (-1, 1); or nothing at all was added into out[0])" : "") +
                "; keep every value and partial sum in double");
            d.detail["pattern"] = "integer_truncation";
            d.detail["truncation_pair_stride"] = m.pair_stride;
            return;
        }
    }

    double abs_sum = 0;
    for (double x : in) abs_sum += std::fabs(x);
    // A hypothesis only counts when the error is far larger than the tolerance it is matched with:
    // on fractional data small block sums would otherwise "explain" rounding-sized errors.
    if (tolerance > 0 && std::fabs(diff) < 16 * tolerance) {
        if (abs_sum > 0 && std::fabs(diff) / abs_sum < 1e-4) {
            d.findings.push_back("the error is " + format_value(std::fabs(diff) / abs_sum) +
                                 " of the sum of |in|, just beyond what any correct order of double additions can "
                                 "make: probably float rounding somewhere (accumulate in double)");
            d.detail["pattern"] = "float_precision";
        }
        return;
    }
    // Prefix sums: of K = 2^j elements, what a block or a whole pass covers; of n rounded down to
    // a multiple of a block size, all but a partial block at the end.
    std::set<std::int64_t> lengths;
    for (std::int64_t k = 32; k < c.n; k *= 2) {
        lengths.insert(k);
        lengths.insert(c.n / k * k);
    }
    lengths.erase(0);
    lengths.erase(c.n);
    const auto prefixes = prefix_sums(in, lengths);

    // The result is a prefix sum: a pass too few, or the partial block dropped (both, where one
    // length is both).
    for (const auto& [length, sum] : prefixes) {
        if (!same(actual, sum, tolerance)) continue;
        const bool whole_blocks = (length & (length - 1)) == 0;
        bool rounded_down = false;
        for (std::int64_t block = 32; block <= 4096; block *= 2)
            rounded_down = rounded_down || c.n / block * block == length;
        std::string why;
        if (whole_blocks)
            why =
                "one block's or one pass's worth: the final pass over the block sums is missing, or the host loop "
                "stops one pass early";
        if (rounded_down)
            why += std::string(why.empty() ? "" : "; or ") + "the last " + with_commas(c.n - length) +
                   " element(s), a partial block at the end, are never added: round the number of blocks up and "
                   "guard the loads";
        d.findings.push_back("the result equals the sum of the first " + with_commas(length) + " elements only (" +
                             why + ")");
        d.detail["pattern"] = whole_blocks && !rounded_down ? "prefix_only"
                              : !whole_blocks               ? "tail_dropped"
                                                            : "prefix_or_tail";
        d.detail["matches_prefix_length"] = length;
        return;
    }
    // The last warp's stale reads.
    for (const StaleWarpModel& m : stale_warp_models(in)) {
        if (!same(actual, m.sum, tolerance)) continue;
        const std::string where = m.shift == 0
                                      ? "in the first pass"
                                      : "in blocks of " + with_commas(std::int64_t{1} << m.shift) +
                                            " elements, at every one of the " + std::to_string(m.passes) + " passes";
        d.findings.push_back(
            "the result equals the sum of only the elements whose index modulo 64 is 0, 1, 2, 4, 8, 16 or 32 (" +
            where +
            "): the unrolled last warp read sdata[tid + 32], sdata[tid + 16], ... before the other lanes had added "
            "into them (stale shared-memory reads); declare the shared array `volatile` in the unrolled steps and "
            "put `__syncwarp()` between them (or use __shfl_down_sync)");
        d.detail["pattern"] = "stale_last_warp";
        d.detail["stale_warp"] = {{"block_elements", m.shift == 0 ? 0 : std::int64_t{1} << m.shift},
                                  {"passes", m.passes}};
        return;
    }
    // Off by the first 2^j elements' sum (the first partial sum of some pass: a host loop that adds
    // it twice or skips it), or by the last block's (a wrong last block). With thousands of blocks
    // some block sum equals almost any error by chance, so no other block is tested.
    auto report_block = [&](std::int64_t start, std::int64_t length, double block_sum, const char* what) {
        if (block_sum == 0 || !(same(diff, block_sum, tolerance) || same(diff, -block_sum, tolerance))) return false;
        const bool twice = same(diff, block_sum, tolerance);
        d.findings.push_back("off by exactly the sum of " + std::string(what) + " (in[" + with_commas(start) +
                             "] to in[" + with_commas(start + length - 1) + "]): that partial sum is " +
                             (twice ? "added twice" : "missing"));
        d.detail["pattern"] = twice ? "block_added_twice" : "block_missing";
        d.detail["block"] = {{"first", start}, {"elements", length}};
        return true;
    };
    for (const auto& [length, sum] : prefixes)
        if ((length & (length - 1)) == 0 && report_block(0, length, sum, "the first block or partial sum")) return;
    for (std::int64_t block : {std::int64_t{256}, std::int64_t{512}, std::int64_t{1024}, std::int64_t{2048}}) {
        const std::int64_t start = (c.n - 1) / block * block;
        if (start == 0) continue;
        CompensatedSum acc;
        for (std::int64_t i = start; i < c.n; ++i) acc.add(in[static_cast<std::size_t>(i)]);
        if (report_block(start, c.n - start, acc.value(), "the last block")) return;
    }
    if (actual == -want && want != 0) {
        d.findings.push_back("the result has the wrong sign");
        return;
    }
    const double relative = abs_sum > 0 ? std::fabs(diff) / abs_sum : 0;
    if (relative > 0 && relative < 1e-4) {
        d.findings.push_back("the error is " + format_value(relative) +
                             " of the sum of |in|, the size of float rounding: accumulate in double (shared "
                             "memory, registers and partial sums), not float");
        d.detail["pattern"] = "float_precision";
    }
}

class ReductionChecks : public FamilyChecks {
public:
    Expected golden(const Exercise&, const Case& c, const CaseInputs& inputs) const override
    {
        return reduction_golden(c, inputs.in_f64);
    }

    double run_cpu_version(const Exercise&, const Case&, const CaseInputs& inputs, std::vector<float>&) const override
    {
        double sum = 0;
        for (double x : inputs.in_f64) sum += x;
        return sum;
    }

    void diagnose(const Exercise&, const Case& c, const CaseInputs& inputs, const Expected& expected,
                  const ArrayComparison& cmp, Diagnosis& d) const override
    {
        diagnose_reduction(c, inputs, expected, cmp, d);
    }
};

}  // namespace

const FamilyChecks& reduction_checks()
{
    return single_instance<ReductionChecks>();
}

}  // namespace harness::detail

// Reduction golden results, tolerances, the CPU version and the diagnosis (harness_checking:
// grader only). A reduction has one output value, so the diagnosis is about that value: how far it is off, in
// units of the tolerance, and which specific mistake would produce exactly it (a sum of the first
// K elements only, a dropped partial block, one block's sum added twice or missing, float
// accumulation).
#include <cmath>
#include <map>
#include <set>

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

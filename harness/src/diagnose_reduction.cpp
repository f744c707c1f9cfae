// A reduction has one output value, so the diagnosis is about that value: how far it is off, in
// units of the tolerance, and which specific mistake would produce exactly it (a sum of the first
// K elements only, a dropped partial block, one block's sum added twice or missing, float
// accumulation).
#include <cmath>
#include <map>
#include <set>

#include "array_check.hpp"

namespace harness::detail {
namespace {

// Running sum that is exact on integer data and compensated otherwise.
struct Accumulator {
    double sum = 0, compensation = 0;
    void add(double x)
    {
        const double t = sum + x;
        compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
        sum = t;
    }
    double value() const { return sum + compensation; }
};

// Sums of the first k elements for every k in `lengths`.
std::map<std::int64_t, double> prefix_sums(const std::vector<double>& in, const std::set<std::int64_t>& lengths)
{
    std::map<std::int64_t, double> sums;
    Accumulator acc;
    auto next = lengths.begin();
    for (std::int64_t i = 0; i <= static_cast<std::int64_t>(in.size()) && next != lengths.end(); ++i) {
        while (next != lengths.end() && *next == i) sums[*next++] = acc.value();
        if (i < static_cast<std::int64_t>(in.size())) acc.add(in[static_cast<std::size_t>(i)]);
    }
    return sums;
}

bool same(double a, double b, double tolerance) { return std::fabs(a - b) <= std::max(tolerance, 1e-12 * std::fabs(b)); }

}  // namespace

void diagnose_reduction(const Exercise& exercise, const Case& c, const CaseInputs& inputs, const Expected& expected,
                        const ArrayComparison& cmp, Diagnosis& d)
{
    (void)exercise;
    const double want = expected.value[0], tolerance = expected.tolerance[0], actual = cmp.actual[0];
    const auto& in = inputs.in_f64;
    if (cmp.marks[0] == Mark::nan || cmp.marks[0] == Mark::guard_copy) {
        d.findings.push_back("the result is NaN although the input holds no NaN: the guard zones around `in` hold "
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
    d.findings.push_back(tolerance > 0 ? "off by " + format_value(diff) + ", " + format_value(std::fabs(diff) / tolerance) +
                                             " times the tolerance " + format_value(tolerance)
                                       : "off by " + format_value(diff) +
                                             " (integer data: every correct summation order gives the exact sum)");

    // A hypothesis only counts when the error is far larger than the tolerance it is matched with:
    // on fractional data small block sums would otherwise "explain" rounding-sized errors.
    if (tolerance > 0 && std::fabs(diff) < 16 * tolerance) {
        double abs_sum = 0;
        for (double x : in) abs_sum += std::fabs(x);
        if (abs_sum > 0 && std::fabs(diff) / abs_sum < 1e-4) {
            d.findings.push_back("the error is " + format_value(std::fabs(diff) / abs_sum) +
                                 " of the sum of |in|, just beyond what any correct order of double additions can "
                                 "make: probably float rounding somewhere (accumulate in double)");
            d.detail["pattern"] = "float_precision";
        }
        return;
    }
    // The sum of a prefix: the first K elements (a pass or block too few), or all but a partial
    // block at the end (the block count rounded down).
    std::set<std::int64_t> lengths;
    for (std::int64_t k = 32; k < c.n; k *= 2) {
        lengths.insert(k);
        lengths.insert(c.n / k * k);
    }
    lengths.erase(0);
    lengths.erase(c.n);
    for (const auto& [length, sum] : prefix_sums(in, lengths)) {
        if (!same(actual, sum, tolerance)) continue;
        const bool power_of_two = (length & (length - 1)) == 0;
        d.findings.push_back(
            "the result equals the sum of the first " + with_commas(length) + " elements only" +
            (power_of_two ? " (one block's or one pass's worth): the final pass over the block sums is missing, or the "
                            "host loop stops one pass early"
                          : ": the last " + with_commas(c.n - length) +
                                " elements (a partial block at the end) are never added: round the number of blocks up "
                                "and guard the loads"));
        d.detail["pattern"] = power_of_two ? "prefix_only" : "tail_dropped";
        d.detail["matches_prefix_length"] = length;
        return;
    }
    // Exactly one block's sum too much or too little.
    for (std::int64_t block : {std::int64_t{exercise.section}, std::int64_t{256}, std::int64_t{512}, std::int64_t{1024},
                               std::int64_t{2048}}) {
        for (std::int64_t start = 0; start < c.n; start += block) {
            Accumulator acc;
            for (std::int64_t i = start; i < std::min(c.n, start + block); ++i) acc.add(in[static_cast<std::size_t>(i)]);
            const double block_sum = acc.value();
            if (block_sum == 0 || !(same(diff, block_sum, tolerance) || same(diff, -block_sum, tolerance))) continue;
            const bool twice = same(diff, block_sum, tolerance);
            d.findings.push_back("off by exactly the sum of one " + with_commas(block) + "-element block (block " +
                                 with_commas(start / block) + ", in[" + with_commas(start) + "] to in[" +
                                 with_commas(std::min(c.n, start + block) - 1) + "]): that block's partial sum is " +
                                 (twice ? "added twice" : "missing"));
            d.detail["pattern"] = twice ? "block_added_twice" : "block_missing";
            return;
        }
    }
    if (actual == -want && want != 0) {
        d.findings.push_back("the result has the wrong sign");
        return;
    }
    double abs_sum = 0;
    for (double x : in) abs_sum += std::fabs(x);
    const double relative = abs_sum > 0 ? std::fabs(diff) / abs_sum : 0;
    if (relative > 0 && relative < 1e-4) {
        d.findings.push_back("the error is " + format_value(relative) +
                             " of the sum of |in|, the size of float rounding: accumulate in double (shared "
                             "memory, registers and partial sums), not float");
        d.detail["pattern"] = "float_precision";
    }
}

}  // namespace harness::detail

// Convolution golden results, tolerances, the CPU version and the diagnosis (harness_checking:
// grader only). The diagnosis tells where wrong outputs lie (rows and columns, image borders, tile borders) and which
// common mistake reproduces them exactly: a flipped or transposed mask, ghosts clamped or wrapped
// instead of zero, rows and columns swapped, a mask other than the case's (another case's, left in
// __constant__ memory by a copy made only once, or zeros).
#include <algorithm>
#include <type_traits>
#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "convolution/convolution.hpp"
#include "family_checks.hpp"

namespace harness::detail {
namespace {

enum class Variant { flipped_mask, transposed_mask, clamped_ghosts, wrapped_ghosts, swapped_dimensions };

// A case as the checks walk it: an image of height x width (1D: one row of n) and a mask of
// mask_rows x mask_width weights (1D: one row), radius mask_width / 2.
struct Grid {
    std::int64_t height, width;
    int mask_width, radius, mask_rows;
};
Grid grid_of(const Case& c, bool two_d)
{
    const ConvolutionShape& shape = shape_of<ConvolutionShape>(c);
    return {two_d ? shape.height : 1, two_d ? shape.width : c.n, shape.mask_width, shape.mask_width / 2,
            two_d ? shape.mask_width : 1};
}

// Calls fn(y, x) for every output position of a height x width image (1D: height 1), in parallel
// stretches of about element_grain multiply-adds of a `taps`-weight mask; each output is computed
// alone, so the results do not depend on the threads.
template <typename Fn>
void for_each_output(std::int64_t height, std::int64_t width, int taps, Fn fn)
{
    const std::int64_t grain = std::max<std::int64_t>(1, element_grain / std::max(taps, 1));
    parallel_for(0, height * width, grain, [&](std::int64_t begin, std::int64_t end) {
        std::int64_t y = begin / width, x = begin % width;
        for (std::int64_t i = begin; i < end; ++i) {
            fn(y, x);
            if (++x == width) x = 0, ++y;
        }
    });
}

// The output a kernel with this mistake computes, in double.
UninitializedVector<double> convolve(const Case& c, const CaseInputs& inputs, bool two_d, Variant variant)
{
    const Grid grid = grid_of(c, two_d);
    std::int64_t height = grid.height, width = grid.width;
    if (variant == Variant::swapped_dimensions) std::swap(height, width);
    const int w = grid.mask_width, r = grid.radius, rows = grid.mask_rows;
    UninitializedVector<double> out(static_cast<std::size_t>(c.n));
    auto fetch = [&](std::int64_t y, std::int64_t x) -> double {
        if (variant == Variant::clamped_ghosts) {
            y = std::clamp<std::int64_t>(y, 0, height - 1);
            x = std::clamp<std::int64_t>(x, 0, width - 1);
        } else if (variant == Variant::wrapped_ghosts) {
            y = (y % height + height) % height;
            x = (x % width + width) % width;
        } else if (y < 0 || y >= height || x < 0 || x >= width) {
            return 0.0;
        }
        return inputs.in_f32[static_cast<std::size_t>(y * width + x)];
    };
    for_each_output(height, width, rows * w, [&](std::int64_t y, std::int64_t x) {
        double sum = 0;
        for (int j = 0; j < rows; ++j)
            for (int k = 0; k < w; ++k) {
                int mj = j, mk = k;
                if (variant == Variant::flipped_mask) mj = rows - 1 - j, mk = w - 1 - k;
                // Swapping rows and columns everywhere also transposes how the mask is applied.
                if (variant == Variant::transposed_mask || variant == Variant::swapped_dimensions) std::swap(mj, mk);
                sum += inputs.mask[static_cast<std::size_t>(mj * w + mk)] * fetch(two_d ? y - r + j : 0, x - r + k);
            }
        out[static_cast<std::size_t>(y * width + x)] = sum;
    });
    return out;
}

// Calls fn(tap, value) for each of the mask_width (2D: mask_width^2) inputs that output (y, x)
// multiplies with mask[tap] (row-major), ghosts 0.
template <typename Fn>
void for_each_tap(const Case& c, const CaseInputs& inputs, bool two_d, std::int64_t y, std::int64_t x, Fn fn)
{
    const Grid grid = grid_of(c, two_d);
    const std::int64_t height = grid.height, width = grid.width;
    const int w = grid.mask_width, r = grid.radius, rows = grid.mask_rows;
    for (int j = 0; j < rows; ++j) {
        const std::int64_t yy = two_d ? y - r + j : 0;
        for (int k = 0; k < w; ++k) {
            const std::int64_t xx = x - r + k;
            const bool inside = yy >= 0 && yy < height && xx >= 0 && xx < width;
            fn(j * w + k, inside ? static_cast<double>(inputs.in_f32[static_cast<std::size_t>(yy * width + xx)]) : 0.0);
        }
    }
}

// Whether output element i is what a float kernel computes with `mask`: within the rounding a
// float sum of its products can have, four times over, plus a millionth of the largest weight
// times the inputs it meets (the mask is a fit: a weight of 0 may come out as 1e-17).
bool output_matches_mask(const Case& c, const CaseInputs& inputs, bool two_d, const std::vector<float>& mask,
                         const ArrayComparison& cmp, std::int64_t i)
{
    const std::int64_t width = grid_of(c, two_d).width;
    double largest_weight = 0;
    for (float m : mask) largest_weight = std::max(largest_weight, static_cast<double>(std::fabs(m)));
    double sum = 0, abs_sum = 0, abs_inputs = 0;
    for_each_tap(c, inputs, two_d, i / width, i % width, [&](int tap, double value) {
        const double term = mask[static_cast<std::size_t>(tap)] * value;
        sum += term;
        abs_sum += std::fabs(term);
        abs_inputs += std::fabs(value);
    });
    const std::int64_t taps = static_cast<std::int64_t>(mask.size());
    return std::fabs(cmp.actual(static_cast<std::size_t>(i)) - sum) <=
           4 * float_sum_tolerance(taps, abs_sum) + 1e-6 * largest_weight * abs_inputs;
}

// Solves g m = b (g: size x size, row-major) by Gaussian elimination with partial pivoting, into
// b; false where the system is singular or nearly so.
bool solve(std::vector<double>& g, std::vector<double>& b, int size)
{
    auto at = [&](int row, int col) -> double& { return g[static_cast<std::size_t>(row * size + col)]; };
    double largest = 0;
    for (int i = 0; i < size; ++i) largest = std::max(largest, std::fabs(at(i, i)));
    for (int col = 0; col < size; ++col) {
        int pivot = col;
        for (int row = col + 1; row < size; ++row)
            if (std::fabs(at(row, col)) > std::fabs(at(pivot, col))) pivot = row;
        if (!(std::fabs(at(pivot, col)) > 1e-12 * largest)) return false;
        for (int k = 0; k < size; ++k) std::swap(at(pivot, k), at(col, k));
        std::swap(b[static_cast<std::size_t>(pivot)], b[static_cast<std::size_t>(col)]);
        for (int row = col + 1; row < size; ++row) {
            const double f = at(row, col) / at(col, col);
            if (f == 0) continue;
            for (int k = col; k < size; ++k) at(row, k) -= f * at(col, k);
            b[static_cast<std::size_t>(row)] -= f * b[static_cast<std::size_t>(col)];
        }
    }
    for (int row = size - 1; row >= 0; --row) {
        double v = b[static_cast<std::size_t>(row)];
        for (int k = row + 1; k < size; ++k) v -= at(row, k) * b[static_cast<std::size_t>(k)];
        b[static_cast<std::size_t>(row)] = v / at(row, row);
    }
    return true;
}

// The mask the kernel used, found from its output: a convolution with zero ghosts is linear in
// the mask, so the least-squares fit of mask_width (2D: mask_width^2) weights to a few thousand
// outputs spread over the array is the kernel's mask if it used any; rounded to float, as
// __constant__ memory holds it. Nothing where the fit does not reproduce the sample (the output is
// not a zero-ghost convolution of this input) or the sample is too small to fix the weights.
std::optional<std::vector<float>> fitted_mask(const Case& c, const CaseInputs& inputs, bool two_d,
                                              const ArrayComparison& cmp)
{
    const Grid grid = grid_of(c, two_d);
    const std::int64_t width = grid.width;
    const int taps = grid.mask_rows * grid.mask_width;
    const auto n = static_cast<std::int64_t>(cmp.marks.size());
    const std::int64_t step = std::max<std::int64_t>(1, n / std::max<std::int64_t>(8 * taps, 4096));
    std::vector<std::int64_t> sample;
    std::vector<double> g(static_cast<std::size_t>(taps * taps)), b(static_cast<std::size_t>(taps)),
        row(static_cast<std::size_t>(taps));
    for (std::int64_t i = 0; i < n; i += step) {
        const Mark mark = cmp.marks[static_cast<std::size_t>(i)];
        if (mark != Mark::ok && mark != Mark::wrong) continue;
        sample.push_back(i);
        for_each_tap(c, inputs, two_d, i / width, i % width,
                     [&](int tap, double value) { row[static_cast<std::size_t>(tap)] = value; });
        const double out = cmp.actual(static_cast<std::size_t>(i));
        for (int a = 0; a < taps; ++a) {
            const double ra = row[static_cast<std::size_t>(a)];
            if (ra == 0) continue;
            b[static_cast<std::size_t>(a)] += ra * out;
            for (int k = a; k < taps; ++k)
                g[static_cast<std::size_t>(a * taps + k)] += ra * row[static_cast<std::size_t>(k)];
        }
    }
    if (static_cast<std::int64_t>(sample.size()) < 2 * taps) return std::nullopt;
    for (int a = 0; a < taps; ++a)
        for (int k = 0; k < a; ++k)
            g[static_cast<std::size_t>(a * taps + k)] = g[static_cast<std::size_t>(k * taps + a)];
    if (!solve(g, b, taps)) return std::nullopt;
    // Weights a millionth of the largest or less are the fit's noise around 0.
    double largest = 0;
    for (double m : b) largest = std::max(largest, std::fabs(m));
    std::vector<float> mask;
    for (double m : b) mask.push_back(std::fabs(m) <= 1e-6 * largest ? 0.0f : static_cast<float>(m));
    for (std::int64_t i : sample)
        if (!output_matches_mask(c, inputs, two_d, mask, cmp, i)) return std::nullopt;
    return mask;
}

// "(0.25, 0.5, -1)"; a long mask by its first values.
std::string mask_text(const std::vector<float>& mask)
{
    std::string text = "(";
    for (std::size_t k = 0; k < mask.size() && k < 9; ++k) text += (k ? ", " : "") + format_value(mask[k]);
    return text + (mask.size() > 9 ? ", ...)" : ")");
}

// Labels of the exercise's cases whose mask is `mask`: as the kernel reads it with this case's
// mask_width, the first weights of that case's mask (and zeros past its end, what a fresh
// __constant__ array holds).
std::vector<std::string> cases_with_mask(const Exercise& exercise, const std::vector<float>& mask)
{
    double scale = 0;
    for (float m : mask) scale = std::max(scale, static_cast<double>(std::fabs(m)));
    std::vector<std::string> labels;
    for (const Case& other : cases_for(exercise)) {
        std::vector<float> theirs = family_of(exercise).mask(other);
        theirs.resize(std::max(theirs.size(), mask.size()), 0.0f);
        bool same = true;
        for (std::size_t k = 0; k < mask.size() && same; ++k)
            same = std::fabs(static_cast<double>(theirs[k]) - mask[k]) <= 1e-5 * scale;
        if (same) labels.push_back(other.label);
    }
    return labels;
}

// Whether two weights are the same, next to the largest weight of the mask (`scale`).
bool same_weight(double a, double b, double scale)
{
    return std::fabs(a - b) <= 1e-5 * scale;
}

// In 2D, a kernel that reads the mask as M[j][k] from a `__constant__ float M[L][L]` filled by one
// copy of mask_width^2 weights gets weight j * L + k of this case's mask as its row j: the first
// row as given, the others shifted (and zeros, or an earlier case's weights, past the copy's end).
// The row length L where the used weights inside the copy say it; nothing where no row but the
// first lies inside the copy (L >= mask_width^2) or no L fits.
std::optional<int> constant_row_length(const std::vector<float>& used, const std::vector<float>& given, int w,
                                       double scale)
{
    for (int length = w + 1; length <= 64; ++length) {
        bool inside = false, fits = true;
        for (int j = 1; j < w && fits; ++j)
            for (int k = 0; k < w && fits; ++k) {
                const int at = j * length + k;
                if (at >= w * w) continue;
                inside = true;
                fits =
                    same_weight(used[static_cast<std::size_t>(j * w + k)], given[static_cast<std::size_t>(at)], scale);
            }
        if (inside && fits) return length;
    }
    return std::nullopt;
}

// Wrong elements that all match the convolution with a mask other than this case's: the mask in
// __constant__ memory is another case's (copied once, behind a static flag), zeros (never copied),
// laid out in rows of another length (2D), or not the whole mask.
bool diagnose_other_mask(const Exercise& exercise, bool two_d, const Case& c, const CaseInputs& inputs,
                         const ArrayComparison& cmp, Diagnosis& d)
{
    const std::optional<std::vector<float>> used = fitted_mask(c, inputs, two_d, cmp);
    if (!used) return false;
    double scale = 0;
    for (float m : inputs.mask) scale = std::max(scale, static_cast<double>(std::fabs(m)));
    auto same_from = [&](std::size_t first, std::size_t count) {
        for (std::size_t k = first; k < first + count; ++k)
            if (!same_weight((*used)[k], inputs.mask[k], scale)) return false;
        return true;
    };
    if (same_from(0, used->size())) return false;  // this case's own mask: the errors are something else
    const Grid grid = grid_of(c, two_d);
    const std::int64_t height = grid.height, width = grid.width;
    std::atomic<bool> all_match{true};
    for_each_output(height, width, static_cast<int>(used->size()), [&](std::int64_t y, std::int64_t x) {
        const std::int64_t i = y * width + x;
        if (cmp.marks[static_cast<std::size_t>(i)] == Mark::wrong && all_match.load(std::memory_order_relaxed) &&
            !output_matches_mask(c, inputs, two_d, *used, cmp, i))
            all_match.store(false, std::memory_order_relaxed);
    });
    if (!all_match) return false;

    const int w = grid.mask_width;
    const bool zeros = std::all_of(used->begin(), used->end(), [](float m) { return m == 0.0f; });
    const bool first_row_only = two_d && !zeros && same_from(0, static_cast<std::size_t>(w));
    const std::vector<std::string> others =
        zeros || first_row_only ? std::vector<std::string>{} : cases_with_mask(exercise, *used);
    std::string line;
    if (first_row_only) {
        line = "the output is the convolution with the mask " + mask_text(*used) + " instead of this case's " +
               mask_text(inputs.mask) + ": the first row of the mask is right, the other rows are not";
        if (const std::optional<int> length = constant_row_length(*used, inputs.mask, w, scale)) {
            const std::string l = std::to_string(*length);
            line += "; row j is weights j * " + l + " to j * " + l +
                    " + mask_width - 1 of the mask: it sits in a __constant__ array with rows of " + l +
                    " floats (float M[" + l + "][" + l +
                    "]) filled by one flat copy of mask_width * mask_width weights. Declare a 1D __constant__ "
                    "array and read M[j * mask_width + k] (or copy the mask row by row)";
            d.detail["constant_row_length"] = *length;
        } else {
            line +=
                ": is the mask in a 2D __constant__ array with rows longer than mask_width, filled by one flat "
                "copy (declare it 1D and read M[j * mask_width + k]), or is the row left out of the mask's index?";
        }
    } else if (zeros) {
        line =
            "the output is what a mask of zeros gives: your kernel used a mask other than this case's, and the "
            "mask never reached __constant__ memory: copy it with cudaMemcpyToSymbol(your_constant_array, mask, " +
            std::string(two_d ? "mask_width * mask_width" : "mask_width") + " * sizeof(float)) in the launcher";
    } else {
        line = "the output is the convolution with the mask " + mask_text(*used) + " instead of this case's " +
               mask_text(inputs.mask);
        if (!others.empty()) {
            line += ", which is the mask of case " + others.front();
            if (others.size() > 1) line += " (and of " + std::to_string(others.size() - 1) + " other case(s))";
        }
        line +=
            ": your kernel used a mask other than this case's: copy the mask into __constant__ memory on every "
            "call (cudaMemcpyToSymbol in the launcher each time, not once behind a static flag), all of it";
    }
    d.findings.push_back(line);
    d.detail["pattern"] = first_row_only ? "mask_row_length" : zeros ? "zero_mask" : "other_mask";
    d.detail["mask_used"] = *used;
    if (!others.empty()) d.detail["mask_of_case"] = others.front();
    return true;
}

// Whether every bad element lies within `r` of a multiple of `tile` along one axis.
bool near_tile_edges(std::int64_t coordinate, std::int64_t tile, int r)
{
    const std::int64_t offset = coordinate % tile;
    return offset < r || offset >= tile - r;
}

// out[i] = sum_j mask[j] * in[i - r + j] with zero ghosts (2D: over rows and columns), in double.
// Products and sums of float data in any order: gamma(terms) * sum |mask * in| (Higham 3.5).
Expected conv_golden(const Case& c, const CaseInputs& inputs, bool two_d)
{
    const Grid grid = grid_of(c, two_d);
    const std::int64_t height = grid.height, width = grid.width;
    const int w = grid.mask_width, r = grid.radius, mask_rows = grid.mask_rows;
    Expected e;
    e.value.resize(static_cast<std::size_t>(c.n));
    const bool exact = c.data == DataKind::integers;
    if (!exact) e.tolerance.resize(static_cast<std::size_t>(c.n));
    const float* in = inputs.in_f32.data();
    const float* mask = inputs.mask.data();
    // The taps inside the array only, in the same order as one loop over all of them that skips
    // the ghosts (so the same sums, bit for bit), without a test in the innermost loop: the golden
    // result of the 2D cases was most of a grading's checking time.
    auto output = [&](auto with_tolerance, std::int64_t y, std::int64_t x) {
        const int j_first = two_d ? static_cast<int>(std::max<std::int64_t>(0, r - y)) : 0;
        const int j_last = two_d ? static_cast<int>(std::min<std::int64_t>(mask_rows, height - y + r)) : 1;
        const int k_first = static_cast<int>(std::max<std::int64_t>(0, r - x));
        const int k_last = static_cast<int>(std::min<std::int64_t>(w, width - x + r));
        double sum = 0, abs_sum = 0;
        for (int j = j_first; j < j_last; ++j) {
            const std::int64_t yy = two_d ? y - r + j : 0;
            const float* row = in + yy * width + (x - r);
            const float* taps = mask + j * w;
            for (int k = k_first; k < k_last; ++k) {
                const double term = static_cast<double>(taps[k]) * row[k];
                sum += term;
                if constexpr (decltype(with_tolerance)::value) abs_sum += std::fabs(term);
            }
        }
        const auto i = static_cast<std::size_t>(y * width + x);
        e.value[i] = sum;
        if constexpr (decltype(with_tolerance)::value)
            e.tolerance[i] = float_sum_tolerance(std::int64_t{mask_rows} * w, abs_sum);
    };
    if (exact)
        for_each_output(height, width, mask_rows * w,
                        [&](std::int64_t y, std::int64_t x) { output(std::false_type{}, y, x); });
    else
        for_each_output(height, width, mask_rows * w,
                        [&](std::int64_t y, std::int64_t x) { output(std::true_type{}, y, x); });
    return e;
}

// A direct convolution with zero ghosts, in float, as a CPU programmer would first write it.
double conv_cpu_version(const Case& c, const CaseInputs& inputs, bool two_d, std::vector<float>& out)
{
    const Grid grid = grid_of(c, two_d);
    const std::int64_t height = grid.height, width = grid.width;
    const int w = grid.mask_width, r = grid.radius, rows = grid.mask_rows;
    for (std::int64_t y = 0; y < height; ++y)
        for (std::int64_t x = 0; x < width; ++x) {
            float sum = 0;
            for (int j = 0; j < rows; ++j) {
                const std::int64_t yy = two_d ? y - r + j : 0;
                if (yy < 0 || yy >= height) continue;
                for (int k = 0; k < w; ++k) {
                    const std::int64_t xx = x - r + k;
                    if (xx >= 0 && xx < width)
                        sum += inputs.mask[static_cast<std::size_t>(j * w + k)] *
                               inputs.in_f32[static_cast<std::size_t>(yy * width + xx)];
                }
            }
            out[static_cast<std::size_t>(y * width + x)] = sum;
        }
    return out.empty() ? 0 : out.back();
}

void diagnose_conv(const Exercise& exercise, bool two_d, const Case& c, const CaseInputs& inputs,
                   const Expected& expected, const ArrayComparison& cmp, Diagnosis& d)
{
    const Grid grid = grid_of(c, two_d);
    const std::int64_t height = grid.height, width = grid.width;
    const int r = grid.radius;

    // Rows, columns, and whether the bad elements cluster at image borders or tile borders.
    std::vector<bool> bad_row(static_cast<std::size_t>(height)), bad_col(static_cast<std::size_t>(width));
    bool all_near_border = r > 0, any_interior = false;
    const std::int64_t tiles[] = {2048, 1024, 512, 256, 128, 64, 32, 16, 8};
    // A tile size explains the errors if every interior error lies near its edges, at two or more
    // different edges, and edges are rare enough (tile >= 8 r) for that not to be chance.
    std::vector<bool> tile_fits(std::size(tiles), r > 0);
    std::vector<std::int64_t> first_edge(std::size(tiles), -1);
    std::vector<bool> several_edges(std::size(tiles), false);
    for (std::size_t i = 0; i < cmp.marks.size(); ++i) {
        if (cmp.marks[i] == Mark::ok) continue;
        const std::int64_t y = static_cast<std::int64_t>(i) / width, x = static_cast<std::int64_t>(i) % width;
        bad_row[static_cast<std::size_t>(y)] = bad_col[static_cast<std::size_t>(x)] = true;
        const bool border = x < r || x >= width - r || (two_d && (y < r || y >= height - r));
        all_near_border = all_near_border && border;
        if (border) continue;
        any_interior = true;
        for (std::size_t t = 0; t < std::size(tiles); ++t) {
            const bool near_x = near_tile_edges(x, tiles[t], r), near_y = two_d && near_tile_edges(y, tiles[t], r);
            tile_fits[t] = tile_fits[t] && (near_x || near_y);
            // Which edge: its index along the axis, rows and columns numbered apart.
            const std::int64_t edge = near_x ? (x + r) / tiles[t] : (1 << 30) + (y + r) / tiles[t];
            if (first_edge[t] < 0)
                first_edge[t] = edge;
            else if (edge != first_edge[t])
                several_edges[t] = true;
        }
    }
    if (two_d) {
        const auto i = static_cast<std::size_t>(cmp.first_bad);
        std::int64_t rows = 0, cols = 0;
        for (bool b : bad_row) rows += b;
        for (bool b : bad_col) cols += b;
        d.findings.push_back("first wrong element at row " + with_commas(static_cast<std::int64_t>(i) / width) +
                             ", column " + with_commas(static_cast<std::int64_t>(i) % width) + "; wrong elements in " +
                             with_commas(rows) + " of " + with_commas(height) + " rows and " + with_commas(cols) +
                             " of " + with_commas(width) + " columns");
        d.detail["rows_with_errors"] = rows;
        d.detail["columns_with_errors"] = cols;
    }
    std::string where = "everywhere";
    if (all_near_border) {
        where = "image_borders";
        d.findings.push_back("every wrong element lies within r = " + std::to_string(r) + " of the " +
                             (two_d ? "image's borders" : "array's ends") +
                             ": the ghost elements outside the input must count as 0");
    } else if (any_interior) {
        for (std::size_t t = 0; t < std::size(tiles); ++t) {
            if (!tile_fits[t] || !several_edges[t] || tiles[t] < 8 * r ||
                tiles[t] >= (two_d ? std::max(width, height) : width))
                continue;
            where = "tile_borders";
            d.findings.push_back("every wrong element away from the borders lies within r = " + std::to_string(r) +
                                 " of a multiple of " + std::to_string(tiles[t]) + (two_d ? " (rows or columns)" : "") +
                                 ": the halo cells of the tiles are loaded or indexed wrong");
            d.detail["tile"] = tiles[t];
            break;
        }
    }
    d.detail["where"] = where;
    if (cmp.wrong == 0) return;

    const std::pair<Variant, const char*> variants[] = {
        {Variant::flipped_mask,
         "the output matches the convolution with the mask reversed (mask[mask_width-1-j]): "
         "index the mask as mask[j] with in[i - r + j]"},
        {Variant::clamped_ghosts,
         "the output matches ghost elements clamped to the nearest edge value: ghosts must be 0"},
        {Variant::wrapped_ghosts,
         "the output matches ghost elements that wrap around to the other side: ghosts must be 0"},
        {Variant::transposed_mask,
         "the output matches the mask transposed (mask[k][j] instead of mask[j][k]; on a square "
         "image also what swapping rows and columns gives): the mask is row-major, "
         "mask[j * mask_width + k] for row offset j and column offset k"},
        {Variant::swapped_dimensions,
         "the output matches the image read as width x height instead of height x width: "
         "rows and columns are swapped in the index arithmetic (row-major: y * width + x)"},
    };
    for (const auto& [variant, message] : variants) {
        if (!two_d && (variant == Variant::transposed_mask || variant == Variant::swapped_dimensions)) continue;
        if (variant == Variant::swapped_dimensions && height == width) continue;
        const UninitializedVector<double> model = convolve(c, inputs, two_d, variant);
        if (bad_elements_match(cmp, expected, [&](std::size_t i) { return model[i]; })) {
            d.findings.push_back(message);
            d.detail["pattern"] = static_cast<int>(variant) == 0        ? "flipped_mask"
                                  : variant == Variant::clamped_ghosts  ? "clamped_ghosts"
                                  : variant == Variant::wrapped_ghosts  ? "wrapped_ghosts"
                                  : variant == Variant::transposed_mask ? "transposed_mask"
                                                                        : "swapped_dimensions";
            return;
        }
    }
    diagnose_other_mask(exercise, two_d, c, inputs, cmp, d);
}

class ConvolutionChecks : public FamilyChecks {
public:
    explicit ConvolutionChecks(bool two_d) : two_d_(two_d) {}

    Expected golden(const Exercise&, const Case& c, const CaseInputs& inputs) const override
    {
        return conv_golden(c, inputs, two_d_);
    }

    double run_cpu_version(const Exercise&, const Case& c, const CaseInputs& inputs,
                           std::vector<float>& out) const override
    {
        return conv_cpu_version(c, inputs, two_d_, out);
    }

    void diagnose(const Exercise& exercise, const Case& c, const CaseInputs& inputs, const Expected& expected,
                  const ArrayComparison& cmp, Diagnosis& d) const override
    {
        diagnose_conv(exercise, two_d_, c, inputs, expected, cmp, d);
    }

private:
    bool two_d_;
};

}  // namespace

const FamilyChecks& conv1d_checks()
{
    return single_instance<ConvolutionChecks, false>();
}

const FamilyChecks& conv2d_checks()
{
    return single_instance<ConvolutionChecks, true>();
}

}  // namespace harness::detail

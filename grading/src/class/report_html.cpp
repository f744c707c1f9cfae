// report.html: the class's results for an instructor to read, one self-contained page. Plots are
// inline SVG drawn here; nothing runs in the page and it loads nothing (its Content-Security-Policy
// says so to the browser too). Every text that a student or a submission could have chosen (names,
// submitters, diagnoses, messages) goes through html_escape.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "class_internal.hpp"
#include "grading/class_results.hpp"
#include "harness/text.hpp"

using nlohmann::json;

namespace grading {

std::string html_escape(const std::string& raw)
{
    const std::string text = harness::valid_text(raw);
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

namespace {

using class_detail::number_or_zero;
using class_detail::number_text;

std::string str(const json& object, const char* key)
{
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::string esc(const json& object, const char* key)
{
    return html_escape(str(object, key));
}

const char* style = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1100px; color: #1d1d1f; padding: 0 16px; }
h1 { font-size: 24px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta { color: #555; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin: 16px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card b { display: block; font-size: 22px; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; border: 1px solid #eee; border-radius: 6px; padding: 6px; }
figcaption { font-size: 12px; color: #444; text-align: center; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #eee; padding: 4px 6px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.passed { color: #137333; } .failed { color: #b06000; } .not_graded { color: #c5221f; font-weight: bold; }
.none { color: #777; font-style: italic; }
code { font-size: 12px; overflow-wrap: anywhere; }
)";

// A histogram of `points` (0 to `max`) in 10 bins.
std::string histogram_svg(const std::string& title, const std::vector<double>& points, double max)
{
    constexpr int width = 250, height = 150, left = 28, bottom = 26, top = 14, bins = 10;
    std::vector<int> counts(bins, 0);
    for (double p : points) {
        int bin = max > 0 ? static_cast<int>(std::floor(p / max * bins)) : 0;
        counts[static_cast<std::size_t>(std::clamp(bin, 0, bins - 1))]++;
    }
    const int highest = std::max(1, *std::max_element(counts.begin(), counts.end()));
    const double bar = static_cast<double>(width - left - 6) / bins;
    const double plot_height = height - bottom - top;
    std::ostringstream svg;
    svg << "<figure><svg class=\"plot histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
        << "\" height=\"" << height << "\" role=\"img\" aria-label=\"points of " << html_escape(title) << "\">";
    svg << "<line x1=\"" << left << "\" y1=\"" << height - bottom << "\" x2=\"" << width - 4 << "\" y2=\""
        << height - bottom << "\" stroke=\"#888\"/>";
    for (int k = 0; k < bins; ++k) {
        const double h = plot_height * counts[static_cast<std::size_t>(k)] / highest;
        const double x = left + k * bar + 1, y = height - bottom - h;
        svg << "<rect x=\"" << number_text(x) << "\" y=\"" << number_text(y) << "\" width=\"" << number_text(bar - 2)
            << "\" height=\"" << number_text(h) << "\" fill=\"#4a7bd0\"><title>" << counts[static_cast<std::size_t>(k)]
            << " student(s) with " << number_text(max * k / bins) << " to " << number_text(max * (k + 1) / bins)
            << " points</title></rect>";
        if (counts[static_cast<std::size_t>(k)] > 0)
            svg << "<text x=\"" << number_text(x + bar / 2 - 1) << "\" y=\"" << number_text(y - 2)
                << "\" font-size=\"10\" text-anchor=\"middle\">" << counts[static_cast<std::size_t>(k)] << "</text>";
    }
    svg << "<text x=\"" << left << "\" y=\"" << height - bottom + 13 << "\" font-size=\"10\">0</text>";
    svg << "<text x=\"" << width - 4 << "\" y=\"" << height - bottom + 13
        << "\" font-size=\"10\" text-anchor=\"end\">" << number_text(max) << "</text>";
    svg << "<text x=\"" << (left + width) / 2 << "\" y=\"" << height - 3
        << "\" font-size=\"10\" text-anchor=\"middle\">points</text>";
    svg << "<text x=\"4\" y=\"" << top + 4 << "\" font-size=\"10\">" << highest << "</text>";
    svg << "</svg><figcaption>" << html_escape(title) << " (" << points.size() << " graded)</figcaption></figure>";
    return svg.str();
}

// One row per exercise: each student's speedup over the reference (geometric mean of the exercise's
// speed cases) as a dot on a log scale, the median as a bar, 1x as a line.
std::string speedup_svg(const json& exercise_stats)
{
    double low = 0.1, high = 10;
    for (const auto& e : exercise_stats)
        for (const auto& s : e.at("speedups")) {
            const double v = s.get<double>();
            if (v > 0) low = std::min(low, v), high = std::max(high, v);
        }
    low = std::max(low, 1e-3), high = std::min(high, 1e3);
    const double log_low = std::floor(std::log10(low)), log_high = std::ceil(std::log10(high));
    constexpr int left = 210, right = 20, row = 26, top = 10;
    constexpr int width = 860;
    const int rows = static_cast<int>(exercise_stats.size());
    const int height = top + rows * row + 34;
    const auto x_of = [&](double v) {
        const double l = std::clamp(std::log10(std::max(v, 1e-9)), log_low, log_high);
        return left + (l - log_low) / (log_high - log_low) * (width - left - right);
    };
    std::ostringstream svg;
    svg << "<svg class=\"plot speedups\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
        << height << "\" role=\"img\" aria-label=\"speedup over the reference per exercise\">";
    for (double l = log_low; l <= log_high + 1e-9; l += 1) {
        const double x = x_of(std::pow(10.0, l));
        svg << "<line x1=\"" << number_text(x) << "\" y1=\"" << top << "\" x2=\"" << number_text(x) << "\" y2=\""
            << top + rows * row << "\" stroke=\"" << (std::abs(l) < 1e-9 ? "#c5221f" : "#ddd") << "\"/>";
        svg << "<text x=\"" << number_text(x) << "\" y=\"" << top + rows * row + 14
            << "\" font-size=\"10\" text-anchor=\"middle\">" << number_text(std::pow(10.0, l), 3) << "x</text>";
    }
    svg << "<text x=\"" << (left + width) / 2 << "\" y=\"" << height - 4
        << "\" font-size=\"11\" text-anchor=\"middle\">speedup over the reference (log scale; 1x: as fast as the "
           "reference)</text>";
    int k = 0;
    for (const auto& e : exercise_stats) {
        const double y = top + k * row + row / 2.0;
        svg << "<text x=\"" << left - 8 << "\" y=\"" << number_text(y + 4) << "\" font-size=\"12\" text-anchor=\"end\">"
            << esc(e, "name") << "</text>";
        int j = 0;
        for (const auto& s : e.at("speedups")) {
            const double v = s.get<double>();
            // A little vertical jitter, the same on every run, so that equal speedups stay visible.
            const double dy = ((j++ * 7) % 11 - 5) * 1.2;
            svg << "<circle cx=\"" << number_text(x_of(v)) << "\" cy=\"" << number_text(y + dy)
                << "\" r=\"3.5\" fill=\"#4a7bd0\" fill-opacity=\"0.55\"><title>" << number_text(v, 3)
                << "x</title></circle>";
        }
        if (e.at("median_speedup").is_number()) {
            const double x = x_of(e.at("median_speedup").get<double>());
            svg << "<line x1=\"" << number_text(x) << "\" y1=\"" << number_text(y - 10) << "\" x2=\"" << number_text(x)
                << "\" y2=\"" << number_text(y + 10) << "\" stroke=\"#1d1d1f\" stroke-width=\"2\"><title>median "
                << number_text(e.at("median_speedup").get<double>(), 3) << "x</title></line>";
        } else {
            svg << "<text x=\"" << left + 6 << "\" y=\"" << number_text(y + 4)
                << "\" font-size=\"11\" fill=\"#777\">no timed case</text>";
        }
        ++k;
    }
    svg << "</svg>";
    return svg.str();
}

std::string points_text(const json& value)
{
    return value.is_number() ? number_text(value.get<double>()) : std::string("&ndash;");
}

// The near-identical kernels (class_results.hpp's similar_kernels): pairs and groups per exercise.
std::string similar_kernels_html(const json& similar)
{
    std::ostringstream html;
    html << "<section id=\"similar\"><h2>Near-identical kernels, for review; never penalised</h2>\n";
    html << "<p>Pairs of students whose compiled kernels share at least "
         << number_text(number_or_zero(similar, "threshold") * 100, 0)
         << "% of their runs of 5 instructions (opcodes only: names, registers and layout do not count), the runs of "
            "the hidden reference's code left out. Unchanged stubs, copies of the reference and pairs that both match "
            "the reference's compiled code are not listed. Nothing here changes points.</p>\n";
    bool any = false;
    for (const auto& e : similar.value("exercises", json::array())) {
        if (e.value("pairs", json::array()).empty()) continue;
        if (!any) html << "<table><tr><th>exercise</th><th>students</th><th>similarity</th><th>code</th></tr>\n";
        any = true;
        for (const auto& p : e.at("pairs")) {
            html << "<tr><td>" << esc(e, "exercise") << "</td><td>";
            for (const auto& who : p.at("students")) html << html_escape(who.get<std::string>()) << "<br>";
            html << "</td><td class=\"num\">" << number_text(number_or_zero(p, "similarity") * 100, 0)
                 << "%</td><td>" << esc(p, "code") << "</td></tr>\n";
        }
    }
    if (any) {
        html << "</table>\n<p>Groups:</p><ul>";
        for (const auto& e : similar.value("exercises", json::array()))
            for (const auto& g : e.value("groups", json::array())) {
                html << "<li>" << esc(e, "exercise") << ": ";
                for (std::size_t k = 0; k < g.size(); ++k) html << (k ? ", " : "") << html_escape(g[k].get<std::string>());
                html << "</li>";
            }
        html << "</ul>";
    } else {
        html << "<p class=\"none\">None.</p>";
    }
    html << "</section>\n";
    return html.str();
}

}  // namespace

std::string class_report_html(const json& results)
{
    const json& summary = results.at("summary");
    std::ostringstream html;
    html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">\n"
         << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         << "<title>Class results</title>\n<style>" << style << "</style></head>\n<body>\n";
    html << "<h1>Class results</h1>\n<p class=\"meta\">generated " << esc(results, "generated_at") << " by grade "
         << esc(results, "grader_version") << "; each student's files are in <code>students/&lt;name&gt;/</code></p>\n";
    html << "<div class=\"cards\">";
    const auto card = [&html](const std::string& label, const std::string& value, const char* cls = "") {
        html << "<div class=\"card " << cls << "\"><b>" << value << "</b>" << label << "</div>";
    };
    card("students", std::to_string(summary.at("students").get<int>()));
    card("passed every case", std::to_string(summary.at("passed").get<int>()), "passed");
    card("failed some case", std::to_string(summary.at("failed").get<int>()), "failed");
    card("not graded", std::to_string(summary.at("not_graded").get<int>()), "not_graded");
    card("median points", number_text(number_or_zero(summary, "median_points")) + " / " +
                              number_text(number_or_zero(summary, "max_points")));
    html << "</div>\n";

    html << "<section id=\"scores\"><h2>Score distribution per exercise</h2>\n<div class=\"plots\">";
    std::vector<double> totals;
    for (const auto& s : results.at("students"))
        if (s.at("points").is_number()) totals.push_back(s.at("points").get<double>());
    html << histogram_svg("total", totals, number_or_zero(summary, "max_points"));
    for (const auto& e : results.at("exercise_stats"))
        html << histogram_svg(str(e, "name"), e.at("points").get<std::vector<double>>(), number_or_zero(e, "max_points"));
    html << "</div></section>\n";

    html << "<section id=\"speedups\"><h2>Speedup over the reference per exercise</h2>\n";
    html << "<p>Each dot is a student: the geometric mean of the exercise's speed cases, timed against the hidden "
            "reference on the same GPU; the bar is the median.</p>\n";
    html << speedup_svg(results.at("exercise_stats")) << "</section>\n";

    html << "<section id=\"failing\"><h2>Cases that fail most often</h2>\n";
    if (results.at("failing_cases").empty()) {
        html << "<p class=\"none\">No case failed.</p>";
    } else {
        html << "<table><tr><th>exercise</th><th>case</th><th>students</th><th>how</th><th>diagnosis (numbers "
                "left out)</th><th>who</th></tr>\n";
        int shown = 0;
        for (const auto& f : results.at("failing_cases")) {
            if (++shown > 20) break;
            html << "<tr><td>" << esc(f, "exercise") << "</td><td><code>" << esc(f, "label") << "</code></td><td class=\"num\">"
                 << f.at("students").get<int>() << "</td><td>";
            for (const auto& [status, count] : f.at("statuses").items())
                html << html_escape(status) << "&nbsp;" << count.get<int>() << " ";
            html << "</td><td>";
            for (const auto& d : f.at("diagnoses"))
                html << d.at("students").get<int>() << "&times; " << esc(d, "summary") << "<br>";
            html << "</td><td>";
            for (const auto& w : f.at("who")) html << html_escape(w.get<std::string>()) << " ";
            html << "</td></tr>\n";
        }
        html << "</table>";
        if (shown > 20)
            html << "<p>" << results.at("failing_cases").size() - 20 << " more in results.json (failing_cases).</p>";
    }
    html << "</section>\n";

    html << "<section id=\"problems\"><h2>Grader-side problems to look at by hand</h2>\n";
    html << "<p>Timeouts, crashes, broken protocol, refused or invalid submissions, library use, and students whose "
            "grading did not finish.</p>\n";
    if (results.at("problems").empty()) {
        html << "<p class=\"none\">None.</p>";
    } else {
        html << "<table><tr><th>student</th><th>exercise</th><th>what</th><th>detail</th></tr>\n";
        for (const auto& p : results.at("problems"))
            html << "<tr><td>" << esc(p, "student") << "</td><td>" << esc(p, "exercise") << "</td><td>"
                 << esc(p, "kind") << "</td><td><code>" << esc(p, "detail") << "</code></td></tr>\n";
        html << "</table>";
    }
    html << "</section>\n";

    html << similar_kernels_html(results.value("similar_kernels", json::object()));

    html << "<section id=\"changes\"><h2>What changed after a regrade</h2>\n";
    if (results.at("changes").empty()) {
        html << "<p class=\"none\">No student was graded again.</p>";
    } else {
        html << "<table><tr><th>student</th><th>before</th><th>after</th><th>exercises that changed</th></tr>\n";
        for (const auto& c : results.at("changes")) {
            html << "<tr><td>" << esc(c, "student") << "</td><td class=\"num\">" << points_text(c.at("before"))
                 << "</td><td class=\"num\">" << points_text(c.at("after")) << "</td><td>";
            if (c.at("exercises").empty()) html << "<span class=\"none\">unchanged</span>";
            for (const auto& e : c.at("exercises"))
                html << esc(e, "name") << ": " << points_text(e.at("before")) << " &rarr; " << points_text(e.at("after"))
                     << "<br>";
            html << "</td></tr>\n";
        }
        html << "</table>";
    }
    html << "</section>\n";

    html << "<section id=\"students\"><h2>Students</h2>\n<table><tr><th>student</th><th>status</th><th>points</th>";
    for (const auto& e : results.at("exercises")) html << "<th>" << html_escape(e.get<std::string>()) << "</th>";
    html << "<th>GPU</th><th>seconds</th></tr>\n";
    for (const auto& s : results.at("students")) {
        const std::string name = str(s, "name");
        html << "<tr><td><a href=\"" << html_escape("students/" + name + "/summary.md") << "\">" << html_escape(name)
             << "</a>";
        for (const auto& who : s.at("submitters"))
            html << "<br><small>" << esc(who, "name") << " " << esc(who, "email") << "</small>";
        html << "</td><td class=\"" << esc(s, "status") << "\">" << esc(s, "status");
        if (!str(s, "message").empty()) html << "<br><small>" << esc(s, "message") << "</small>";
        html << "</td><td class=\"num\">" << points_text(s.at("points")) << "</td>";
        for (const auto& name_json : results.at("exercises")) {
            std::string cell = "&ndash;";
            for (const auto& e : s.at("exercises"))
                if (e.at("name") == name_json) cell = number_text(number_or_zero(e, "points"));
            html << "<td class=\"num\">" << cell << "</td>";
        }
        html << "<td>" << esc(s, "gpu_label") << "</td><td class=\"num\">" << number_text(number_or_zero(s, "seconds"), 1)
             << "</td></tr>\n";
    }
    html << "</table></section>\n</body></html>\n";
    return html.str();
}

}  // namespace grading

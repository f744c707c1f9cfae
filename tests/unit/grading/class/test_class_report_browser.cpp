// report.html as a person sees it: rendered by headless Chromium (Debian's `chromium`), its DOM read
// back and a screenshot taken. Where no Chromium is installed the test says so and checks nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "grading/build.hpp"
#include "grading/class_results.hpp"
#include "harness/process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string find_chromium()
{
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
        const char* path = std::getenv("PATH");
        std::string dirs = path ? path : "/usr/bin:/bin";
        std::size_t start = 0;
        while (start <= dirs.size()) {
            const std::size_t end = std::min(dirs.find(':', start), dirs.size());
            const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
            if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
            start = end + 1;
        }
    }
    return {};
}

json results_of(double points, const std::string& status, const std::string& summary, double speedup)
{
    json c = {{"index", 0}, {"label", "n=1/int"}, {"status", status}, {"summary", summary}, {"timing", nullptr}};
    if (speedup > 0) c["timing"] = {{"speedup_vs_reference", speedup}};
    return {{"device", "fake"},
            {"points", points},
            {"max_points", 10.0},
            {"exercises",
             {{{"name", "scan_kogge_stone"},
               {"status", "graded"},
               {"points", points},
               {"max_points", 10.0},
               {"library_use", json::array()},
               {"cases", {c}}}}}};
}

// A class whose names, submitters and diagnoses try to become markup.
json hostile_class()
{
    std::vector<grading::StudentFolder> folders;
    for (int k = 0; k < 8; ++k) {
        grading::StudentFolder f;
        f.record.name = "student" + std::to_string(k);
        f.record.gpu_label = "0 (fake)";
        f.results = results_of(k + 2.5, k % 3 ? "pass" : "wrong", "3 of 31 output element(s) wrong", 0.4 + 0.2 * k);
        folders.push_back(f);
    }
    // Two students whose kernels are the same: listed for review.
    std::vector<std::string> kernel;
    for (int k = 0; k < 40; ++k) kernel.push_back("op" + std::to_string(k) + ".f32");
    for (int k : {3, 4})
        folders[k].results->at("exercises")[0]["fingerprint"] =
            grading::to_json(grading::fingerprint_kernel(kernel, "ptx", nullptr));
    folders[0].record.submitters = {{"<img src=x onerror=alert(1)>", "1", "x@y"}};
    folders[1].results->at("exercises")[0]["cases"][0]["status"] = "wrong";
    folders[1].results->at("exercises")[0]["cases"][0]["summary"] = "<script>document.title='owned'</script>";
    grading::StudentFolder missing;
    missing.record.name = "lost";
    missing.record.outcome = "not_graded";
    missing.record.message = "</td></tr></table><h1 id=injected>injected</h1>";
    folders.push_back(missing);
    return grading::class_results(folders, {});
}

}  // namespace

TEST_CASE("report.html in headless Chromium: the plots are there, student text stays text")
{
    const std::string chromium = find_chromium();
    if (chromium.empty()) {
        MESSAGE("SKIPPED: no chromium on the PATH (Debian: apt-get install chromium); report.html not rendered");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("grader_class_browser_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    grading::write_class_files(dir.string(), hostile_class());
    const std::string url = "file://" + (dir / "report.html").string();
    // As root Chromium needs --no-sandbox; a profile of its own, no network.
    const std::vector<std::string> common = {chromium,
                                             "--headless",
                                             "--no-sandbox",
                                             "--disable-gpu",
                                             "--no-first-run",
                                             "--user-data-dir=" + (dir / "profile").string(),
                                             "--host-resolver-rules=MAP * ~NOTFOUND"};

    std::vector<std::string> dump = common;
    dump.insert(dump.end(), {"--dump-dom", url});
    const auto dom = harness::run_command(dump, std::chrono::minutes(2), 16 << 20);
    INFO(dom.output.substr(0, 4000));
    REQUIRE(dom.status.ok());
    // Three plots: the total's histogram, the exercise's, the speedups.
    std::size_t svgs = 0;
    for (std::size_t at = dom.output.find("<svg"); at != std::string::npos; at = dom.output.find("<svg", at + 1)) ++svgs;
    CHECK(svgs == 3);
    CHECK(dom.output.find("class=\"plot speedups\"") != std::string::npos);
    CHECK(dom.output.find("<circle") != std::string::npos);
    CHECK(dom.output.find("<rect") != std::string::npos);
    // What students wrote is shown as text, never parsed as markup.
    CHECK(dom.output.find("<img") == std::string::npos);
    CHECK(dom.output.find("<script") == std::string::npos);
    CHECK(dom.output.find("id=\"injected\"") == std::string::npos);
    CHECK(dom.output.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    CHECK(dom.output.find("<title>Class results</title>") != std::string::npos);
    CHECK(dom.output.find("Grader-side problems to look at by hand") != std::string::npos);
    const std::size_t similar = dom.output.find("Near-identical kernels, for review; never penalised");
    REQUIRE(similar != std::string::npos);
    CHECK(dom.output.find("student3<br>student4<br>", similar) < dom.output.find("</section>", similar));
    CHECK(dom.output.find("100%", similar) < dom.output.find("</section>", similar));

    std::vector<std::string> shot = common;
    shot.insert(shot.end(), {"--screenshot=" + (dir / "report.png").string(), "--window-size=1200,1600", url});
    const auto screenshot = harness::run_command(shot, std::chrono::minutes(2));
    INFO(screenshot.output);
    CHECK(screenshot.status.ok());
    std::ifstream png(dir / "report.png", std::ios::binary);
    std::string header(8, '\0');
    png.read(header.data(), 8);
    CHECK(header == "\x89PNG\r\n\x1a\n");
    CHECK(fs::file_size(dir / "report.png") > 20000);  // a page with plots and tables, not a blank one
    fs::remove_all(dir);
}

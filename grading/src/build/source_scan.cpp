// Source scanning: libraries named in a source's text, or in a linked runner's bytes.
#include <regex>

#include "grading/build.hpp"

namespace grading {
namespace {

// Source with comments and string literals blanked, so a mention in a comment is not a use.
std::string strip_comments_and_strings(const std::string& s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 2, "//") == 0) {
            while (i < s.size() && s[i] != '\n') ++i;
            out += '\n';
        } else if (s.compare(i, 2, "/*") == 0) {
            const std::size_t end = s.find("*/", i + 2);
            i = end == std::string::npos ? s.size() : end + 1;
            out += ' ';
        } else if (s[i] == '"') {
            // Keep #include "..." paths: they name headers.
            const bool include_line = out.rfind("#include") != std::string::npos &&
                                      out.find('\n', out.rfind("#include")) == std::string::npos;
            std::size_t j = i + 1;
            while (j < s.size() && s[j] != '"' && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
            out += include_line ? s.substr(i, j - i + 1) : "\"\"";
            i = j;
        } else {
            out += s[i];
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> detect_library_use(const std::string& source)
{
    const std::string code = strip_comments_and_strings(source);
    const std::pair<const char*, const char*> patterns[] = {
        {"CUB", R"((#\s*include\s*[<"]cub/)|(\bcub::))"},
        {"Thrust", R"((#\s*include\s*[<"]thrust/)|(\bthrust::))"},
        {"cuBLAS", R"((#\s*include\s*[<"]cublas)|(\bcublas[A-Z]\w*\s*\())"},
        {"cuDNN", R"((#\s*include\s*[<"]cudnn)|(\bcudnn[A-Z]\w*\s*\())"},
        {"cuda::std algorithms", R"(#\s*include\s*[<"]cuda/std/(numeric|algorithm))"},
        // Each file is compiled on its own: an include by path reaches outside the submission.
        {"a file outside the submission (#include by path)", R"(#\s*include\s*"(/|[^"]*\.\./))"},
    };
    std::vector<std::string> used;
    for (const auto& [name, pattern] : patterns)
        if (std::regex_search(code, std::regex(pattern))) used.push_back(name);
    return used;
}

std::vector<std::string> detect_library_symbols(const std::string& bytes)
{
    // Itanium mangling: a namespace appears as <length><name> after N, e.g. _ZN3cub..., N6thrust...
    const std::pair<const char*, std::vector<std::string>> libraries[] = {
        {"CUB", {"N3cub", "_ZN3cub"}},
        {"Thrust", {"N6thrust", "_ZN6thrust"}},
        {"cuBLAS", {"cublasCreate", "cublasDdot", "cublasSasum"}},
    };
    std::vector<std::string> found;
    for (const auto& [name, needles] : libraries)
        for (const auto& needle : needles)
            if (bytes.find(needle) != std::string::npos) {
                found.push_back(name);
                break;
            }
    return found;
}

}  // namespace grading

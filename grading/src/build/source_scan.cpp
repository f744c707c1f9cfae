// Source scanning: libraries named in a source's text, or in a linked runner's bytes; PTX written
// into inline `asm` statements.
#include <cctype>
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

namespace {

bool identifier_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// A literal's text from `at` (its opening quote, or the R of a raw string) into `text`, escapes
// read as the compiler reads the common ones; returns the index after it.
std::size_t read_literal(const std::string& s, std::size_t at, std::string& text)
{
    if (s[at] == 'R') {  // R"delim( ... )delim"
        const std::size_t open = s.find('(', at + 2);
        if (open == std::string::npos) return s.size();
        const std::string close = ")" + s.substr(at + 2, open - at - 2) + "\"";
        const std::size_t end = s.find(close, open + 1);
        if (end == std::string::npos) return s.size();
        text += s.substr(open + 1, end - open - 1);
        return end + close.size();
    }
    std::size_t k = at + 1;
    for (; k < s.size() && s[k] != '"' && s[k] != '\n'; ++k) {
        if (s[k] == '\\' && k + 1 < s.size()) {
            ++k;
            text += s[k] == 'n' ? '\n' : s[k] == 't' ? '\t' : s[k];
        } else {
            text += s[k];
        }
    }
    return k + 1;
}

// [a-z]+[0-9]*(\.[a-z0-9_]+)+
bool is_ptx_opcode(const std::string& word)
{
    std::size_t k = 0;
    while (k < word.size() && std::islower(static_cast<unsigned char>(word[k]))) ++k;
    if (k == 0) return false;
    while (k < word.size() && std::isdigit(static_cast<unsigned char>(word[k]))) ++k;
    bool suffix = false;
    while (k < word.size() && word[k] == '.') {
        const std::size_t start = ++k;
        while (k < word.size() && (std::islower(static_cast<unsigned char>(word[k])) ||
                                   std::isdigit(static_cast<unsigned char>(word[k])) || word[k] == '_'))
            ++k;
        if (k == start) return false;
        suffix = true;
    }
    return suffix && k == word.size();
}

// The number of PTX-like instructions (an opcode with a dotted suffix: ld.global.f32, bar.sync,
// shfl.sync.up.b32, ...) in a block of assembly text.
std::size_t ptx_like_instructions(const std::string& text)
{
    std::size_t count = 0, start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find_first_of(";\n", start);
        if (end == std::string::npos) end = text.size();
        std::string statement = text.substr(start, end - start);
        start = end + 1;
        std::size_t k = statement.find_first_not_of(" \t\r{}");
        if (k == std::string::npos) continue;
        statement.erase(0, k);
        if (statement[0] == '@') {
            k = statement.find_first_of(" \t");
            if (k == std::string::npos) continue;
            k = statement.find_first_not_of(" \t", k);
            if (k == std::string::npos) continue;
            statement.erase(0, k);
        }
        if (is_ptx_opcode(statement.substr(0, statement.find_first_of(" \t")))) ++count;
    }
    return count;
}

}  // namespace

namespace {

// The text of each inline `asm` statement of a C++ text (its literals, each followed by a line end),
// comments and other literals skipped.
std::vector<std::string> inline_asm_texts(const std::string& source)
{
    std::vector<std::string> texts;
    const std::string& s = source;
    for (std::size_t i = 0; i < s.size();) {
        if (s.compare(i, 2, "//") == 0) {
            i = s.find('\n', i);
            if (i == std::string::npos) break;
            continue;
        }
        if (s.compare(i, 2, "/*") == 0) {
            i = s.find("*/", i + 2);
            if (i == std::string::npos) break;
            i += 2;
            continue;
        }
        if (s[i] == '"' || s[i] == '\'') {  // a literal outside asm: skipped whole
            const char quote = s[i];
            std::size_t k = i + 1;
            while (k < s.size() && s[k] != quote && s[k] != '\n') k += s[k] == '\\' ? 2 : 1;
            i = k + 1;
            continue;
        }
        if (!identifier_char(s[i])) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < s.size() && identifier_char(s[end])) ++end;
        const std::string word = s.substr(i, end - i);
        i = end;
        if (i < s.size() && s[i] == '"' && !word.empty() && word.back() == 'R') {  // a raw string (R, u8R, LR, ...)
            std::string ignored;
            i = read_literal(s, i - 1, ignored);
            continue;
        }
        if (word != "asm" && word != "__asm__" && word != "__asm") continue;
        // Qualifiers, then the parenthesised operands: every literal inside is assembly text
        // (operand constraints are short and count for nothing).
        std::size_t k = i;
        while (k < s.size() && (std::isspace(static_cast<unsigned char>(s[k])) || identifier_char(s[k]))) ++k;
        if (k >= s.size() || s[k] != '(') continue;
        std::string text;
        int depth = 0;
        for (; k < s.size(); ++k) {
            const char c = s[k];
            if (c == '(') ++depth;
            if (c == ')' && --depth == 0) break;
            if (c == '"' || (c == 'R' && k + 1 < s.size() && s[k + 1] == '"' && !identifier_char(s[k - 1]))) {
                k = read_literal(s, k, text) - 1;
                text += '\n';
            }
        }
        texts.push_back(std::move(text));
        i = k;
    }
    return texts;
}

}  // namespace

std::size_t inline_asm_instructions(const std::string& source)
{
    std::size_t count = 0;
    for (const auto& text : inline_asm_texts(source)) count += ptx_like_instructions(text);
    return count;
}

std::vector<std::string> assembler_file_directives(const std::string& source)
{
    // .incbin and .include read a file; .macro, .irp, .irpc and .altmacro build a directive's name
    // from pieces (".irpc c, i\n.\c\()ncbin"), which no search for the name would see.
    static constexpr std::string_view directives[] = {".incbin", ".include", ".macro", ".irp", ".altmacro"};
    std::vector<std::string> found;
    for (const auto& text : inline_asm_texts(source)) {
        std::string joined;  // the literals' lines joined ("." "incbin" split by a macro), lower case
        for (const char c : text)
            if (c != '\n' && c != '\r') joined += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const std::string_view directive : directives)
            if (joined.find(directive) != std::string::npos &&
                std::find(found.begin(), found.end(), directive) == found.end())
                found.emplace_back(directive);
    }
    return found;
}

}  // namespace grading

// Header policy: the files a compile read, from the dependency list the compiler wrote; which of
// them a submission may read (the toolchain's and the system's headers), and which belong to a
// library the exercise must not call.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <string_view>

#include "grading/build.hpp"
#include "harness/sandbox.hpp"

namespace fs = std::filesystem;

namespace grading {
namespace {

void add_unique(std::vector<std::string>& list, const std::string& item)
{
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// The path with its links and ".." resolved as far as it exists.
std::string resolved(const std::string& path)
{
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::path(path), ec);
    return ec ? fs::path(path).lexically_normal().string() : p.string();
}

}  // namespace

std::vector<std::string> parse_make_dependencies(const std::string& text)
{
    std::vector<std::string> result;
    std::set<std::string> seen;
    std::string word;
    bool in_target = true;  // before the rule's ':'
    auto flush = [&] {
        if (!word.empty() && !in_target && seen.insert(word).second) result.push_back(word);
        word.clear();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size()) {
            const char next = text[i + 1];
            if (next == '\n' || (next == '\r' && i + 2 < text.size() && text[i + 2] == '\n')) {  // continuation
                flush();
                i += next == '\r' ? 2 : 1;
                continue;
            }
            if (next == ' ' || next == '\t' || next == '#' || next == '\\') {
                word += next;
                ++i;
                continue;
            }
            word += c;
        } else if (c == '\n' || c == '\r') {  // the end of a rule
            flush();
            in_target = true;
        } else if (c == ' ' || c == '\t') {
            flush();
        } else if (c == ':' && in_target &&
                   (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\t' || text[i + 1] == '\n' ||
                    text[i + 1] == '\r')) {
            word.clear();  // the target (nvcc does not escape its spaces)
            in_target = false;
        } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
            word += '$';
            ++i;
        } else {
            word += c;
        }
    }
    flush();
    return result;
}

std::vector<std::string> files_named_in_messages(const std::string& messages)
{
    std::vector<std::string> files;
    std::size_t begin = 0;
    while (begin < messages.size()) {
        std::size_t end = messages.find('\n', begin);
        if (end == std::string::npos) end = messages.size();
        std::string_view line(messages.data() + begin, end - begin);
        begin = end + 1;
        // gcc's "In file included from PATH:LINE," and its continuation "                 from PATH:LINE".
        const std::size_t start = line.find_first_not_of(' ');
        if (start == std::string_view::npos) continue;
        line.remove_prefix(start);
        for (const std::string_view lead : {std::string_view("In file included from "), std::string_view("from ")})
            if (line.substr(0, lead.size()) == lead) {
                line.remove_prefix(lead.size());
                break;
            }
        if (line.empty() || line.front() != '/') continue;
        // PATH:LINE (gcc, the assembler) or PATH(LINE) (nvcc's front end): the first such mark that
        // ends the path of a file ("b(1).h(12)" names b(1).h).
        for (std::size_t k = 1; k + 1 < line.size(); ++k) {
            const bool gcc = line[k] == ':' && std::isdigit(static_cast<unsigned char>(line[k + 1]));
            const bool edg = line[k] == '(' && std::isdigit(static_cast<unsigned char>(line[k + 1]));
            if (!gcc && !edg) continue;
            const std::string path(line.substr(0, k));
            // Only a file of this machine's: the compiler's own temporaries in the sandbox's private
            // /tmp (its assembler's "/tmp/ccXXXX.s:5: Error") are no file the submission read.
            std::error_code ec;
            if (!fs::is_regular_file(path, ec)) continue;
            add_unique(files, path);
            break;
        }
    }
    return files;
}

std::vector<std::string> header_roots(const std::string& root)
{
    std::vector<std::string> roots;
    std::error_code ec;
    auto add = [&](const fs::path& p) {
        if (!fs::is_directory(p, ec)) return;
        add_unique(roots, fs::canonical(p, ec).string());
    };
    if (!root.empty()) {
        add(fs::path(root) / "include");
        for (auto it = fs::directory_iterator(fs::path(root) / "targets", ec); !ec && it != fs::directory_iterator();
             it.increment(ec))
            add(it->path() / "include");
    }
    add("/usr/include");
    add("/usr/lib/gcc");
    return roots;
}

std::string library_of_header(const std::string& path_below_root)
{
    std::vector<std::string> parts;
    for (const auto& part : fs::path(path_below_root)) parts.push_back(part.string());
    if (!parts.empty() && parts[0] == "cccl") parts.erase(parts.begin());  // CUDA 13: include/cccl/{cub,thrust,cuda}
    if (parts.empty()) return {};
    std::string first = parts[0];
    std::transform(first.begin(), first.end(), first.begin(), [](unsigned char c) { return std::tolower(c); });
    if (first == "cub") return "CUB";
    if (first == "thrust") return "Thrust";
    // libcu++'s algorithms as a whole (cuda/std/numeric, cuda/std/algorithm, the numeric ones one by
    // one); its other headers pull in single internal algorithm headers (iter_swap, min) by themselves.
    if (first == "cuda" && parts.size() >= 3 && parts[1] == "std" &&
        (parts[2] == "numeric" || parts[2] == "algorithm" || parts[2] == "__numeric" || parts[2] == "execution" ||
         parts[2] == "__pstl"))
        return "cuda::std algorithms";
    const std::pair<const char*, const char*> prefixes[] = {
        {"cublas", "cuBLAS"}, {"nvblas", "cuBLAS"},     {"cudnn", "cuDNN"},       {"cufft", "cuFFT"},
        {"curand", "cuRAND"}, {"cusparse", "cuSPARSE"}, {"cusolver", "cuSOLVER"}, {"cutensor", "cuTENSOR"},
        {"nvrtc", "NVRTC"},   {"npp", "NPP"},           {"nccl", "NCCL"},
    };
    for (const auto& [prefix, library] : prefixes)
        if (first.rfind(prefix, 0) == 0) return library;
    return {};
}

DependencyCheck check_dependencies(const std::vector<std::string>& dependencies, const std::string& source,
                                   const std::vector<std::string>& roots)
{
    DependencyCheck check;
    const std::string real_source = resolved(source);
    for (const auto& dependency : dependencies) {
        if (dependency.empty()) continue;
        if (dependency == source) continue;
        if (dependency.front() != '/') {  // every path the compile reads is absolute: the source is
            add_unique(check.outside, dependency);
            continue;
        }
        const std::string real = resolved(dependency);
        if (real == real_source) continue;
        const auto root = std::find_if(roots.begin(), roots.end(), [&](const std::string& r) {
            return !r.empty() && real != r && harness::is_below(real, r);  // a file strictly below
        });
        if (root == roots.end()) {
            add_unique(check.outside, real);
            continue;
        }
        const std::string library = library_of_header(real.substr(root->size() + 1));
        if (!library.empty()) add_unique(check.library_use, library);
    }
    return check;
}

}  // namespace grading

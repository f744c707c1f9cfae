// Submission discovery: the one file of each exercise below the submission's folder.
#include <algorithm>
#include <filesystem>
#include <map>

#include "grading/build.hpp"

namespace fs = std::filesystem;

namespace grading {

std::vector<SubmissionFile> find_submission(const std::string& directory, const std::vector<std::string>& exercises)
{
    std::map<std::string, std::vector<std::string>> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(directory, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file()) continue;  // follows links: a linked file is found, then refused
        const fs::path& p = it->path();
        if (p.extension() == ".cu") found[p.stem().string()].push_back(p.string());
    }
    std::vector<SubmissionFile> files;
    for (const auto& name : exercises) {
        SubmissionFile file{name, {}, {}};
        auto hit = found.find(name);
        if (hit != found.end()) {
            std::sort(hit->second.begin(), hit->second.end());
            file.path = hit->second.front();
            if (hit->second.size() > 1) file.duplicates = hit->second;
            file.symlink = fs::is_symlink(file.path);
        }
        files.push_back(file);
    }
    return files;
}

}  // namespace grading

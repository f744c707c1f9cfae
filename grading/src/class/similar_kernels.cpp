// Near-identical kernels between the students of a class (class_results.hpp): their fingerprints
// compared pair by pair, exercise by exercise; for review, never penalised.
#include <algorithm>
#include <map>
#include <numeric>

#include "grading/build.hpp"
#include "grading/class_results.hpp"

using nlohmann::json;

namespace grading {
namespace {

constexpr std::size_t max_pairs_listed = 100;  // per exercise, the most similar first

// One student's file of one exercise, as the comparison takes it.
struct Kernel {
    std::string student;
    KernelFingerprint fingerprint;
    bool matches_reference = false;
};

// `key` of `object` when it is a string (grade's results are read as they are on disk), else empty.
std::string text_at(const json& object, const char* key)
{
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

bool built(const json& exercise)
{
    const std::string status = text_at(exercise, "status");
    return status == "graded" || status == "built";
}

// The file matches the reference's compiled code (results.json's code_checks.reference.matches).
bool matches_reference(const json& exercise)
{
    const auto checks = exercise.find("code_checks");
    if (checks == exercise.end() || !checks->is_object()) return false;
    const auto reference = checks->find("reference");
    if (reference == checks->end() || !reference->is_object()) return false;
    const auto matches = reference->find("matches");
    return matches != reference->end() && matches->is_boolean() && matches->get<bool>();
}

// The groups the listed pairs join (every student linked to another by a pair), each sorted, the
// groups in the order of their first student.
std::vector<std::vector<std::string>> groups_of(const std::vector<std::pair<std::size_t, std::size_t>>& pairs,
                                                const std::vector<Kernel>& kernels)
{
    std::vector<std::size_t> parent(kernels.size());
    std::iota(parent.begin(), parent.end(), 0);
    const auto find = [&parent](std::size_t k) {
        while (parent[k] != k) k = parent[k] = parent[parent[k]];
        return k;
    };
    for (const auto& [a, b] : pairs) parent[find(a)] = find(b);
    std::map<std::size_t, std::vector<std::string>> by_root;
    std::vector<bool> listed(kernels.size(), false);
    for (const auto& [a, b] : pairs) listed[a] = listed[b] = true;
    for (std::size_t k = 0; k < kernels.size(); ++k)
        if (listed[k]) by_root[find(k)].push_back(kernels[k].student);
    std::vector<std::vector<std::string>> groups;
    for (auto& [root, members] : by_root) {
        std::sort(members.begin(), members.end());
        groups.push_back(std::move(members));
    }
    std::sort(groups.begin(), groups.end());
    return groups;
}

}  // namespace

json similar_kernels(const std::vector<std::pair<std::string, const json*>>& students,
                     const std::vector<std::string>& exercises)
{
    json listed = json::array();
    for (const std::string& exercise : exercises) {
        std::vector<Kernel> kernels;
        int too_small = 0, without_fingerprint = 0;
        std::map<std::string, int> codes;
        for (const auto& [student, results] : students) {
            if (results == nullptr) continue;
            for (const json& e : results->at("exercises")) {
                if (!e.is_object() || text_at(e, "name") != exercise || !built(e)) continue;
                const auto found = e.find("fingerprint");
                const std::optional<KernelFingerprint> f =
                    found == e.end() ? std::nullopt : fingerprint_from_json(*found);
                if (!f) {
                    ++without_fingerprint;
                    continue;
                }
                if (f->own_runs < min_similar_kernel_runs) {
                    ++too_small;
                    continue;
                }
                ++codes[f->code];
                kernels.push_back({student, *f, matches_reference(e)});
            }
        }
        struct Pair {
            std::size_t a, b;
            double similarity;
        };
        std::vector<Pair> pairs;
        int explained_by_reference = 0;
        for (std::size_t a = 0; a < kernels.size(); ++a)
            for (std::size_t b = a + 1; b < kernels.size(); ++b) {
                const double s = fingerprint_similarity(kernels[a].fingerprint, kernels[b].fingerprint);
                if (s < similar_kernel_threshold) continue;
                if (kernels[a].matches_reference && kernels[b].matches_reference) {
                    ++explained_by_reference;
                    continue;
                }
                pairs.push_back({a, b, s});
            }
        std::stable_sort(pairs.begin(), pairs.end(),
                         [](const Pair& x, const Pair& y) { return x.similarity > y.similarity; });
        std::vector<std::pair<std::size_t, std::size_t>> linked;
        json pair_list = json::array();
        for (const Pair& p : pairs) {
            linked.emplace_back(p.a, p.b);
            if (pair_list.size() >= max_pairs_listed) continue;
            pair_list.push_back({{"students", {kernels[p.a].student, kernels[p.b].student}},
                                 {"similarity", p.similarity},
                                 {"code", kernels[p.a].fingerprint.code}});
        }
        std::string code = codes.empty() ? "none" : codes.size() == 1 ? codes.begin()->first : "sass and ptx";
        listed.push_back({{"exercise", exercise},
                          {"code", code},
                          {"compared", kernels.size()},
                          {"too_little_own_code", too_small},
                          {"without_fingerprint", without_fingerprint},
                          {"both_match_reference", explained_by_reference},
                          {"pairs_found", pairs.size()},
                          {"pairs", pair_list},
                          {"groups", groups_of(linked, kernels)}});
    }
    return {{"threshold", similar_kernel_threshold},
            {"min_own_runs", min_similar_kernel_runs},
            {"note", "for review, never penalised: nothing here changes points"},
            {"exercises", listed}};
}

}  // namespace grading

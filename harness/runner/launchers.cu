// Every launcher of CONTRACT.md, declared weak: a runner is linked with one submission file, which
// defines one of them; the others stay null. A launcher whose signature differs from the contract
// has another mangled name, so it is "not found" rather than called with the wrong arguments.
#include "launchers.hpp"

#include "harness/launcher_signatures.hpp"

#include <stdexcept>

#define EXERCISE(NAME, FAMILY, BLOCK, SUMMARY) LAUNCHER_SIGNATURE_##FAMILY(NAME) __attribute__((weak));
#include "harness/exercises.def"
#undef EXERCISE

namespace harness::runner {
namespace {

struct Entry {
    const char* name;
    bool (*found)();
    void (*call)(const LauncherArgs&);
};

const Entry entries[] = {
#define EXERCISE(NAME, FAMILY, BLOCK, SUMMARY) \
    {#NAME, [] { return &NAME != nullptr; }, [](const LauncherArgs& a) { LAUNCHER_CALL_##FAMILY(NAME, a); }},
#include "harness/exercises.def"
#undef EXERCISE
};

const Entry* find_entry(const std::string& exercise)
{
    for (const auto& entry : entries)
        if (exercise == entry.name) return &entry;
    return nullptr;
}

}  // namespace

bool launcher_found(const std::string& exercise)
{
    const Entry* entry = find_entry(exercise);
    return entry != nullptr && entry->found();
}

void call_launcher(const std::string& exercise, const LauncherArgs& args)
{
    const Entry* entry = find_entry(exercise);
    if (entry == nullptr || !entry->found()) throw std::logic_error("no launcher for " + exercise);
    entry->call(args);
}

}  // namespace harness::runner

// Every launcher of CONTRACT.md, declared weak: a runner is linked with one submission file, which
// defines one of them; the others stay null. A launcher whose signature differs from the contract
// has another mangled name, so it is "not found" rather than called with the wrong arguments.
#include "launchers.hpp"

#include <stdexcept>

#define WEAK __attribute__((weak))
void scan_kogge_stone(const float* in, float* out, int n) WEAK;
void scan_brent_kung(const float* in, float* out, int n) WEAK;
void scan_hierarchical(const float* in, float* out, int n, float* scratch) WEAK;
void reduce_interleaved_divergent(const double* in, double* out, int n, double* scratch) WEAK;
void reduce_interleaved_bank_conflicts(const double* in, double* out, int n, double* scratch) WEAK;
void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch) WEAK;
void reduce_first_add_during_load(const double* in, double* out, int n, double* scratch) WEAK;
void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch) WEAK;
void conv1d_tiled(const float* in, const float* mask, float* out, int n, int mask_width) WEAK;
void conv2d_tiled(const float* in, const float* mask, float* out, int height, int width, int mask_width) WEAK;
#undef WEAK

namespace harness::runner {
namespace {

struct Entry {
    const char* name;
    bool (*found)();
    void (*call)(const LauncherArgs&);
};

#define ARGS_F32 static_cast<const float*>(a.in), static_cast<float*>(a.out)
#define ARGS_F64 static_cast<const double*>(a.in), static_cast<double*>(a.out)
#define ENTRY(NAME, CALL) {#NAME, [] { return &NAME != nullptr; }, [](const LauncherArgs& a) { NAME CALL; }}

const Entry entries[] = {
    ENTRY(scan_kogge_stone, (ARGS_F32, a.n)),
    ENTRY(scan_brent_kung, (ARGS_F32, a.n)),
    ENTRY(scan_hierarchical, (ARGS_F32, a.n, static_cast<float*>(a.scratch))),
    ENTRY(reduce_interleaved_divergent, (ARGS_F64, a.n, static_cast<double*>(a.scratch))),
    ENTRY(reduce_interleaved_bank_conflicts, (ARGS_F64, a.n, static_cast<double*>(a.scratch))),
    ENTRY(reduce_sequential_addressing, (ARGS_F64, a.n, static_cast<double*>(a.scratch))),
    ENTRY(reduce_first_add_during_load, (ARGS_F64, a.n, static_cast<double*>(a.scratch))),
    ENTRY(reduce_unroll_last_warp, (ARGS_F64, a.n, static_cast<double*>(a.scratch))),
    ENTRY(conv1d_tiled, (static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out), a.n, a.mask_width)),
    ENTRY(conv2d_tiled, (static_cast<const float*>(a.in), a.mask, static_cast<float*>(a.out), a.height, a.width,
                         a.mask_width)),
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

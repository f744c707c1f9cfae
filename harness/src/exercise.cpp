#include "harness/exercise.hpp"

namespace harness {

const std::vector<Exercise>& all_exercises()
{
    static const std::vector<Exercise> exercises = {
        {"scan_kogge_stone", Family::section_scan, 1024,
         "Kogge-Stone inclusive scan of each 1024-element section",
         "void scan_kogge_stone(const float* in, float* out, int n)"},
        {"scan_brent_kung", Family::section_scan, 2048,
         "Brent-Kung inclusive scan of each 2048-element section",
         "void scan_brent_kung(const float* in, float* out, int n)"},
        {"scan_hierarchical", Family::full_scan, 2048,
         "inclusive scan of the whole array: block scans, scanned block sums, add back",
         "void scan_hierarchical(const float* in, float* out, int n, float* scratch)"},
        {"reduce_interleaved_divergent", Family::reduction, 256,
         "reduction 1: interleaved addressing, divergent warps",
         "void reduce_interleaved_divergent(const double* in, double* out, int n, double* scratch)"},
        {"reduce_interleaved_bank_conflicts", Family::reduction, 256,
         "reduction 2: interleaved addressing, shared-memory bank conflicts",
         "void reduce_interleaved_bank_conflicts(const double* in, double* out, int n, double* scratch)"},
        {"reduce_sequential_addressing", Family::reduction, 256,
         "reduction 3: sequential addressing",
         "void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch)"},
        {"reduce_first_add_during_load", Family::reduction, 512,
         "reduction 4: first add during the load",
         "void reduce_first_add_during_load(const double* in, double* out, int n, double* scratch)"},
        {"reduce_unroll_last_warp", Family::reduction, 512,
         "reduction 5: reduction 4 with the last warp unrolled",
         "void reduce_unroll_last_warp(const double* in, double* out, int n, double* scratch)"},
        {"conv1d_tiled", Family::conv1d, 1024,
         "tiled 1D convolution with halo cells, constant-memory mask",
         "void conv1d_tiled(const float* in, const float* mask, float* out, int n, int mask_width)"},
        {"conv2d_tiled", Family::conv2d, 32,
         "tiled 2D convolution with halo cells, constant-memory mask",
         "void conv2d_tiled(const float* in, const float* mask, float* out, int height, int width, int mask_width)"},
    };
    return exercises;
}

const Exercise* find_exercise(const std::string& name)
{
    for (const auto& exercise : all_exercises())
        if (exercise.name == name) return &exercise;
    return nullptr;
}

const char* family_name(Family family)
{
    switch (family) {
    case Family::section_scan: return "section_scan";
    case Family::full_scan: return "full_scan";
    case Family::reduction: return "reduction";
    case Family::conv1d: return "conv1d";
    case Family::conv2d: return "conv2d";
    }
    return "?";
}

ElementType element_type(Family family)
{
    return family == Family::reduction ? ElementType::f64 : ElementType::f32;
}

std::size_t element_bytes(ElementType type) { return type == ElementType::f64 ? 8 : 4; }

}  // namespace harness

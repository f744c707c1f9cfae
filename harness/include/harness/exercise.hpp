// The exercises of CONTRACT.md, listed once in harness/exercises.def (which also declares each
// launcher for the runner). Adding an exercise of an existing family is one line there, its folder
// under exercises/ and its reference under reference/.
#pragma once

#include <string>
#include <vector>

namespace harness {

// Exercises of one family share their inputs, golden results, checks and diagnosis.
enum class Family {
    section_scan,   // inclusive scan of independent sections of `section` elements
    full_scan,      // inclusive scan of the whole array (sections of `section` are the first level)
    reduction,      // out[0] = sum of in[0..n-1], doubles
    conv1d,         // 1D convolution, constant-memory mask
    conv2d,         // 2D convolution, constant-memory mask
};

enum class ElementType { f32, f64 };

struct Exercise {
    std::string name;       // also the launcher's name and the submission file's stem
    Family family;
    int section;            // scans: elements per section/block; reductions: elements per block of
                            // the reference; convolutions: the reference's output tile edge
    std::string summary;    // one line for --list
    std::string signature;  // the launcher's declaration in CONTRACT.md
};

const std::vector<Exercise>& all_exercises();
const Exercise* find_exercise(const std::string& name);   // nullptr when unknown

const char* family_name(Family family);
ElementType element_type(Family family);                  // f64 for reductions, else f32
bool uses_scratch(Family family);                         // the launcher takes a scratch buffer
std::size_t element_bytes(ElementType type);

}  // namespace harness

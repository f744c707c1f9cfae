// The exercises of CONTRACT.md, listed once in harness/exercises.def (which also declares each
// launcher for the runner), and the families they belong to (harness/families.def).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace harness {

enum class Family {
#define FAMILY(ID) ID,
#include "harness/families.def"
#undef FAMILY
};
const char* family_name(Family family);

enum class ElementType { f32, f64 };
std::size_t element_bytes(ElementType type);

struct Exercise {
    std::string name;  // also the launcher's name and the submission file's stem
    Family family;
    std::string summary;    // one line for --list
    std::string signature;  // the launcher's declaration in CONTRACT.md
    // What the family's cases and diagnosis need to know of this exercise (0 where it does not apply):
    int scan_section = 0;     // scans: elements each block scans (section scans restart there)
    int reduction_block = 0;  // reductions: elements one block of the reference sums
    int conv_tile = 0;        // convolutions: the reference's output tile edge
};

const std::vector<Exercise>& all_exercises();
const Exercise* find_exercise(const std::string& name);  // nullptr when unknown

}  // namespace harness

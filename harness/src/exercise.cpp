#include "harness/exercise.hpp"
#include "harness/launcher_signatures.hpp"

namespace harness {

const std::vector<Exercise>& all_exercises()
{
    static const std::vector<Exercise> exercises = {
#define EXERCISE(NAME, FAMILY, SECTION, SUMMARY) \
    {#NAME, Family::FAMILY, SECTION, SUMMARY, LAUNCHER_SIGNATURE_TEXT(FAMILY, NAME)},
#include "harness/exercises.def"
#undef EXERCISE
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

bool uses_scratch(Family family) { return family == Family::full_scan || family == Family::reduction; }

std::size_t element_bytes(ElementType type) { return type == ElementType::f64 ? 8 : 4; }

}  // namespace harness

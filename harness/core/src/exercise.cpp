#include "harness/exercise.hpp"

#include "harness/launcher_signatures.hpp"

namespace harness {

const std::vector<Exercise>& all_exercises()
{
    static const std::vector<Exercise> exercises = {
#define EXERCISE(NAME, FAMILY, BLOCK, SUMMARY) \
    Exercise{#NAME, Family::FAMILY, SUMMARY, LAUNCHER_SIGNATURE_TEXT(FAMILY, NAME), BLOCK},
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
    static const char* const names[] = {
#define FAMILY(ID) #ID,
#include "harness/families.def"
#undef FAMILY
    };
    return names[static_cast<int>(family)];
}

std::size_t element_bytes(ElementType type)
{
    return type == ElementType::f64 ? 8 : 4;
}

}  // namespace harness

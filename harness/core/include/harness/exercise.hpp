// The exercises of CONTRACT.md, listed once in harness/exercises.def (which also declares each
// launcher for the runner), and the families they belong to (harness/families.def).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
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
// Calls fn(float{}) or fn(double{}) as `type` says: code written once as a template over the
// element's C++ type, which branches on the type here only.
template <typename Fn>
decltype(auto) with_element_type(ElementType type, Fn&& fn)
{
    if (type == ElementType::f64) return fn(double{});
    return fn(float{});
}
// The unsigned integer of an element's size, for its exact bits.
template <typename Value>
using bits_of = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;

struct Exercise {
    std::string name;  // also the launcher's name and the submission file's stem
    Family family;
    std::string summary;    // one line for --list
    std::string signature;  // the launcher's declaration in CONTRACT.md
    // The one number its family's cases and diagnosis need of this exercise, which the family
    // names and reads (harness/families/<family>/): a scan's section, the elements one block of a
    // reduction sums, a convolution's output tile edge.
    int block = 0;
};

const std::vector<Exercise>& all_exercises();
const Exercise* find_exercise(const std::string& name);  // nullptr when unknown

}  // namespace harness

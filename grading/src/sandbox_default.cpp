// The one object whose compile differs between the course's build and the students' handout (their
// sandbox default), so that the handout's copy reuses every other object of the course's build
// (tests/package/reuse_objects.sh), grading_core's unity batches included.
#include "sandbox_default.hpp"

#include "grader_config.hpp"

namespace grading {

bool sandbox_by_default()
{
    return GRADER_SANDBOX_BY_DEFAULT != 0;
}

}  // namespace grading

#pragma once

namespace grading {

// Whether grade runs submitted code in the bubblewrap sandbox unless told otherwise: true for the
// course's grader, false for the students' handout (grader_config.hpp's GRADER_SANDBOX_BY_DEFAULT).
bool sandbox_by_default();

}  // namespace grading

// Small submission files for the tests of the checks of code the student did not write
// (test_host_calls.cpp, test_initializers.cpp, test_embedded.cpp, test_similarity.cpp), built all
// at once with the real nvcc where it is installed: compiled and checked (check_sources), never
// linked or run, so no GPU is needed.
#pragma once

#include <string>

#include "grading/build.hpp"

namespace foreign_code {

// The result of the source called `name` (foreign_code_sources.cpp lists them), or null with the
// reason given as a doctest MESSAGE when there is no nvcc here.
const grading::BuildResult* result(const std::string& name);

// Every finding of a result, one a line, for failure messages.
std::string findings(const grading::BuildResult& b);

bool any_finding(const grading::BuildResult& b, const std::string& part);

}  // namespace foreign_code

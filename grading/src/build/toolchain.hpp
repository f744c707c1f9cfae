// Where the compiler is: its real path, which the sandbox shows under the toolchain's root.
#pragma once

#include <string>

namespace grading::detail {

// The program's real path (PATH searched as exec does when the name has no slash); empty if it is
// not found.
std::string real_program_path(const std::string& program);

}  // namespace grading::detail

// Symbol names as the build's checks read them (symbols.cpp), shared by the symbol policy and the
// host-call allowlist (host_calls.cpp).
#pragma once

#include <string>

namespace grading::detail {

// "write@@GLIBC_2.2.5" -> "write".
std::string unversioned_name(const std::string& name);
// A C++ name demangled ("_ZdlPvm" -> "operator delete(void*, unsigned long)"); other names as given.
std::string demangled_name(const std::string& name);
// nm's type letter of a reference (U, w, v): a call or use of something defined elsewhere.
bool is_reference(char nm_type);

}  // namespace grading::detail

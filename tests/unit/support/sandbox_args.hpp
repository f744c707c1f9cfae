// For tests that run `grade` itself: the arguments that grade in the real sandbox where this
// machine can run it, else with --no-sandbox, saying why once (the sandbox itself is tested, or
// reported skipped, by test_sandbox).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "harness/sandbox.hpp"

inline const std::vector<std::string>& sandbox_args()
{
    static const std::vector<std::string> args = [] {
        std::string why;
        if (harness::Sandbox::find(why)) return std::vector<std::string>{};
        MESSAGE("no sandbox on this machine, grading with --no-sandbox: " << why);
        return std::vector<std::string>{"--no-sandbox"};
    }();
    return args;
}

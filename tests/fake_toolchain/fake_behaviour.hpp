// What a fake runner does, as the fake toolchain recorded it when it "linked" the runner
// (fake_nvcc.sh): the trailer "FAKE_RUNNER_BEHAVIOUR=<behaviour>;" at the end of the executable.
#pragma once

#include <string>

// The behaviour in this executable's trailer (read from /proc/self/exe), or "correct" when it has
// none (fake_runner itself, as the tests' reference runner).
std::string fake_behaviour();

// The same from an executable's last bytes (exposed for tests).
std::string fake_behaviour_of(const std::string& executable_tail);

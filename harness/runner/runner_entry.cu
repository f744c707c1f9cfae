// The runner's main(), alone in its member of the grader_runner archive: a program that defines a
// main of its own (the reference runner, reference_runner_main.cu) never pulls this member in,
// since the linker takes an archive member only for a symbol still undefined. lib/grader_runner.o
// holds every member, so a submission's runner always has this main and no other.
#include "runner_main.hpp"

int main(int argc, char** argv)
{
    return harness::runner::runner_main(argc, argv);
}

// The reference runner's main(): the runner's (runner_main.hpp) as the grader starts it, or, given
// --bench first, the measurement of bench.hpp. Only the reference runner links this file (the
// grader_bench object library), so its main takes the place of runner_entry.cu's, and a
// submission's runner has no --bench.
#include <cstring>

#include "bench.hpp"
#include "runner_main.hpp"

int main(int argc, char** argv)
{
    if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) return harness::runner::bench_main(argc - 1, argv + 1);
    return harness::runner::runner_main(argc, argv);
}

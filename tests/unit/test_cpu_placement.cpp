// The cores kept for timing (harness/cpu_placement.hpp).
#include <doctest/doctest.h>

#include <numeric>

#include "harness/cpu_placement.hpp"

namespace {

std::vector<int> first(int count)
{
    std::vector<int> cores(static_cast<std::size_t>(count));
    std::iota(cores.begin(), cores.end(), 0);
    return cores;
}

}  // namespace

TEST_CASE("a large machine keeps its four highest cores for timing, the rest for work")
{
    const harness::CpuPlacement p = harness::split_cores(first(16));
    CHECK(p.timing == std::vector<int>{12, 13, 14, 15});
    CHECK(p.work == first(12));
}

TEST_CASE("a machine of 8 to 11 cores keeps three; below 8 none, and all are work")
{
    CHECK(harness::split_cores(first(8)).timing == std::vector<int>{5, 6, 7});
    CHECK(harness::split_cores(first(11)).work.size() == 8);
    CHECK(harness::split_cores(first(7)).timing.empty());
    CHECK(harness::split_cores(first(7)).work == first(7));
    CHECK(harness::split_cores({}).work.empty());
}

TEST_CASE("a sparse affinity (taskset) is split by position, not by number")
{
    const std::vector<int> cores{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22};
    const harness::CpuPlacement p = harness::split_cores(cores);
    CHECK(p.timing == std::vector<int>{16, 18, 20, 22});
    CHECK(p.work.size() == 8);
}

TEST_CASE("a thread moves onto cores it may use and back; an empty or impossible list changes nothing")
{
    const std::vector<int> before = harness::current_cores();
    REQUIRE_FALSE(before.empty());
    CHECK_FALSE(harness::run_on_cores({}));
    CHECK_FALSE(harness::run_on_cores({-1, 100000}));
    CHECK(harness::current_cores() == before);
    CHECK(harness::run_on_cores({before.front()}));
    CHECK(harness::current_cores() == std::vector<int>{before.front()});
    CHECK(harness::run_on_cores(before));
    CHECK(harness::current_cores() == before);
    {
        harness::OnTimingCores on_timing;  // on this machine: the kept cores, or nothing kept
        const std::vector<int> now = harness::current_cores();
        CHECK(now == (harness::cpu_placement().timing.empty() ? before : harness::cpu_placement().timing));
    }
    CHECK(harness::current_cores() == before);
}

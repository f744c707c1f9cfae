// The ordered parallel map (harness/parallel.hpp) that runs the grader's builds, exercises and
// checks: results in the order given whatever order the tasks end in, never more than its width at
// once, exceptions where the result would be, and threads that cannot start leaving their share to
// the others or the caller. No test waits on a clock: tasks wait on each other or on the test.
#include <doctest/doctest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "harness/parallel.hpp"

using namespace harness;

namespace {

// Counts that tasks and the test wait on together.
struct Board {
    std::mutex mutex;
    std::condition_variable changed;
    int running = 0, most_running = 0, started = 0, permits = 0;
    std::vector<bool> finished;

    template <typename Predicate>
    void wait_until(Predicate p)
    {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return p(); });
    }
};

// A starter whose first `successes` threads start and whose later ones fail as a process limit makes them.
ThreadStarter failing_after(int successes, int& tries)
{
    return [successes, &tries](std::function<void()> body) {
        if (tries++ >= successes)
            throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
        return std::thread(std::move(body));
    };
}

}  // namespace

TEST_CASE("parallel_map: results in the order given when the tasks end in the opposite order")
{
    // Task k waits for task k + 1 to finish: the last ends first, the first last.
    constexpr int count = 8;
    std::vector<int> items;
    for (int k = 0; k < count; ++k) items.push_back(k);
    Board board;
    board.finished.assign(count, false);
    std::vector<int> ended;
    const std::vector<int> results = parallel_map(items, count, [&](int k) {
        if (k + 1 < count) board.wait_until([&] { return static_cast<bool>(board.finished[k + 1]); });
        std::lock_guard<std::mutex> lock(board.mutex);
        board.finished[k] = true;
        ended.push_back(k);
        board.changed.notify_all();
        return 10 * k + 3;
    });
    REQUIRE(results.size() == count);
    for (int k = 0; k < count; ++k) CHECK(results[k] == 10 * k + 3);
    CHECK(ended.front() == count - 1);
    CHECK(ended.back() == 0);
}

TEST_CASE("OrderedParallelMap: never more tasks at once than its width, taken in the order given")
{
    constexpr int width = 3, count = 9;
    Board board;
    std::vector<int> began;
    {
        OrderedParallelMap<int> map(width);
        for (int k = 0; k < count; ++k)
            map.push([&board, &began, k] {
                std::unique_lock<std::mutex> lock(board.mutex);
                ++board.running;
                ++board.started;
                began.push_back(k);
                board.most_running = std::max(board.most_running, board.running);
                board.changed.notify_all();
                board.changed.wait(lock, [&] { return board.permits > 0; });
                --board.permits;
                --board.running;
                return k * k + 1;
            });
        // The first `width` are running and waiting: no further one has begun.
        board.wait_until([&] { return board.started >= width; });
        {
            std::lock_guard<std::mutex> lock(board.mutex);
            CHECK(board.started == width);
            CHECK(board.running == width);
            // Taken in the order given (which of the three reaches the board first is the threads' affair).
            CHECK(std::set<int>(began.begin(), began.end()) == std::set<int>{0, 1, 2});
        }
        // One permit at a time: one more task begins for each that ends.
        for (int k = width; k < count; ++k) {
            {
                std::lock_guard<std::mutex> lock(board.mutex);
                ++board.permits;
            }
            board.changed.notify_all();
            board.wait_until([&] { return board.started >= k + 1; });
            std::lock_guard<std::mutex> lock(board.mutex);
            CHECK(board.started == k + 1);
        }
        {
            std::lock_guard<std::mutex> lock(board.mutex);
            board.permits += width;
        }
        board.changed.notify_all();
        for (int k = 0; k < count; ++k) CHECK(map.pop() == k * k + 1);
        CHECK(map.empty());
    }
    CHECK(board.most_running == width);
    REQUIRE(began.size() == count);
    for (int k = width; k < count; ++k) CHECK(began[k] == k);  // one at a time, in the order given
}

TEST_CASE("parallel_map and OrderedParallelMap: a task's exception comes back where its result would")
{
    const std::vector<int> items = {0, 1, 2, 3, 4, 5, 6};
    auto fn = [](int k) {
        if (k == 3) throw std::runtime_error("task 3 failed");
        if (k == 5) throw std::logic_error("task 5 failed");
        return k + 100;
    };
    // The first in the order given, whichever failed first.
    for (const std::size_t width : {std::size_t{1}, std::size_t{2}, std::size_t{7}})
        CHECK_THROWS_WITH_AS(parallel_map(items, width, fn), "task 3 failed", std::runtime_error);

    OrderedParallelMap<int> map(2);
    for (const int k : items) map.push([&fn, k] { return fn(k); });
    CHECK(map.pop() == 100);
    CHECK(map.pop() == 101);
    CHECK(map.pop() == 102);
    CHECK_THROWS_WITH_AS(map.pop(), "task 3 failed", std::runtime_error);
    CHECK(map.pop() == 104);
    CHECK_THROWS_AS(map.pop(), std::logic_error);
    CHECK(map.pop() == 106);
}

TEST_CASE("parallel_map: threads that cannot start leave their share to the others, the caller included")
{
    const std::vector<int> items = {4, 8, 15, 16, 23, 42};
    const std::vector<int> doubled = {8, 16, 30, 32, 46, 84};
    std::mutex mutex;
    std::set<std::thread::id> ran_on;
    auto fn = [&](int v) {
        std::lock_guard<std::mutex> lock(mutex);
        ran_on.insert(std::this_thread::get_id());
        return 2 * v;
    };

    SUBCASE("no thread starts: every task runs on the calling thread")
    {
        int tries = 0;
        CHECK(parallel_map(items, 4, fn, failing_after(0, tries)) == doubled);
        CHECK(tries == static_cast<int>(items.size()));  // each task asked for a thread, and got none
        CHECK(ran_on == std::set<std::thread::id>{std::this_thread::get_id()});
    }
    SUBCASE("one thread starts, the others cannot: it runs every task")
    {
        // The first task holds the one thread until every task is given, so that each later one
        // finds no idle thread and asks for another.
        int tries = 0;
        Board board;
        OrderedParallelMap<int> map(4, failing_after(1, tries));
        map.push([&] {
            board.wait_until([&] { return board.permits > 0; });
            return fn(items[0]);
        });
        for (std::size_t k = 1; k < items.size(); ++k) map.push([&fn, &items, k] { return fn(items[k]); });
        CHECK(tries == static_cast<int>(items.size()));  // one thread started, every later ask failed
        {
            std::lock_guard<std::mutex> lock(board.mutex);
            board.permits = 1;
        }
        board.changed.notify_all();
        std::vector<int> results;
        while (!map.empty()) results.push_back(map.pop());
        CHECK(results == doubled);
        REQUIRE(ran_on.size() == 1);
        CHECK(*ran_on.begin() != std::this_thread::get_id());
    }
}

TEST_CASE("OrderedParallelMap: each task's future, and a width below 1 counts as 1")
{
    OrderedParallelMap<std::string> map(0);
    std::shared_future<std::string> first = map.push([] { return std::string("one"); });
    std::shared_future<std::string> second = map.push([] { return std::string("two"); });
    CHECK(second.get() == "two");
    CHECK(first.get() == "one");
    CHECK(map.size() == 2);
    CHECK(map.oldest_ready());
    CHECK(map.pop() == "one");
    CHECK(map.pop() == "two");
    CHECK_FALSE(map.oldest_ready());
}

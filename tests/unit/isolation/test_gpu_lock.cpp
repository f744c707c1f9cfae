// The GPU lock (harness/gpu_lock.hpp): a timed case's hold excludes every other, untimed holds
// share, and the file cannot be redirected. Holds of one process use descriptors of their own, so
// threads here stand in for gradings (flock treats each open file apart).
#include <doctest/doctest.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/gpu_lock.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using harness::GpuLock;

namespace {

using test_support::fresh_dir;
using test_support::process_state;

// What another grading could take right now, without waiting: "exclusive", "shared" or "none".
std::string free_for(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    std::string answer = "none";
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
        answer = "exclusive";
    else if (::flock(fd, LOCK_SH | LOCK_NB) == 0)
        answer = "shared";
    ::close(fd);
    return answer;
}

// Waits (bounded: the test fails, it never hangs) until `path` is held so that `expected` is what
// another grading could take: "exclusive", "shared" or "none".
bool becomes(const std::string& path, const std::string& expected)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (free_for(path) != expected && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return free_for(path) == expected;
}

}  // namespace

TEST_CASE("a timed case's hold excludes every other hold; untimed holds share")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("modes").string(), "GPU-test"));
    CHECK(free_for(lock.path()) == "exclusive");
    {
        const GpuLock::Hold timed = lock.hold(true);
        CHECK(free_for(lock.path()) == "none");
    }
    CHECK(free_for(lock.path()) == "exclusive");
    {
        const GpuLock::Hold untimed = lock.hold(false);
        CHECK(free_for(lock.path()) == "shared");
        const GpuLock::Hold another = lock.hold(false);  // a second grading's correctness phase
        CHECK(free_for(lock.path()) == "shared");
    }
    CHECK(free_for(lock.path()) == "exclusive");
}

TEST_CASE("a hold waits until the timed hold before it is dropped, and says how long it waited")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("wait").string(), "GPU-test"));
    std::atomic<bool> dropped{false}, asking{false};
    bool admitted_early = true;
    std::chrono::steady_clock::duration waited{};
    GpuLock::Hold timed = lock.hold(true);
    std::thread other([&] {
        asking = true;
        const GpuLock::Hold untimed = lock.hold(false);
        admitted_early = !dropped.load();
        waited = untimed.waited;
    });
    // The 300 ms start once the other thread is asking (on a loaded machine it may start late).
    while (!asking) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    dropped = true;
    timed = {};
    other.join();
    CHECK_FALSE(admitted_early);
    // Between `asking` and the hold's own clock a loaded machine may pause the thread a little.
    CHECK(waited >= std::chrono::milliseconds(200));
}

TEST_CASE("an untimed case that asks after a waiting timed case goes after it")
{
    // Without the queue, flock grants every new shared hold at once, and correctness phases of a
    // few gradings could keep a timing waiting for as long as they keep overlapping.
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("queue").string(), "GPU-test"));
    std::atomic<int> order{0};
    int timed_turn = 0, late_turn = 0;
    GpuLock::Hold early = lock.hold(false);  // a correctness phase under way
    std::thread timed([&] {
        const GpuLock::Hold hold = lock.hold(true);
        timed_turn = ++order;
    });
    // The timed case is in line once it holds the queue.
    REQUIRE(becomes(lock.path() + ".queue", "none"));
    std::thread late([&] {
        const GpuLock::Hold hold = lock.hold(false);
        late_turn = ++order;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(order.load() == 0);  // neither went while the early hold lasts
    early = {};
    timed.join();
    late.join();
    CHECK(timed_turn == 1);
    CHECK(late_turn == 2);
}

TEST_CASE("the lock file: its name from the GPU, readable by all, never through a link")
{
    CHECK(harness::gpu_lock_path("/tmp", "GPU-5e3a/../x y") == "/tmp/pmpp-grader-gpu-GPU-5e3a____x_y.lock");
    CHECK(harness::gpu_lock_path("/tmp", "") == "/tmp/pmpp-grader-gpu-unknown.lock");

    const fs::path dir = fresh_dir("file");
    const GpuLock lock((dir / "made.lock").string());
    CHECK((fs::status(dir / "made.lock").permissions() & fs::perms::others_read) != fs::perms::none);

    std::ofstream(dir / "elsewhere") << "not a lock\n";
    fs::create_symlink(dir / "elsewhere", dir / "planted.lock");
    CHECK_THROWS_AS(GpuLock((dir / "planted.lock").string()), std::runtime_error);
    CHECK_THROWS_AS(GpuLock((dir / "missing-dir" / "x.lock").string()), std::runtime_error);
}

TEST_CASE("checking waits while a batch holds the quiet file, and goes on at once otherwise")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("quiet").string(), "GPU-test"));
    lock.wait_while_quiet();  // nothing timed: returns at once
    const harness::QuietWhileTimed gate(lock);
    gate.wait();

    std::atomic<bool> asking{false}, through{false};
    GpuLock::Hold batch = lock.quiet();
    std::thread checking([&] {
        asking = true;
        gate.wait();
        through = true;
    });
    while (!asking) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(through.load());
    batch = {};
    checking.join();
    CHECK(through.load());

    // Another grading's batch (its own open file) holds checking back just the same.
    const int other = ::open((lock.path() + ".quiet").c_str(), O_RDONLY);
    REQUIRE(other >= 0);
    REQUIRE(::flock(other, LOCK_EX) == 0);
    through = false;
    std::thread checking_again([&] {
        lock.wait_while_quiet();
        through = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(through.load());
    ::close(other);
    checking_again.join();
    CHECK(through.load());
}

TEST_CASE("checking waits for a batch at most so long: a grading stopped mid-batch does not stop the others")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("quiet_limit").string(), "GPU-test"));
    const GpuLock::Hold stuck = lock.quiet();  // never dropped while the wait runs
    const auto started = std::chrono::steady_clock::now();
    lock.wait_while_quiet(std::chrono::milliseconds(200));
    CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(200));
    CHECK(GpuLock::max_quiet_wait >= std::chrono::seconds(16));  // two batches at their cap
}

TEST_CASE("exercise places: as many held at once as there are, over every grading; the next waits for one")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("places").string(), "GPU-test"));
    GpuLock::Hold first = lock.exercise_place(2);
    const GpuLock::Hold second = lock.exercise_place(2);
    std::atomic<bool> asking{false}, placed{false}, dropped{false};
    bool placed_early = true;
    std::thread third([&] {
        asking = true;
        const GpuLock::Hold place = lock.exercise_place(2);
        placed_early = !dropped.load();
        placed = true;
    });
    while (!asking) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(placed.load());
    dropped = true;
    first = {};
    third.join();
    CHECK_FALSE(placed_early);
    // Each place is a file of its own beside the lock, held exclusively.
    CHECK(fs::exists(lock.path() + ".place0"));
    CHECK(fs::exists(lock.path() + ".place1"));
    CHECK_FALSE(fs::exists(lock.path() + ".place2"));
}

TEST_CASE("every place: taken in order once each is free; meanwhile no exercise of any grading gets one")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("every_place").string(), "GPU-test"));
    GpuLock::Hold busy = lock.exercise_place(3);  // another grading's exercise, still running
    std::atomic<bool> asking{false}, taken{false}, dropped{false};
    bool taken_early = true;
    std::vector<GpuLock::Hold> every;
    std::thread regrade([&] {
        asking = true;
        every = lock.every_place(3);
        taken_early = !dropped.load();
        taken = true;
    });
    while (!asking) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(taken.load());  // it waits for the exercise that holds a place
    dropped = true;
    busy = {};
    regrade.join();
    CHECK_FALSE(taken_early);
    CHECK(every.size() == 3);
    // Held: an exercise of any grading waits for a place until they are dropped.
    std::atomic<bool> placed{false}, released{false};
    bool placed_early = true;
    std::thread exercise([&] {
        const GpuLock::Hold place = lock.exercise_place(3);
        placed_early = !released.load();
        placed = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(placed.load());
    released = true;
    every.clear();
    exercise.join();
    CHECK_FALSE(placed_early);
}

// Red team 16b: every_place waited place by place, with blocking flocks, while exercise_place polls
// every place with LOCK_NB: an exercise that asked after a regrade alone (or a calibration taken
// again) began to wait took a free place further up, so the waiting side was overtaken by each new
// exercise in its path (grading/src/grader.cpp grade_again_alone, calibrated). Now every_place holds
// the gate while it takes the places, and exercise_place looks only through the gate: one that
// asks after it goes after it, as hold()'s queue does for a timed case.
TEST_CASE("every place: an exercise that asks while every_place waits goes after it")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("every_place_first").string(), "GPU-test"));
    // Place 0 held by another grading's running exercise: every_place waits on it, holding nothing.
    const std::string place0 = lock.path() + ".place0";
    int busy = ::open(place0.c_str(), O_RDONLY | O_CREAT, 0666);
    REQUIRE(busy >= 0);
    REQUIRE(::flock(busy, LOCK_EX) == 0);
    std::atomic<int> order{0};
    int every_turn = 0, late_turn = 0;
    std::thread regrade([&] {
        const std::vector<GpuLock::Hold> every = lock.every_place(3);
        every_turn = ++order;
    });
    // every_place holds the gate once it waits on place 0 (however long its thread took to start).
    const int gate = ::open((lock.path() + ".gate").c_str(), O_RDONLY);
    REQUIRE(gate >= 0);
    while (::flock(gate, LOCK_SH | LOCK_NB) == 0) {
        ::flock(gate, LOCK_UN);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::close(gate);
    std::thread late([&] {
        const GpuLock::Hold place = lock.exercise_place(3);  // places 1 and 2 are free
        late_turn = ++order;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(order.load() == 0);  // neither went while the running exercise lasts
    ::close(busy);
    regrade.join();
    late.join();
    CHECK(every_turn == 1);
    CHECK(late_turn == 2);
}

TEST_CASE("timed cases go first: one that asks while another is timed goes before an untimed case that asked earlier")
{
    // In a class, every exclusive hold used to empty the GPU of correctness runs by itself; timed
    // cases asked meanwhile now follow each other (an untimed case waits while any is asked for).
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("timed_first").string(), "GPU-test"));
    std::atomic<int> order{0};
    std::atomic<bool> untimed_asking{false};
    int untimed_turn = 0, second_timed_turn = 0;
    GpuLock::Hold first = lock.hold(true);  // a timing under way
    std::thread untimed([&] {
        untimed_asking = true;
        const GpuLock::Hold hold = lock.hold(false);
        untimed_turn = ++order;
    });
    while (!untimed_asking) std::this_thread::yield();
    // Asking before the timed case below whenever this thread gets there first (a loaded machine may
    // delay it: then it asks after, and the order below is the same).
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::thread second_timed([&] {
        const GpuLock::Hold hold = lock.hold(true);
        second_timed_turn = ++order;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    });
    // The second timed case has said it is wanted once it holds the queue (it says so first, then
    // lines up; the untimed case waits for the wish before it lines up).
    REQUIRE(becomes(lock.path() + ".queue", "none"));
    first = {};
    second_timed.join();
    untimed.join();
    CHECK(second_timed_turn == 1);
    CHECK(untimed_turn == 2);
}

TEST_CASE("an untimed case waits while a timed case is asked for, and goes once it is dropped")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("wanted").string(), "GPU-test"));
    CHECK(free_for(lock.path() + ".wanted") == "exclusive");
    GpuLock::Hold timed = lock.hold(true);
    CHECK(free_for(lock.path() + ".wanted") == "shared");  // said while asked for and held
    std::atomic<bool> admitted{false};
    std::thread untimed([&] {
        const GpuLock::Hold hold = lock.hold(false);
        admitted = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(admitted.load());
    timed = {};
    untimed.join();
    CHECK(admitted.load());
    CHECK(free_for(lock.path() + ".wanted") == "exclusive");  // nothing left behind
}

// Red team 18b (e3ab772, <lock>.wanted): what a timed hold says while it is asked for must never
// outlive it, whichever way the hold ends, or every grading's correctness runs wait for good.
namespace {

// A second grading (a forked process) that asks for a timed hold and keeps it until it is killed.
pid_t grading_asking_timed(const GpuLock& lock)
{
    const pid_t child = ::fork();
    if (child == 0) {
        try {
            const GpuLock::Hold timed = lock.hold(true);
            ::pause();
        } catch (...) {
        }
        ::_exit(0);
    }
    return child;
}

}  // namespace

TEST_CASE("a hold that fails after a timed one said it is wanted leaves nothing said")
{
    // The queue cannot be opened (a link planted where it goes): hold() throws after <path>.wanted
    // was taken shared, and must drop it on the way out.
    const fs::path dir = fresh_dir("wanted_exception");
    const GpuLock lock((dir / "gpu.lock").string());
    fs::remove(dir / "gpu.lock.queue");
    std::ofstream(dir / "elsewhere") << "not a lock\n";
    fs::create_symlink(dir / "elsewhere", dir / "gpu.lock.queue");
    CHECK_THROWS_AS(lock.hold(true), std::runtime_error);
    CHECK(free_for(lock.path() + ".wanted") == "exclusive");
    CHECK_THROWS_AS(lock.hold(false), std::runtime_error);
    CHECK(free_for(lock.path() + ".wanted") == "exclusive");
    CHECK(free_for(lock.path()) == "exclusive");
}

TEST_CASE("a timed hold moved or assigned keeps its wish with the GPU, and drops both once")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("wanted_move").string(), "GPU-test"));
    GpuLock::Hold timed = lock.hold(true);
    GpuLock::Hold moved(std::move(timed));
    timed = {};  // the moved-from hold holds nothing: dropping it drops nothing
    CHECK(free_for(lock.path()) == "none");
    CHECK(free_for(lock.path() + ".wanted") == "shared");
    GpuLock::Hold& same = moved;
    moved = std::move(same);  // onto itself: still held
    CHECK(free_for(lock.path() + ".wanted") == "shared");
    GpuLock::Hold assigned;
    assigned = std::move(moved);
    moved = {};
    CHECK(free_for(lock.path()) == "none");
    CHECK(free_for(lock.path() + ".wanted") == "shared");
    assigned = lock.quiet();  // assigned over: the GPU and the wish are dropped, the quiet file held
    CHECK(free_for(lock.path()) == "exclusive");
    CHECK(free_for(lock.path() + ".wanted") == "exclusive");
    CHECK(free_for(lock.path() + ".quiet") == "none");
    assigned = {};
    CHECK(free_for(lock.path() + ".quiet") == "exclusive");
}

TEST_CASE("a grading killed while its timed hold is asked for holds nothing: the next untimed case goes")
{
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("wanted_killed").string(), "GPU-test"));
    GpuLock::Hold running = lock.hold(false);  // a correctness run under way: the timed hold waits
    const pid_t other = grading_asking_timed(lock);
    REQUIRE(other > 0);
    REQUIRE(becomes(lock.path() + ".wanted", "shared"));
    REQUIRE(becomes(lock.path() + ".queue", "none"));  // in line, waiting for the GPU
    REQUIRE(::kill(other, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(other, &status, 0) == other);
    running = {};
    CHECK(free_for(lock.path() + ".wanted") == "exclusive");
    CHECK(free_for(lock.path() + ".queue") == "exclusive");
    const GpuLock::Hold next = lock.hold(false);  // would never return were anything left held
    CHECK(free_for(lock.path()) == "shared");
}

// Red team 18b: a grading stopped (SIGSTOP, Ctrl-Z, a scheduler's suspend) while its timed hold
// waits in line holds <path>.wanted, and every untimed hold of every grading on the GPU waited until
// it was continued (wait_while_wanted had no limit; before e3ab772 such a grading held nothing).
// Fixed: the wait has a limit (GpuLock's wanted_wait), after which the untimed hold lines up.
TEST_CASE("a grading stopped while its timed hold is only asked for does not stop the others' correctness runs")
{
    // The wait for the wish is 30 s in a grading; 1 s here, so that the test is short.
    const GpuLock lock(harness::gpu_lock_path(fresh_dir("wanted_stopped").string(), "GPU-test"),
                       std::chrono::milliseconds(1000));
    // Someone in line before it: the stopped grading waits for the queue, holding only its wish. The
    // queue is taken after the fork (a child would share an open file taken before it, and with it
    // the lock), and the grading asks once it is.
    int go[2];
    REQUIRE(::pipe(go) == 0);
    const pid_t stopped = ::fork();
    if (stopped == 0) {
        char byte = 0;
        if (::read(go[0], &byte, 1) == 1) {
            try {
                const GpuLock::Hold timed = lock.hold(true);
                ::pause();
            } catch (...) {
            }
        }
        ::_exit(0);
    }
    REQUIRE(stopped > 0);
    const int queue = ::open((lock.path() + ".queue").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(queue >= 0);
    REQUIRE(::flock(queue, LOCK_EX) == 0);
    REQUIRE(::write(go[1], "x", 1) == 1);
    ::close(go[0]);
    ::close(go[1]);
    REQUIRE(becomes(lock.path() + ".wanted", "shared"));
    REQUIRE(::kill(stopped, SIGSTOP) == 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (process_state(stopped) != 'T' && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(process_state(stopped) == 'T');
    ::close(queue);  // the one before it is done
    std::atomic<bool> admitted{false};
    std::thread untimed([&] {
        const GpuLock::Hold hold = lock.hold(false);
        admitted = true;
    });
    // Generous: granted at once where nothing is held; a limit on the wait of up to 30 s fits.
    const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!admitted && std::chrono::steady_clock::now() < bound)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(admitted.load());
    ::kill(stopped, SIGKILL);  // its wish dies with it: the untimed case goes, the thread ends
    int status = 0;
    ::waitpid(stopped, &status, 0);
    untimed.join();
}

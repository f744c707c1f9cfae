// Batches, their windows and the two ways a speed case is timed (harness/timing/), end to end on
// the CPU: fake_runner (tests/fake_toolchain) is the timing server, its "device memory" a memfd
// whose descriptor crosses the handles socket exactly as the GPU's does, and the workers here map
// it and write their outputs themselves. No GPU.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/batch_layout.hpp"
#include "harness/exercise.hpp"
#include "harness/timing/paired_timing.hpp"
#include "harness/timing/reference_worker.hpp"
#include "harness/timing/speed_case.hpp"
#include "harness/timing/statistics.hpp"
#include "harness/timing/timing_model.hpp"

using namespace harness::timing;
using namespace std::chrono_literals;

namespace {

harness::SpawnOptions fake_server()
{
    harness::SpawnOptions spawn;
    spawn.argv = {FAKE_RUNNER};
    return spawn;
}

// A worker in this process. Like fake_runner, it "computes" the first 4096 outputs of each call as
// 2 * input + 1 (the fake server checksums that prefix, kept in its memfd at slots of 32 KiB:
// input k at slot 2k, output k at 2k + 1); `sleep` is its kernel's time per call.
struct LocalWorker : harness::TimedWorker {
    enum class Kind { honest, early, idle, failing };
    Kind kind = Kind::honest;
    std::chrono::milliseconds sleep{5};
    static constexpr std::size_t slot = 4096 * 8;
    harness::BatchLayout layout;
    char* memory = nullptr;
    std::size_t bytes = 0;
    std::vector<std::thread> late;
    int batches = 0;
    // Bytes it moves over the "host link" per launched call (a launcher that copies its data to the
    // host and back), added to `link`, which the timing's HostLinkBytes reads.
    std::uint64_t* link = nullptr;
    std::uint64_t link_bytes_per_call = 0;
    // Whether pause() stops it (a runner's processes stopped and held), and how often it was asked.
    bool pausable = false;
    int pauses = 0;
    bool pause(bool paused) override
    {
        pauses += paused ? 1 : 0;
        return paused && pausable;
    }
    bool stayed_paused() override { return pausable; }

    ~LocalWorker() override
    {
        for (auto& t : late) t.join();
        if (memory) ::munmap(memory, bytes);
    }
    void map(int descriptor, const nlohmann::json& layout_json, const nlohmann::json&) override
    {
        layout = harness::layout_from_json(layout_json);
        REQUIRE(harness::fits(layout));
        bytes = 2 * layout.reps.size() * slot;
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0);
        REQUIRE(p != MAP_FAILED);
        memory = static_cast<char*>(p);
    }
    void compute()
    {
        const auto prefix = std::min<std::int64_t>(layout.shape.out_elements, 4096);
        for (std::size_t k = 0; k < layout.reps.size(); ++k) {
            const auto* in = reinterpret_cast<const float*>(memory + 2 * k * slot);
            auto* out = reinterpret_cast<float*>(memory + (2 * k + 1) * slot);
            for (std::int64_t i = 0; i < prefix; ++i) out[i] = 2 * in[i] + 1;
        }
    }
    void run_batch(bool launch) override
    {
        ++batches;
        if (kind == Kind::failing && batches > 4) throw ReferenceFailure("scripted failure");  // two turns
        if (!launch || kind == Kind::idle) return;
        if (link != nullptr) *link += link_bytes_per_call * layout.shape.reps;
        if (kind == Kind::early) {  // says it is done, and writes the outputs 200 ms later
            late.emplace_back([this] {
                std::this_thread::sleep_for(200ms);
                compute();
            });
            return;
        }
        std::this_thread::sleep_for(sleep * layout.shape.reps);
        compute();
    }
    void unmap() override {}
};

BatchSpec scan_spec(int reps)
{
    const harness::Exercise& e = *harness::find_exercise("scan_kogge_stone");
    harness::Case c;
    c.n = 1 << 20;
    c.timed = true;
    return batch_spec(e, c, reps);
}

}  // namespace

TEST_CASE("a batch's window holds the runner's work; the server's checksums are of the outputs as it read them")
{
    TimingServer server(fake_server(), 30s);
    const BatchSpec spec = scan_spec(3);
    LocalWorker honest, again, early;
    honest.sleep = again.sleep = 20ms;
    early.kind = LocalWorker::Kind::early;
    Batches batches(server, spec);
    batches.add("a", honest);
    batches.add("b", again);
    batches.add("c", early);
    const Window a = batches.run("a", 42, true, false);
    const Window b = batches.run("b", 42, true, false);
    const Window c = batches.run("c", 42, true, false);
    const Window other_seed = batches.run("a", 43, true, false);
    CHECK(a.checksums.size() == 3);
    CHECK(a.checksums == b.checksums);           // the same seed, the same correct outputs
    CHECK(a.checksums != other_seed.checksums);  // a fresh seed, fresh inputs
    CHECK(c.checksums != a.checksums);           // an early "done": the outputs were not there yet
    CHECK(a.window_ms >= 60);  // three calls of 20 ms inside the window, however loaded the machine
    CHECK(a.window_ms <= a.grader_ms);
}

TEST_CASE("alone, the reference's launched and empty batches give its time and the fixed cost")
{
    TimingServer server(fake_server(), 30s);
    LocalWorker reference;
    reference.sleep = 10ms;
    TimingPlan plan;
    plan.reps_per_batch = 2;
    plan.rule.min_batches = 4;
    plan.rule.max_batches = 12;
    plan.rule.target_rse = 0.2;
    const AloneTiming alone = time_alone(server, reference, scan_spec(2), plan);
    int launched = 0, empty = 0;
    for (const auto& w : alone.windows) (w.launched ? launched : empty) += !w.warmup;
    CHECK(launched >= 4);
    CHECK(launched == empty);
    const double fixed = fixed_cost_ms(alone.windows);
    const double call = median(call_times(alone.windows, fixed, 2));
    CHECK(fixed > 0);
    CHECK(call > 0);  // its 10 ms "kernel" (what a loaded machine adds to either kind of batch varies)
}

TEST_CASE("in turns: one seed a round for both sides, until the rule is met; a failing reference drops out")
{
    TimingServer server(fake_server(), 30s);
    LocalWorker student, reference;
    // 25 times the reference's: the medians below keep their order however late a loaded machine
    // wakes a sleep (4 ms against 2 ms did not, beside two busy loops: 4.1 against 5.6 ms). The
    // reference's 10 ms a call (2 ms was too little: beside two busy loops its median over its empty
    // batches came out at 0 or less, so the rule was met a round late, session 14), and no cap
    // of wall time: the rounds below are the rule's and the batch cap's, never the clock's.
    student.sleep = 250ms;
    reference.sleep = 10ms;
    TimingPlan plan;
    plan.rule.cap = std::chrono::minutes(10);
    plan.reps_per_batch = 2;
    plan.rule.min_batches = 5;
    plan.rule.max_batches = 8;
    plan.rule.target_rse = 10;  // met as soon as there are enough batches
    SUBCASE("both sides")
    {
        const PairedTiming turns = time_in_turns(server, student, &reference, scan_spec(2), plan, 0);
        CHECK(turns.rounds == 5);
        CHECK_FALSE(turns.capped);
        REQUIRE(turns.student.size() == turns.reference.size());
        for (std::size_t k = 0; k < turns.student.size(); ++k) {
            CHECK(turns.student[k].seed == turns.reference[k].seed);
            CHECK(turns.student[k].checksums == turns.reference[k].checksums);
        }
        // An empty batch of the reference's after each of its turns: the fixed cost beside the submission.
        CHECK(turns.reference_empty.size() == turns.reference.size());
        for (const auto& w : turns.reference_empty) CHECK_FALSE(w.launched);
        CHECK(lower_fixed_cost_ms(1e9, turns) == doctest::Approx(fixed_cost_ms(turns.reference_empty)));
        CHECK(lower_fixed_cost_ms(0.001, turns) == doctest::Approx(0.001));
        CHECK(median(call_times(turns.student, 0, 2)) > median(call_times(turns.reference, 0, 2)));
    }
    SUBCASE("the host link read around every batch: each side's own traffic, none where it cannot be read")
    {
        std::uint64_t link = 1000;  // the machine's counter, not zero at the start
        student.link = reference.link = &link;
        student.link_bytes_per_call = 300'000'000;
        reference.link_bytes_per_call = 2'000;
        const PairedTiming turns = time_in_turns(server, student, &reference, scan_spec(2), plan, 0,
                                                 [&link] { return std::optional<std::uint64_t>(link); });
        for (const auto& w : turns.student) CHECK(w.host_link_bytes == 600'000'000u);
        for (const auto& w : turns.reference) CHECK(w.host_link_bytes == 4'000u);
        for (const auto& w : turns.reference_empty) CHECK(w.host_link_bytes == 0u);
        const PairedTiming unread = time_in_turns(server, student, &reference, scan_spec(2), plan, 0,
                                                  [] { return std::optional<std::uint64_t>(); });
        for (const auto& w : unread.student) CHECK_FALSE(w.host_link_bytes.has_value());
        const PairedTiming unasked = time_in_turns(server, student, &reference, scan_spec(2), plan, 0);
        for (const auto& w : unasked.student) CHECK_FALSE(w.host_link_bytes.has_value());
    }
    SUBCASE("idle windows beside slow student batches, its runner stopped: the machine's traffic over as long")
    {
        // The student's batches (500 ms) are far over 1.5 times the reference's (20 ms): after each
        // counted one, a window as long with no batch, read from the host link, while it is stopped.
        std::uint64_t link = 1000;
        const HostLinkBytes read = [&link] { return std::optional<std::uint64_t>(link); };
        student.pausable = true;
        const PairedTiming turns = time_in_turns(server, student, &reference, scan_spec(2), plan, 0, read);
        CHECK(turns.idle.size() == static_cast<std::size_t>(turns.rounds));
        for (const auto& w : turns.idle) {
            CHECK_FALSE(w.launched);
            CHECK(w.host_link_bytes == 0u);  // nothing moved meanwhile
            CHECK(w.grader_ms >= 400);       // as long as the student's batch (500 ms)
        }
        // A runner that cannot be stopped gives none (a stop that does not hold counts nothing), and
        // is not waited for; nor does a student as fast as the reference, nor a link not counted.
        student.pausable = false;
        const PairedTiming unstoppable = time_in_turns(server, student, &reference, scan_spec(2), plan, 0, read);
        CHECK(unstoppable.idle.empty());
        CHECK(student.pauses > 0);
        // The fast student a tenth of the reference (20 ms against 200 ms a batch): no load makes
        // its batch 1.5 times the reference's (alike, 10 ms each, two busy loops did once).
        student.pausable = true;
        student.sleep = 10ms;
        reference.sleep = 100ms;
        const PairedTiming fast = time_in_turns(server, student, &reference, scan_spec(2), plan, 0, read);
        CHECK(fast.idle.empty());
        reference.sleep = 10ms;
        student.sleep = 250ms;
        const PairedTiming uncounted = time_in_turns(server, student, &reference, scan_spec(2), plan, 0);
        CHECK(uncounted.idle.empty());
    }
    SUBCASE("a reference that fails ends its turns only")
    {
        reference.kind = LocalWorker::Kind::failing;
        const PairedTiming turns = time_in_turns(server, student, &reference, scan_spec(2), plan, 0);
        CHECK(turns.reference_failure.find("scripted failure") != std::string::npos);
        CHECK(turns.reference.size() == 2);
        CHECK(turns.rounds == 5);
    }
    SUBCASE("a cap on the batches ends the timing, and says so")
    {
        plan.rule.target_rse = 1e-9;
        const PairedTiming turns = time_in_turns(server, student, &reference, scan_spec(2), plan, 0);
        CHECK(turns.capped);
        CHECK(turns.rounds == 8);
    }
}

TEST_CASE("a timing server that is gone is the grader's failure, not the submission's")
{
    harness::SpawnOptions spawn;
    spawn.argv = {"/nonexistent/grader_reference_runner"};
    TimingServer server(spawn, 5s);
    CHECK_THROWS_AS(server.calibrate(), TimingServerFailure);
}

namespace {

// A submission's worker that can be paused: says what pause(true) and stayed_paused() answer.
struct PausableWorker : LocalWorker {
    bool stops = true, stays = true;
    bool paused = false;
    int resumed = 0;
    bool pause(bool p) override
    {
        paused = p;
        resumed += !p;
        return p && stops;
    }
    bool stayed_paused() override { return stays; }
    int process_id() const override { return 77; }
};

// fake_runner as a reference runner that runs its batches in 5 ms a repetition in its first
// mapping (alone before the submission) and 20 ms from its second on (beside the submission).
struct SlowerReference {
    std::string path = std::filesystem::temp_directory_path() / ("slower_reference." + std::to_string(::getpid()));
    SlowerReference()
    {
        std::filesystem::copy_file(FAKE_RUNNER, path, std::filesystem::copy_options::overwrite_existing);
        std::ofstream(path, std::ios::app) << "\nFAKE_RUNNER_BEHAVIOUR=slower_from_map:2;\n";
    }
    ~SlowerReference() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("the reference alone after the turns is an anchor only with the runner held stopped and no company around it")
{
    // Red team (issue 19): the reference 4x slower beside the submission than alone before it, so
    // that it is timed alone again after the turns with the runner paused.
    TimingServer server(fake_server(), 30s);
    const SlowerReference binary;
    ReferenceWorker reference(
        [&] {
            harness::SpawnOptions spawn;
            spawn.argv = {binary.path};
            return spawn;
        },
        "scan_kogge_stone", 30s, 30s);
    PausableWorker student;
    student.sleep = 2ms;
    TimingPlan plan;
    plan.reps_per_batch = 2;
    plan.rule.min_batches = 4;
    // Met at the fourth batch on a quiet machine; room to go on where a loaded one made the median
    // of the reference's 5 ms calls alone come out at 0 or less (its empty batches' fixed cost
    // as long as its launched ones: capped at 4, the timing alone was "disturbed", beside two busy
    // loops, session 14).
    plan.rule.max_batches = 16;
    plan.rule.target_rse = 10;
    bool company_while_paused = false, company_throughout = false;
    int asked = 0;
    bool runner_busy = false;
    GpuCompany company = [&](std::optional<std::chrono::system_clock::time_point>, int stopped_runner) {
        ++asked;
        if (stopped_runner != 0) return stopped_runner == student.process_id() && runner_busy
                                            ? std::string("pid 77 (runner) of the stopped runner, busy")
                                            : std::string();
        const bool busy = company_throughout || (company_while_paused && student.paused);
        return busy ? std::string("pid 4242 (python3)") : std::string();
    };
    SpeedCaseTimer timer(server, &reference, nullptr, company, plan);
    const harness::Exercise& e = *harness::find_exercise("scan_kogge_stone");
    harness::Case c;
    c.n = 1 << 20;
    c.timed = true;
    timer.time_alone(e, c);
    REQUIRE_FALSE(timer.alone_disturbed(c.index));
    std::chrono::steady_clock::duration waited{};
    SUBCASE("held stopped, no company: timed")
    {
        const CaseTiming timing = timer.time_in_turns(e, c, student, waited);
        CHECK_FALSE(timing.alone_after.windows.empty());
        CHECK(student.resumed == 1);
    }
    SUBCASE("a runner that could not be stopped: no anchor, and continued all the same")
    {
        student.stops = false;
        const CaseTiming timing = timer.time_in_turns(e, c, student, waited);
        CHECK(timing.alone_after.windows.empty());
        CHECK(student.resumed == 1);
        CHECK_FALSE(timing.turns.empty());
    }
    SUBCASE("a runner that ran while the reference was timed (continued by one of its processes): no anchor")
    {
        student.stays = false;
        CHECK(timer.time_in_turns(e, c, student, waited).alone_after.windows.empty());
    }
    SUBCASE("company on the GPU while the reference was timed alone after the turns: no anchor")
    {
        company_while_paused = true;
        const int before = asked;
        const CaseTiming timing = timer.time_in_turns(e, c, student, waited);
        CHECK(timing.alone_after.windows.empty());
        CHECK(asked - before >= 4);  // around the turns and around the anchor
        CHECK(timing.other_processes.empty());  // the turns had none
    }
    SUBCASE("the stopped runner's GPU work queued before the stop went on during the anchor: no anchor")
    {
        runner_busy = true;
        CHECK(timer.time_in_turns(e, c, student, waited).alone_after.windows.empty());
    }
    SUBCASE("the stopped runner busy, beside a neighbour busy throughout: no anchor all the same")
    {
        runner_busy = company_throughout = true;
        CHECK(timer.time_in_turns(e, c, student, waited).alone_after.windows.empty());
    }
    SUBCASE("company during the turns and around the anchor alike (a neighbour's grading): timed")
    {
        company_throughout = true;
        const CaseTiming timing = timer.time_in_turns(e, c, student, waited);
        CHECK_FALSE(timing.other_processes.empty());
        CHECK_FALSE(timing.alone_after.windows.empty());
    }
}

namespace {

// A program path that holds nothing until `arrive()` copies fake_runner there: a timing server or
// reference runner that cannot start at first (as out of GPU memory, where another grading's runner
// holds it: red team 16) and can later.
struct LateProgram {
    std::string path = std::filesystem::temp_directory_path() / ("late_program." + std::to_string(::getpid()));
    LateProgram() { std::filesystem::remove(path); }
    ~LateProgram() { std::filesystem::remove(path); }
    void arrive() const { std::filesystem::copy_file(FAKE_RUNNER, path); }
    harness::SpawnOptions spawn() const
    {
        harness::SpawnOptions options;
        options.argv = {path};
        return options;
    }
};

TimingPlan short_plan()
{
    TimingPlan plan;
    plan.reps_per_batch = 2;
    plan.rule.min_batches = 4;
    plan.rule.max_batches = 16;
    plan.rule.target_rse = 10;
    return plan;
}

}  // namespace

// Red team 16: SpeedCaseTimer::time_alone kept a CaseTiming per case and set `failure` and
// `alone_failure` only when it failed; a later timing alone that succeeded never cleared them, so
// time_in_turns returned the old failure at once. In the grader this makes a
// timing server that ran out of GPU memory once (beside another grading's runner) final:
// - a reference timed alone at the grading's start beside a neighbour's hog: every turn of that
//   speed case, the regrade alone included, returns the failure (the case is "not timed", no
//   speed points), even after the neighbour is gone;
// - check_host_link_again's link_timer->time_alone that failed beside the submission's own other
//   exercise (a hog in another of its runners; the blame asks only about the timed runner, and
//   only in the turns): graded again alone, the check times the reference alone again, succeeds,
//   and still gets the old failure, so computes_on_gpu stays "not checked" for a launcher that
//   computes on the host (grader.cpp: `if (timing_failed) return;`).
// Fixed: each timing alone starts afresh, and the grader's regrade alone times again first a
// reference whose timing alone failed.
TEST_CASE("a timing alone that succeeds after the timing server failed counts: the old failure is not kept")
{
    const LateProgram program;
    TimingServer server(program.spawn(), 5s);
    ReferenceWorker reference([] { return fake_server(); }, "scan_kogge_stone", 30s, 30s);
    SpeedCaseTimer timer(server, &reference, nullptr, {}, short_plan());
    const harness::Exercise& e = *harness::find_exercise("scan_kogge_stone");
    harness::Case c;
    c.n = 1 << 20;
    c.timed = true;
    timer.time_alone(e, c);  // the timing server cannot start: the grader's failure
    program.arrive();
    timer.time_alone(e, c);  // it can now: the reference is timed alone
    LocalWorker student;
    std::chrono::steady_clock::duration waited{};
    const CaseTiming timing = timer.time_in_turns(e, c, student, waited);
    REQUIRE_FALSE(timing.alone.windows.empty());  // the second timing alone took place
    CHECK_MESSAGE(timing.failure.empty(), timing.failure);
    CHECK_MESSAGE(timing.alone_failure.empty(), timing.alone_failure);
    CHECK_FALSE(timing.turns.empty());
}

// Red team 16: a reference runner that could not start once (its
// context out of GPU memory at the grading's start, while another grading's runner held it:
// time_the_references_alone starts every reference runner before any place is taken) keeps that
// failure for the whole grading (ReferenceWorker::failure_ is never cleared), the regrade alone
// included. The timing server's failure is the only one grade_exercise grades again alone
// (timing_failed); this one is not, so the speed case has no reference time and scores no speed
// points (judge.cpp: "no reference timing in this run").
// Fixed: a timing alone has the reference worker retry() first.
TEST_CASE("a reference runner that could not start at first is started again when timed alone later")
{
    const LateProgram program;
    TimingServer server(fake_server(), 30s);
    ReferenceWorker reference([&program] { return program.spawn(); }, "scan_kogge_stone", 5s, 30s);
    reference.spawn_early();
    reference.await_start();
    REQUIRE_FALSE(reference.failure().empty());
    SpeedCaseTimer timer(server, &reference, nullptr, {}, short_plan());
    const harness::Exercise& e = *harness::find_exercise("scan_kogge_stone");
    harness::Case c;
    c.n = 1 << 20;
    c.timed = true;
    program.arrive();
    timer.time_alone(e, c);
    LocalWorker student;
    std::chrono::steady_clock::duration waited{};
    const CaseTiming timing = timer.time_in_turns(e, c, student, waited);
    CHECK_MESSAGE(timing.alone_failure.empty(), timing.alone_failure);
    REQUIRE_FALSE(timing.turns.empty());
    CHECK_FALSE(timing.turns.front().reference.empty());  // the reference took its turns
}

#include "harness/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <sched.h>

namespace harness {
namespace {

// More threads than this gain little on memory-bound loops and would crowd the other graders'
// threads (grade judges several exercises at once).
constexpr int max_threads = 16;

std::atomic<int> thread_limit{0};
std::atomic<const ChunkGate*> chunk_gate{nullptr};

// True on a thread while it runs chunks: a parallel_for inside a chunk stays on that thread
// instead of starting threads of its own.
thread_local bool inside_chunk = false;

int machine_threads()
{
    // The CPUs this process may use (taskset, cgroup cpusets), not all the machine has.
    cpu_set_t cpus;
    int count = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
    if (count <= 0) count = static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(count, 1, max_threads);
}

}  // namespace

int parallel_threads()
{
    static const int machine = machine_threads();
    const int limit = thread_limit.load();
    return limit > 0 ? limit : machine;
}

void set_thread_limit(int threads)
{
    thread_limit.store(std::max(threads, 0));
}

void set_chunk_gate(const ChunkGate* gate)
{
    chunk_gate.store(gate);
}

void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn)
{
    grain = std::max<std::int64_t>(grain, 1);
    const std::int64_t chunks = chunk_count(begin, end, grain);
    auto run_chunk = [&](std::int64_t k) {
        if (const ChunkGate* gate = chunk_gate.load()) gate->wait();
        fn(begin + k * grain, std::min(end, begin + (k + 1) * grain));
    };
    const std::int64_t threads = inside_chunk ? 1 : std::min<std::int64_t>(parallel_threads(), chunks);
    if (threads <= 1) {
        for (std::int64_t k = 0; k < chunks; ++k) run_chunk(k);
        return;
    }

    // Threads take the next chunk until none is left, so a slow thread holds up no one.
    std::atomic<std::int64_t> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    auto work = [&] {
        const bool was_inside = inside_chunk;
        inside_chunk = true;
        for (std::int64_t k; (k = next.fetch_add(1)) < chunks;) {
            try {
                run_chunk(k);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                next.store(chunks);  // the others stop after their current chunk
            }
        }
        inside_chunk = was_inside;
    };
    std::vector<std::thread> helpers;
    helpers.reserve(static_cast<std::size_t>(threads - 1));
    for (std::int64_t t = 1; t < threads; ++t) {
        try {
            helpers.emplace_back(work);
        } catch (...) {
            break;  // out of threads (a sandbox's process limit) or memory: fewer helpers do it
        }
    }
    work();
    for (auto& helper : helpers) helper.join();
    if (error) std::rethrow_exception(error);
}

std::thread start_thread(std::function<void()> body)
{
    return std::thread(std::move(body));
}

namespace detail {

struct TaskThreads::State {
    std::size_t width;
    ThreadStarter start;
    std::mutex mutex;
    std::condition_variable task_waiting;
    std::deque<std::function<void()>> tasks;  // given, not begun
    std::vector<std::thread> threads;
    std::size_t idle = 0;  // threads waiting for a task
    bool stopping = false;

    void work()
    {
        std::unique_lock<std::mutex> lock(mutex);
        for (;;) {
            ++idle;
            task_waiting.wait(lock, [&] { return stopping || !tasks.empty(); });
            --idle;
            if (stopping) return;
            std::function<void()> task = std::move(tasks.front());
            tasks.pop_front();
            lock.unlock();
            task();
            task = nullptr;  // what it holds goes before the next wait
            lock.lock();
        }
    }
};

TaskThreads::TaskThreads(std::size_t width, ThreadStarter start) : state_(std::make_shared<State>())
{
    state_->width = std::max<std::size_t>(width, 1);
    state_->start = std::move(start);
}

TaskThreads::~TaskThreads()
{
    std::vector<std::thread> threads;
    std::deque<std::function<void()>> dropped;
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->stopping = true;
        dropped.swap(state_->tasks);
        threads.swap(state_->threads);
    }
    state_->task_waiting.notify_all();
    for (auto& thread : threads) thread.join();
}

void TaskThreads::run(std::function<void()> task)
{
    State& s = *state_;
    std::unique_lock<std::mutex> lock(s.mutex);
    // A thread more while the tasks waiting outnumber the idle threads, up to the width.
    if (s.tasks.size() + 1 > s.idle && s.threads.size() < s.width) {
        try {
            s.threads.push_back(s.start([&s] { s.work(); }));
        } catch (...) {
            // Out of threads (a sandbox's process limit) or memory: those running take it, or the caller.
        }
    }
    if (s.threads.empty()) {
        lock.unlock();
        task();
        return;
    }
    s.tasks.push_back(std::move(task));
    lock.unlock();
    s.task_waiting.notify_one();
}

}  // namespace detail

}  // namespace harness

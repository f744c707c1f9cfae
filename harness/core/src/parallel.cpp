#include "harness/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

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

namespace large_blocks {
namespace {

using Clock = std::chrono::steady_clock;

// Sizes are rounded up to 2 MiB, so that arrays of nearly the same size share blocks.
constexpr std::size_t block_unit = std::size_t{2} << 20;

// What the cache may hold: an eighth of the machine's memory, at most 4 GiB (a grading's largest
// case holds about that much at once; `grade class` runs several gradings side by side).
std::size_t cache_cap()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    const std::size_t machine = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                                                      : std::size_t{8} << 30;
    return std::min(machine / 8, std::size_t{4} << 30);
}

std::size_t rounded(std::size_t bytes)
{
    return (bytes + block_unit - 1) / block_unit * block_unit;
}

// Not inherited by a fork: the grader forks its sandboxes' children (which exec at once, and
// touch no array in between) while it holds gigabytes of blocks, cached ones included; the fork
// would copy their page tables, and every write to them until the exec would copy a page.
void not_forked(void* block, std::size_t bytes)
{
    ::madvise(block, bytes, MADV_DONTFORK);
}

// A fresh mapping of `bytes`, or nullptr. (Not madvise(MADV_HUGEPAGE): huge pages fault less
// often but zero the same bytes, and on a virtual machine whose host had not backed them yet
// the ten exercises' fake grading took more system time with them than without.)
void* map_fresh(std::size_t bytes)
{
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    not_forked(p, bytes);
    return p;
}

struct Cached {
    void* block;
    std::size_t bytes;
    Clock::time_point freed;
};

struct Pool {
    std::mutex mutex;
    std::unordered_map<void*, std::size_t> live;  // block -> its mapping's bytes
    std::vector<Cached> cached;
    std::size_t cached_bytes = 0;
    const std::size_t cap = cache_cap();
    double idle_seconds = cached_block_seconds;
    Counts counts;

    // Takes the cache's blocks idle too long (or all) out of it, for unmapping outside the lock.
    void expire(Clock::time_point now, bool all, std::vector<Cached>& out)
    {
        const auto idle = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(idle_seconds));
        for (std::size_t i = 0; i < cached.size();) {
            if (all || now - cached[i].freed > idle) {
                cached_bytes -= cached[i].bytes;
                out.push_back(cached[i]);
                cached[i] = cached.back();
                cached.pop_back();
            } else {
                ++i;
            }
        }
    }
};

Pool& pool()
{
    static Pool* p = new Pool;  // never destroyed: vectors may be freed during static destruction
    return *p;
}

void unmap(const std::vector<Cached>& blocks)
{
    for (const Cached& c : blocks) ::munmap(c.block, c.bytes);
}

}  // namespace

void* allocate(std::size_t bytes)
{
    const std::size_t want = rounded(bytes);
    Pool& p = pool();
    std::vector<Cached> expired;
    void* block = nullptr;
    {
        std::lock_guard<std::mutex> lock(p.mutex);
        p.expire(Clock::now(), false, expired);
        // The smallest cached block that holds it, if it is no more than twice as large; else the
        // largest one smaller, grown (its pages move with it, only the rest is new).
        std::size_t fit = p.cached.size(), grow = p.cached.size();
        for (std::size_t i = 0; i < p.cached.size(); ++i) {
            const std::size_t b = p.cached[i].bytes;
            if (b >= want && b <= 2 * want && (fit == p.cached.size() || b < p.cached[fit].bytes)) fit = i;
            if (b < want && (grow == p.cached.size() || b > p.cached[grow].bytes)) grow = i;
        }
        const std::size_t take = fit < p.cached.size() ? fit : grow;
        if (take < p.cached.size()) {
            Cached c = p.cached[take];
            p.cached[take] = p.cached.back();
            p.cached.pop_back();
            p.cached_bytes -= c.bytes;
            if (c.bytes >= want) {
                block = c.block;
                p.live[block] = c.bytes;
                ++p.counts.reused;
            } else {
                void* moved = ::mremap(c.block, c.bytes, want, MREMAP_MAYMOVE);
                if (moved != MAP_FAILED) {
                    not_forked(moved, want);
                    block = moved;
                    p.live[block] = want;
                    ++p.counts.grown;
                } else {
                    expired.push_back(c);
                }
            }
        }
    }
    unmap(expired);
    if (block != nullptr) return block;
    block = map_fresh(want);
    if (block == nullptr) {  // the cache's memory may be what is missing
        release_cached();
        block = map_fresh(want);
        if (block == nullptr) throw std::bad_alloc();
    }
    std::lock_guard<std::mutex> lock(p.mutex);
    p.live[block] = want;
    ++p.counts.mapped;
    return block;
}

void deallocate(void* block, std::size_t) noexcept
{
    if (block == nullptr) return;
    Pool& p = pool();
    std::vector<Cached> expired;
    {
        std::lock_guard<std::mutex> lock(p.mutex);
        const auto found = p.live.find(block);
        if (found == p.live.end()) return;  // not one of ours: cannot happen
        const Cached c{block, found->second, Clock::now()};
        p.live.erase(found);
        p.expire(c.freed, false, expired);
        if (c.bytes > p.cap) {
            expired.push_back(c);
        } else {
            try {
                p.cached.push_back(c);
                p.cached_bytes += c.bytes;
            } catch (...) {
                expired.push_back(c);
            }
            // Over the cap: the oldest blocks go first.
            while (p.cached_bytes > p.cap) {
                const auto oldest = std::min_element(p.cached.begin(), p.cached.end(),
                                                     [](const Cached& a, const Cached& b) { return a.freed < b.freed; });
                p.cached_bytes -= oldest->bytes;
                expired.push_back(*oldest);
                *oldest = p.cached.back();
                p.cached.pop_back();
            }
        }
    }
    unmap(expired);
}

std::size_t cached_bytes()
{
    std::lock_guard<std::mutex> lock(pool().mutex);
    return pool().cached_bytes;
}

void release_cached()
{
    std::vector<Cached> all;
    {
        std::lock_guard<std::mutex> lock(pool().mutex);
        pool().expire(Clock::now(), true, all);
    }
    unmap(all);
}

void set_idle_seconds(double seconds)
{
    std::lock_guard<std::mutex> lock(pool().mutex);
    pool().idle_seconds = seconds;
}

Counts counts()
{
    std::lock_guard<std::mutex> lock(pool().mutex);
    return pool().counts;
}

}  // namespace large_blocks

}  // namespace harness

// Work on large arrays (case inputs, golden results, checks) spread over the machine's cores, and
// the grader's tasks (builds, exercises, checks) run side by side with their results in order.
//
// Results must not depend on the number of threads: a range is always cut into the same chunks
// (`grain` elements each from `begin`, the last one shorter), whatever the number of threads, and
// which thread runs a chunk does not change what the chunk computes. Per-chunk results that are
// combined in chunk order (parallel_chunks) are therefore the same on every machine.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace harness {

// How many threads parallel_for uses: the CPUs this process may run on, at most 16, or what
// set_thread_limit set.
int parallel_threads();
// For tests: use exactly this many threads from now on (0: back to the machine's count).
void set_thread_limit(int threads);

// What every chunk of every parallel_for in this process waits on before it starts, on the thread
// that runs it. The grader's gate holds its checking back while a speed case is timed, so that the
// runners' launches and the grader's clock have the cores to themselves (harness/gpu_lock.hpp).
class ChunkGate {
public:
    virtual ~ChunkGate() = default;
    virtual void wait() const = 0;
};
// Null: no gate. The gate must outlive every parallel_for that may still call it.
void set_chunk_gate(const ChunkGate* gate);

// Calls fn(chunk_begin, chunk_end) once for each chunk of [begin, end) (a grain below 1 counts as
// 1), each once the chunk gate lets it start, and returns when all have returned. If one throws,
// chunks not yet begun are skipped and the exception is rethrown here. A range of one chunk runs on
// the calling thread, and so does a parallel_for inside a chunk that runs beside others; threads
// that cannot be started (a sandbox's process limit) leave their share to the others, the calling
// thread included.
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);

inline std::int64_t chunk_count(std::int64_t begin, std::int64_t end, std::int64_t grain)
{
    return end <= begin ? 0 : (end - begin + grain - 1) / grain;
}

// fn(chunk_begin, chunk_end) -> Result for every chunk, in chunk order.
template <typename Result, typename Fn>
std::vector<Result> parallel_chunks(std::int64_t begin, std::int64_t end, std::int64_t grain, Fn fn)
{
    grain = std::max<std::int64_t>(grain, 1);
    std::vector<Result> results(static_cast<std::size_t>(chunk_count(begin, end, grain)));
    parallel_for(begin, end, grain, [&](std::int64_t first, std::int64_t last) {
        results[static_cast<std::size_t>((first - begin) / grain)] = fn(first, last);
    });
    return results;
}

// The chunk size for element-wise work of a few nanoseconds an element: long enough that handing
// out a chunk costs nothing in comparison, short enough that 16 threads share out a million
// elements evenly.
constexpr std::int64_t element_grain = std::int64_t{1} << 16;

// How a parallel map starts each of its threads: std::thread's constructor, which throws where
// the process may start no more (a sandbox's process limit). Tests give one that fails.
using ThreadStarter = std::function<std::thread(std::function<void()>)>;
std::thread start_thread(std::function<void()> body);

namespace detail {
// At most `width` threads of its own, started as tasks wait for one, each running the waiting tasks
// in the order given. A task given while no thread runs and none can be started runs at once on
// the calling thread: threads that cannot start leave their share to the others, the caller
// included. Tasks must not throw (OrderedParallelMap keeps their exceptions in their futures).
class TaskThreads {
public:
    TaskThreads(std::size_t width, ThreadStarter start);
    // Tasks not begun are dropped; returns once the running ones have returned.
    ~TaskThreads();
    TaskThreads(const TaskThreads&) = delete;
    TaskThreads& operator=(const TaskThreads&) = delete;
    void run(std::function<void()> task);

private:
    struct State;
    std::shared_ptr<State> state_;
};
}  // namespace detail

// The ordered parallel map: tasks given one by one (push) run on at most `width` threads, taken in
// the order given, and their results come back in that order (pop), or through the future push
// returns. A task's exception comes back where its result would. A width below 1 counts as 1.
// Destroying the map drops the tasks not begun (their futures hold a broken promise) and waits for
// those running, so that no task outlives what it refers to.
//
// The grader's builds, exercises and case checks all run through it: parallel_map below for a
// whole list at once, push and pop for a stream (checks of cases as the runner settles them).
template <typename Result>
class OrderedParallelMap {
public:
    explicit OrderedParallelMap(std::size_t width, ThreadStarter start = start_thread)
        : threads_(width, std::move(start))
    {
    }
    template <typename Fn>
    std::shared_future<Result> push(Fn fn)
    {
        auto task = std::make_shared<std::packaged_task<Result()>>(std::move(fn));
        std::shared_future<Result> result = task->get_future().share();
        results_.push_back(result);
        threads_.run([task] { (*task)(); });
        return result;
    }
    // Results not yet taken.
    std::size_t size() const { return results_.size(); }
    bool empty() const { return results_.empty(); }
    // Whether the oldest result not taken is there (pop would not wait).
    bool oldest_ready() const
    {
        return !results_.empty() && results_.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    }
    // The oldest result not taken, once its task has returned; its exception rethrown.
    Result pop()
    {
        std::shared_future<Result> oldest = std::move(results_.front());
        results_.pop_front();
        return oldest.get();
    }

private:
    std::deque<std::shared_future<Result>> results_;
    detail::TaskThreads threads_;  // last: its threads stop before anything they may use goes
};

// fn(item) for every item, on at most `width` threads, taken in the order of `items`; the results in
// that order. If some throw, the first of them in that order is rethrown here, once the items
// begun have returned (those not begun are skipped).
template <typename Item, typename Fn>
auto parallel_map(const std::vector<Item>& items, std::size_t width, Fn fn, ThreadStarter start = start_thread)
    -> std::vector<std::invoke_result_t<Fn&, const Item&>>
{
    using Result = std::invoke_result_t<Fn&, const Item&>;
    OrderedParallelMap<Result> map(width, std::move(start));
    for (const Item& item : items) map.push([&fn, &item] { return fn(item); });
    std::vector<Result> results;
    results.reserve(items.size());
    while (!map.empty()) results.push_back(map.pop());
    return results;
}

// The memory of large arrays (inputs, golden results, outputs read from a runner), reused within
// a process instead of handed back to the kernel at once (issue 21). A fresh block of a gigabyte
// costs the kernel a fault and a page of zeros per 4 KiB when it is first written, and unmapping
// when it is freed: most of a grading's system time, paid again for every case. Blocks of
// `large_block_bytes` or more are mapped on their own and kept when freed, for the next large
// array of the process (the smallest cached block that holds it, if at most twice its size; else
// the largest smaller one, grown in place, its pages kept), up to a cap (an eighth of the
// machine's memory, at most 4 GiB); a block unused for `cached_block_seconds` goes back to the
// kernel at the next large allocation or release; a forked child does not inherit the blocks (it
// must exec before it touches an array). Smaller blocks come from operator new. A
// reused block holds what its last array left there: only for arrays whose every element is
// written before it is read (UninitializedVector), and it never leaves the process.
namespace large_blocks {
constexpr std::size_t large_block_bytes = std::size_t{4} << 20;
constexpr double cached_block_seconds = 5.0;
// Throws std::bad_alloc where no memory is left (the cache emptied first).
void* allocate(std::size_t bytes);
void deallocate(void* block, std::size_t bytes) noexcept;
// What the cache holds now, and every cached block back to the kernel (tests, and a process about
// to wait long with nothing to reuse).
std::size_t cached_bytes();
void release_cached();
// For tests: how long a cached block may stay unused (cached_block_seconds unless set).
void set_idle_seconds(double seconds);
// How many large blocks were mapped fresh, and how many were reused (tests).
struct Counts {
    std::size_t mapped = 0, reused = 0, grown = 0;
};
Counts counts();
}  // namespace large_blocks

// An allocator whose resize(n) leaves numbers uninitialized instead of zeroing them. A vector of
// a gigabyte that parallel_for then fills is written only once, and its memory pages are first
// touched by the threads that fill them, not by one thread beforehand. Large arrays take their
// memory from large_blocks (above).
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    DefaultInitAllocator() = default;
    template <typename U>
    DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept
    {
    }
    T* allocate(std::size_t n)
    {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < large_blocks::large_block_bytes) return std::allocator<T>::allocate(n);
        return static_cast<T*>(large_blocks::allocate(bytes));
    }
    void deallocate(T* p, std::size_t n) noexcept
    {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < large_blocks::large_block_bytes)
            std::allocator<T>::deallocate(p, n);
        else
            large_blocks::deallocate(p, bytes);
    }
    template <typename U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>)
    {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args)
    {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

// A std::vector whose resize leaves new numbers uninitialized (every element must be written).
template <typename T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;
// Raw bytes of that kind: a message's blob as the channel reads it in, a runner's output as it
// reads it back (a gigabyte is written once, by the read, not zeroed first).
using Bytes = UninitializedVector<std::uint8_t>;

}  // namespace harness

// Work on large arrays (case inputs, golden results, checks) spread over the machine's cores.
//
// Results must not depend on the number of threads: a range is always cut into the same chunks
// (`grain` elements each from `begin`, the last one shorter), whatever the number of threads, and
// which thread runs a chunk does not change what the chunk computes. Per-chunk results that are
// combined in chunk order (parallel_chunks) are therefore the same on every machine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
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

// An allocator whose resize(n) leaves numbers uninitialized instead of zeroing them. A vector of
// a gigabyte that parallel_for then fills is written only once, and its memory pages are first
// touched by the threads that fill them, not by one thread beforehand.
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

}  // namespace harness

// parallel_for and what is built on it (harness/parallel.hpp): the same chunks on any number of
// threads, errors that reach the caller, nested calls, the seeded streams' skip-ahead and the
// checksum of large buffers in blocks.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "harness/data.hpp"
#include "harness/parallel.hpp"
#include "harness/timed_data.hpp"
#include "support/thread_limit.hpp"

using namespace harness;

namespace {

// The chunks parallel_for hands out, in the order of their starts.
std::vector<std::pair<std::int64_t, std::int64_t>> chunks_of(std::int64_t begin, std::int64_t end, std::int64_t grain)
{
    std::mutex mutex;
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    parallel_for(begin, end, grain, [&](std::int64_t first, std::int64_t last) {
        std::lock_guard<std::mutex> lock(mutex);
        CHECK(seen.insert({first, last}).second);
    });
    return {seen.begin(), seen.end()};
}

}  // namespace

TEST_CASE("parallel_for cuts a range into the same chunks on any number of threads")
{
    for (int threads : {1, 2, 3, many_threads, 40}) {
        CAPTURE(threads);
        const auto chunks = with_threads(threads, [] { return chunks_of(5, 1000, 64); });
        REQUIRE(chunks.size() == 16);  // 995 elements: 15 chunks of 64 and one of 35
        for (std::size_t k = 0; k < chunks.size(); ++k) {
            CHECK(chunks[k].first == 5 + 64 * static_cast<std::int64_t>(k));
            CHECK(chunks[k].second == std::min<std::int64_t>(1000, chunks[k].first + 64));
        }
        CHECK(with_threads(threads, [] { return chunks_of(0, 64, 64); }).size() == 1);
        CHECK(with_threads(threads, [] { return chunks_of(7, 7, 64); }).empty());
        CHECK(with_threads(threads, [] { return chunks_of(0, 3, 0); }).size() == 3);  // a grain of at least 1
    }
}

TEST_CASE("parallel_chunks returns each chunk's result in chunk order")
{
    const auto sums = with_threads(many_threads, [] {
        return parallel_chunks<std::int64_t>(0, 10'000, 100, [](std::int64_t begin, std::int64_t end) {
            std::int64_t sum = 0;
            for (std::int64_t i = begin; i < end; ++i) sum += i;
            return sum;
        });
    });
    REQUIRE(sums.size() == 100);
    for (std::size_t k = 0; k < sums.size(); ++k) {
        const auto first = static_cast<std::int64_t>(k) * 100;
        CHECK(sums[k] == 100 * first + 4950);
    }
    CHECK(chunk_count(0, 10'000, 100) == 100);
    CHECK(chunk_count(0, 10'001, 100) == 101);
    CHECK(chunk_count(5, 5, 100) == 0);
}

TEST_CASE("chunks run on several threads at once, and a range of one chunk on the caller's")
{
    std::atomic<int> started{0};
    std::mutex mutex;
    std::set<std::thread::id> ids;
    with_threads(2, [&] {
        parallel_for(0, 2, 1, [&](std::int64_t, std::int64_t) {
            ++started;
            // Each chunk waits for the other to start: only two threads get past this together.
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (started < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
            std::lock_guard<std::mutex> lock(mutex);
            ids.insert(std::this_thread::get_id());
        });
        return 0;
    });
    CHECK(ids.size() == 2);
    CHECK(ids.count(std::this_thread::get_id()) == 1);  // the caller works too
    std::thread::id single;
    parallel_for(0, 10, 10, [&](std::int64_t, std::int64_t) { single = std::this_thread::get_id(); });
    CHECK((single == std::this_thread::get_id()));
}

TEST_CASE("a parallel_for inside a chunk stays on that chunk's thread")
{
    std::atomic<int> nested_elsewhere{0}, inner_chunks{0};
    with_threads(many_threads, [&] {
        parallel_for(0, 8, 1, [&](std::int64_t, std::int64_t) {
            const auto outer = std::this_thread::get_id();
            parallel_for(0, 100, 10, [&](std::int64_t, std::int64_t) {
                ++inner_chunks;
                if (std::this_thread::get_id() != outer) ++nested_elsewhere;
            });
        });
        return 0;
    });
    CHECK(inner_chunks == 80);
    CHECK(nested_elsewhere == 0);
}

TEST_CASE("an exception in a chunk reaches the caller, and parallel_for works afterwards")
{
    auto failing = [] {
        parallel_for(0, 1000, 10, [](std::int64_t begin, std::int64_t) {
            if (begin == 500) throw std::runtime_error("chunk 50 failed");
        });
        return 0;
    };
    CHECK_THROWS_WITH(with_threads(many_threads, failing), "chunk 50 failed");
    CHECK_THROWS_WITH(with_threads(1, failing), "chunk 50 failed");
    std::atomic<int> calls{0};
    with_threads(many_threads, [&] {
        parallel_for(0, 1000, 10, [&](std::int64_t, std::int64_t) { ++calls; });
        return 0;
    });
    CHECK(calls == 100);
}

TEST_CASE("the thread count: the machine's CPUs up to 16, or what a test sets")
{
    CHECK(parallel_threads() >= 1);
    CHECK(parallel_threads() <= 16);
    CHECK(with_threads(3, [] { return parallel_threads(); }) == 3);
    CHECK(with_threads(40, [] { return parallel_threads(); }) == 40);
}

TEST_CASE("UninitializedVector keeps what is written, like any vector")
{
    UninitializedVector<double> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
    v.resize(2000);
    for (std::size_t i = 1000; i < v.size(); ++i) v[i] = -1;
    CHECK(v[999] == 999);
    CHECK(v[1999] == -1);
    v = {1.5, 2.5};
    CHECK(v.size() == 2);
    v.assign(3, 7.0);  // a value given is still stored
    CHECK(v == UninitializedVector<double>{7.0, 7.0, 7.0});
}

TEST_CASE("large arrays reuse the process's freed blocks: same contents rules as fresh memory, and a cap")
{
    large_blocks::release_cached();
    large_blocks::set_idle_seconds(1e9);  // a slow machine must not expire a block between two steps
    const std::size_t mib = std::size_t{1} << 20;
    const large_blocks::Counts before = large_blocks::counts();
    const double* first_data = nullptr;
    {
        UninitializedVector<double> a(3 * mib);  // 24 MiB: a block of its own
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i) * 0.5 + 1;
        first_data = a.data();
        CHECK(large_blocks::counts().mapped == before.mapped + 1);
    }
    CHECK(large_blocks::cached_bytes() >= 24 * mib);
    {
        // A slightly smaller array takes the cached block, mapped nothing, and keeps what it writes.
        UninitializedVector<float> b(5 * mib);  // 20 MiB
        CHECK(static_cast<const void*>(b.data()) == static_cast<const void*>(first_data));
        CHECK(large_blocks::counts().reused == before.reused + 1);
        CHECK(large_blocks::counts().mapped == before.mapped + 1);
        CHECK(large_blocks::cached_bytes() == 0);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 1000) - 3;
        CHECK(b[123456] == static_cast<float>(123456 % 1000) - 3);
        CHECK(b.back() == static_cast<float>((b.size() - 1) % 1000) - 3);
    }
    {
        // A larger one grows the cached block: the pages it had stay (their old contents), the rest
        // is new; an array of a quarter of the size maps a fresh block rather than hold 4x its size.
        UninitializedVector<std::uint8_t> tiny(6 * mib);
        UninitializedVector<double> c(8 * mib);  // 64 MiB
        CHECK(large_blocks::counts().grown == before.grown + 1);
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<double>(c.size() - i);
        CHECK(c.front() == static_cast<double>(c.size()));
        CHECK(c.back() == 1);
        CHECK(large_blocks::counts().mapped == before.mapped + 2);  // tiny's
    }
    // Small arrays never touch the pool.
    const large_blocks::Counts large_only = large_blocks::counts();
    for (int k = 0; k < 100; ++k) {
        UninitializedVector<double> small(1000);
        small[999] = k;
    }
    CHECK(large_blocks::counts().mapped == large_only.mapped);
    CHECK(large_blocks::counts().reused == large_only.reused);
    // release_cached empties the cache; the next large array maps a block of its own.
    CHECK(large_blocks::cached_bytes() > 0);
    large_blocks::release_cached();
    CHECK(large_blocks::cached_bytes() == 0);
    {
        UninitializedVector<double> d(mib);  // 8 MiB
        d.assign(d.size(), 2.0);
        CHECK(large_blocks::counts().mapped == large_only.mapped + 1);
        // Bytes (a message's blob) are such an array too.
        Bytes blob(5 * mib);
        blob[5 * mib - 1] = 7;
        CHECK(blob.back() == 7);
    }
    large_blocks::release_cached();
    large_blocks::set_idle_seconds(large_blocks::cached_block_seconds);
}

TEST_CASE("a forked child does not inherit the large blocks (no page tables copied, no copy on write)")
{
    UninitializedVector<double> big(std::size_t{1} << 20);  // 8 MiB: a large block
    big.assign(big.size(), 1.0);
    UninitializedVector<double> small(1000);
    small.assign(small.size(), 1.0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // msync fails with ENOMEM on an address that is not mapped.
        void* page = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(big.data()) & ~std::uintptr_t{4095});
        const bool big_mapped = ::msync(page, 4096, MS_ASYNC) == 0 || errno != ENOMEM;
        ::_exit(big_mapped ? 1 : small[999] == 1.0 ? 0 : 2);
    }
    int status = -1;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(big[12345] == 1.0);
}

TEST_CASE("SplitMix64::discard skips exactly that many draws")
{
    SplitMix64 sequential(42);
    for (int i = 0; i < 1000; ++i) sequential.next();
    SplitMix64 skipped(42);
    skipped.discard(1000);
    for (int i = 0; i < 10; ++i) CHECK(skipped.next() == sequential.next());
    SplitMix64 far(7), far_sequential(7);
    far.discard(std::uint64_t{1} << 40);
    far_sequential.discard(std::uint64_t{1} << 39);
    far_sequential.discard(std::uint64_t{1} << 39);
    CHECK(far.next() == far_sequential.next());
}

TEST_CASE("checksum64 of a large buffer: the same on any number of threads, and every block counts")
{
    std::vector<std::uint8_t> buffer((std::size_t{5} << 20) + 13);  // five blocks of 1 MiB and a bit
    SplitMix64 rng(3);
    for (auto& b : buffer) b = static_cast<std::uint8_t>(rng.next());
    const std::uint64_t one = with_threads(1, [&] { return checksum64(buffer.data(), buffer.size()); });
    CHECK(with_threads(many_threads, [&] { return checksum64(buffer.data(), buffer.size()); }) == one);
    for (std::size_t at : {std::size_t{0}, (std::size_t{3} << 20) + 5, buffer.size() - 1}) {
        buffer[at] ^= 1;
        CHECK(checksum64(buffer.data(), buffer.size()) != one);
        buffer[at] ^= 1;
    }
    // Two blocks swapped, and one byte less.
    std::vector<std::uint8_t> swapped = buffer;
    std::memcpy(swapped.data(), buffer.data() + (1 << 20), 1 << 20);
    std::memcpy(swapped.data() + (1 << 20), buffer.data(), 1 << 20);
    CHECK(checksum64(swapped.data(), swapped.size()) != one);
    CHECK(checksum64(buffer.data(), buffer.size() - 1) != one);
}

TEST_CASE("bits_checksum: the sum of bits_term in any order, on any number of threads, every bit counting")
{
    std::vector<float> values(3 * element_grain + 7);
    SplitMix64 rng(5);
    for (auto& v : values) v = static_cast<float>(rng.next() % 2001) - 1000.0f;
    const std::uint64_t one = with_threads(1, [&] { return bits_checksum(values.data(), values.size(), false); });
    CHECK(with_threads(many_threads, [&] { return bits_checksum(values.data(), values.size(), false); }) == one);
    // On values that are neither zero nor NaN, the same as the checksum of values.
    values[2] = values[2] == 0 ? 1.0f : values[2];
    const std::uint64_t plain = bits_checksum(values.data(), values.size(), false);
    CHECK(plain == output_checksum(values.data(), values.size()));
    // Every element and its place count.
    values[element_grain + 1] += 1;
    CHECK(bits_checksum(values.data(), values.size(), false) != plain);
    values[element_grain + 1] -= 1;
    if (values[0] != values[1]) {
        std::swap(values[0], values[1]);
        CHECK(bits_checksum(values.data(), values.size(), false) != plain);
        std::swap(values[0], values[1]);
    }
    // Exact bits: -0 and +0 differ, and so do two NaNs (what a race reads is often garbage).
    values[2] = 0.0f;
    const std::uint64_t positive = bits_checksum(values.data(), values.size(), false);
    values[2] = -0.0f;
    CHECK(bits_checksum(values.data(), values.size(), false) != positive);
    const std::uint32_t nan_bits[2] = {0x7fc00000u, 0x7fc00001u};
    std::memcpy(&values[2], &nan_bits[0], 4);
    const std::uint64_t nan = bits_checksum(values.data(), values.size(), false);
    std::memcpy(&values[2], &nan_bits[1], 4);
    CHECK(bits_checksum(values.data(), values.size(), false) != nan);
    values[2] = 1.0f;
    const std::vector<double> doubles(values.begin(), values.end());
    CHECK(bits_checksum(doubles.data(), doubles.size(), true) == output_checksum(doubles.data(), doubles.size()));
}

TEST_CASE("every chunk waits on the chunk gate first, on the thread that runs it")
{
    struct CountingGate : ChunkGate {
        mutable std::atomic<int> waits{0};
        mutable std::atomic<bool> open{true};
        void wait() const override
        {
            ++waits;
            while (!open) std::this_thread::yield();
        }
    } gate;
    set_chunk_gate(&gate);
    struct Clear {
        ~Clear() { set_chunk_gate(nullptr); }
    } clear;

    std::atomic<int> chunks{0};
    parallel_for(0, 100, 10, [&](std::int64_t, std::int64_t) { ++chunks; });
    CHECK(chunks == 10);
    CHECK(gate.waits == 10);

    // A closed gate holds every chunk back until it opens.
    gate.waits = 0;
    chunks = 0;
    gate.open = false;
    std::thread worker([&] { parallel_for(0, 40, 10, [&](std::int64_t, std::int64_t) { ++chunks; }); });
    while (gate.waits == 0) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(chunks == 0);
    gate.open = true;
    worker.join();
    CHECK(chunks == 4);
}

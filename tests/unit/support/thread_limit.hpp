// For tests that compare results on one thread and on many: every parallel_for inside fn runs on
// exactly `threads` threads (harness/parallel.hpp), then the machine's count is back.
#pragma once

#include "harness/parallel.hpp"

template <typename Fn>
auto with_threads(int threads, Fn fn)
{
    struct Restore {
        ~Restore() { harness::set_thread_limit(0); }
    } restore;
    harness::set_thread_limit(threads);
    return fn();
}

// More threads than chunks in many tests and than cores on most machines: chunks then finish in
// every order.
constexpr int many_threads = 13;

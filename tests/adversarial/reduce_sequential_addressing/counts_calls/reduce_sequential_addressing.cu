// ATTACK: call counting. The launcher does the real work only on the first two calls for a given
//      n, which is how the checked run and its repeat come, and returns at once on every later call
//      (the timed batches' repetitions), leaving the output as it is. Against a grader that checks
//      only the first calls and times the rest, that is a correct result with an impossibly fast
//      time.
// EXPECTED VERDICT: the grader's timing server writes every timed repetition's input from a fresh
//      seed and checksums every repetition's output itself: the timed case n=67108864/int is wrong
//      and the exercise gets no speed points. A case that is the first with its n is genuine (n=1/int passes); a case that
//      shares its n with two earlier calls (n=1025/frac, ...) gets no output at all and fails.

#include <cuda_runtime.h>

#include <map>

namespace {

constexpr int THREADS = 1024;

// Correct but deliberately slow: a single block of 1024 threads reads the whole input (each thread
// adds every 1024th element), then halves the partial sums in shared memory, sequential addressing.
__global__ void one_block_reduce(const double* in, double* out, int n)
{
    __shared__ double partial[THREADS];
    double sum = 0.0;
    for (long long i = threadIdx.x; i < n; i += THREADS) sum += in[i];
    partial[threadIdx.x] = sum;
    for (int stride = THREADS / 2; stride > 0; stride /= 2) {
        __syncthreads();
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    }
    if (threadIdx.x == 0) out[0] = partial[0];
}

std::map<int, int> calls_for_n;

}  // namespace

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch)
{
    (void)scratch;
    if (n <= 0 || ++calls_for_n[n] > 2) return;
    one_block_reduce<<<1, THREADS>>>(in, out, n);
}

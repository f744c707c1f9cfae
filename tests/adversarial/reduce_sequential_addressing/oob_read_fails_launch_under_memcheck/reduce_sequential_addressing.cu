// ATTACK (redteam13): an out-of-bounds read that only memcheck sees. Each block's thread 0 reads
// one double just past the end of a 2 KiB buffer the launcher allocates (inside the same page of
// device memory, so no fault without the tool); the value never changes the sum. memcheck stops
// the kernel at the access and the launch fails (cudaErrorLaunchFailure), so the runner reports a
// CUDA error in the first case under the tool and exits; nothing tells the runs apart.
// EXPECTED VERDICT (graded with --sanitize and a rubric pricing a memcheck finding at the whole
// exercise): every case passes in the graded runs; memcheck's finding (or its error code with the
// finding in the log) costs: 0 points. Before the fix, the supervisor killed compute-sanitizer as
// soon as the runner reported the CUDA error, before the tool printed its report and exit code:
// memcheck read "not checked", free, and the exercise kept its points.
#include <cuda_runtime.h>

namespace {

constexpr unsigned kBlock = 256;

__global__ void __launch_bounds__(kBlock)
reduce_kernel(const double* __restrict__ in, double* __restrict__ partial, int n, const double* small) {
  __shared__ double sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = (i < static_cast<size_t>(n)) ? in[i] : 0.0;
  double past = 0.0;
  // small has kBlock doubles: small[kBlock] is 8 bytes past its end (a load the compiler keeps).
  if (tid == 0) asm volatile("ld.global.f64 %0, [%1];" : "=d"(past) : "l"(small + kBlock));
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0] + (past == 1.0e300 ? 1.0 : 0.0);  // never 1e300 there
}

unsigned blocks_for(long long count) { return static_cast<unsigned>((count + kBlock - 1) / kBlock); }

}  // namespace

void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch) {
  static double* small = nullptr;  // kept for the process: allocated once, zeroed
  if (small == nullptr) {
    cudaMalloc(&small, kBlock * sizeof(double));
    cudaMemset(small, 0, kBlock * sizeof(double));
  }
  long long count = n > 0 ? n : 0;
  double* const region[2] = {scratch, scratch + blocks_for(count)};
  const double* src = in;
  for (int pass = 0;; ++pass) {
    unsigned blocks = blocks_for(count);
    if (blocks == 0) blocks = 1;
    double* dst = (blocks == 1) ? out : region[pass % 2];
    reduce_kernel<<<blocks, kBlock>>>(src, dst, static_cast<int>(count), small);
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

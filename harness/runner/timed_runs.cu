#include "timed_runs.hpp"

#include <algorithm>
#include <atomic>

#include "harness/cuda_check.hpp"
#include "harness/poison.hpp"
#include "harness/variant.hpp"

namespace harness::runner {
namespace {

constexpr int threads = 256;

int blocks_for(std::size_t elements)
{
    return static_cast<int>(std::min<std::size_t>((elements + threads - 1) / threads, 4096));
}

// variant[i] = -original[i] where the key flips element i, else original[i].
template <typename T>
__global__ void make_variant(const T* original, T* variant, std::size_t n, std::uint64_t key)
{
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        variant[i] = variant_flips(key, i) ? -original[i] : original[i];
}

// Holds the stream until the runner writes flags[0] (the launcher call is queued behind this
// kernel) or `limit_ns` of the GPU's global timer passed; flags[1] = 1 says the limit ended it.
__global__ void hold_stream(volatile unsigned* flags, unsigned long long limit_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        if (flags[0] != 0) return;
        __nanosleep(200);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < limit_ns);
    flags[1] = 1;
    __threadfence_system();
}

}  // namespace

TimedRuns::TimedRuns(GuardedBuffer& in, GuardedBuffer& out, GuardedBuffer* scratch, const LauncherArgs& args, bool f64,
                     std::size_t l2_bytes, int placements)
    : f64_(f64),
      elements_(in.data_bytes() / (f64 ? 8 : 4)),
      flush_bytes_(std::max<std::size_t>(2 * l2_bytes, std::size_t(64) << 20))
{
    CUDA_CHECK(cudaMalloc(&original_, in.data_bytes()));
    CUDA_CHECK(cudaMemcpy(original_, in.data(), in.data_bytes(), cudaMemcpyDeviceToDevice));
    const std::size_t element = f64 ? 8 : 4;
    placements_.resize(static_cast<std::size_t>(std::max(placements, 1)));
    for (std::size_t k = 0; k < placements_.size(); ++k) {
        Placement& p = placements_[k];
        p.args = args;
        if (k == 0) {
            p.in = &in;
            p.out = &out;
            continue;
        }
        // Allocated one after another, so each set lands elsewhere in device memory.
        p.owned_in = std::make_unique<GuardedBuffer>(in.data_bytes() / element, element);
        // Guard zones as the case's own input has them: a kernel that reads past the input meets
        // the same poison on every placement (launch writes the data between them).
        p.owned_in->fill(f64 ? input_guard_f64 : input_guard_f32);
        p.owned_out = std::make_unique<GuardedBuffer>(out.data_bytes() / element, element);
        p.in = p.owned_in.get();
        p.out = p.owned_out.get();
        p.args.in = p.in->data();
        p.args.out = p.out->data();
        if (scratch != nullptr) {
            p.owned_scratch = std::make_unique<GuardedBuffer>(scratch->data_bytes() / element, element);
            p.owned_scratch->fill(f64 ? scratch_f64 : scratch_f32);
            p.args.scratch = p.owned_scratch->data();
        }
    }
    CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
    CUDA_CHECK(cudaMalloc(&sum_, sizeof *sum_));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
    void* flags = nullptr;
    CUDA_CHECK(cudaHostAlloc(&flags, 2 * sizeof(unsigned), cudaHostAllocMapped));
    hold_flags_ = static_cast<volatile unsigned*>(flags);
}

TimedRuns::~TimedRuns()
{
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaFree(sum_);
    cudaFree(flush_);
    cudaFree(original_);
    cudaFreeHost(const_cast<unsigned*>(hold_flags_));
}

void TimedRuns::restore_case_input()
{
    const GuardedBuffer& in = *placements_.front().in;
    CUDA_CHECK(cudaMemcpy(in.data(), original_, in.data_bytes(), cudaMemcpyDeviceToDevice));
}

void TimedRuns::prepare()
{
    current_ = (current_ + 1) % placements_.size();
    placements_[current_].out->fill(f64_ ? unwritten_f64 : unwritten_f32);
    CUDA_CHECK(cudaDeviceSynchronize());
}

TimedRuns::Launch TimedRuns::launch(const std::string& exercise, std::uint64_t key, double hold_us)
{
    // The input variant first, then the L2 flush, both queued before the start event: the input
    // exists only from this command on, and the clock starts once the flush has finished.
    const Placement& p = placements_[current_];
    const int blocks = blocks_for(elements_);
    if (f64_)
        make_variant<<<blocks, threads>>>(static_cast<const double*>(original_), static_cast<double*>(p.in->data()),
                                          elements_, key);
    else
        make_variant<<<blocks, threads>>>(static_cast<const float*>(original_), static_cast<float*>(p.in->data()),
                                          elements_, key);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemsetAsync(flush_, static_cast<int>(++flushes_ & 0xff), flush_bytes_));
    const bool hold = hold_us > 0;
    if (hold) {
        hold_flags_[0] = 0;
        hold_flags_[1] = 0;
        // Mapped host memory: with unified addressing its host address is valid on the device.
        hold_stream<<<1, 1>>>(hold_flags_, static_cast<unsigned long long>(hold_us * 1000));
        CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaEventRecord(start_));
    call_launcher(exercise, p.args);
    CUDA_CHECK(cudaEventRecord(stop_));
    if (hold) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        hold_flags_[0] = 1;  // everything is queued: let the GPU go
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGetLastError());
    Launch result;
    CUDA_CHECK(cudaEventElapsedTime(&result.event_ms, start_, stop_));
    result.hold_ran_out = hold && hold_flags_[1] != 0;
    return result;
}

std::uint64_t TimedRuns::checksum()
{
    return placements_[current_].out->values_checksum(f64_, sum_);
}

}  // namespace harness::runner

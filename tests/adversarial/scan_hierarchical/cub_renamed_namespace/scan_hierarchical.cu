// ATTACK: the whole-array scan is CUB's DeviceScan, hidden behind macros that rename CUB's
//      namespace (and Thrust's cuda_cub, and drop the versioned inline namespaces) before its
//      header is included: no "cub::" appears in the source, and the symbols of the compiled code
//      name `hidden_lib`, not `cub` or `CUB_`. A detector that greps the source for "cub::" or the
//      symbols for "cub" sees nothing.
// EXPECTED VERDICT: the cases pass, but the compiler's own dependency list shows CUB's headers:
//      library_use names CUB and the rubric's default takes the exercise's points (0).

#define CCCL_DISABLE_NVTX
#define CUB_DISABLE_NAMESPACE_MAGIC
#define CUB_IGNORE_NAMESPACE_MAGIC_ERROR
#define THRUST_DISABLE_ABI_NAMESPACE
#define THRUST_IGNORE_ABI_NAMESPACE_ERROR
#define cub hidden_lib
#define cuda_cub hidden_glue
#include <cub/cub.cuh>

#include <cuda_runtime.h>

void scan_hierarchical(const float* in, float* out, int n, float* scratch)
{
    if (n <= 0) return;
    // CUB's temporary storage, from the harness's scratch buffer when it is large enough.
    static void* own_storage = nullptr;
    static size_t own_bytes = 0;
    size_t bytes = 0;
    hidden_lib::DeviceScan::InclusiveSum(nullptr, bytes, in, out, n);
    void* storage = scratch;
    if (bytes > (static_cast<size_t>(n) + 4096) * sizeof(float)) {
        if (bytes > own_bytes) {
            cudaFree(own_storage);
            own_storage = nullptr;
            own_bytes = cudaMalloc(&own_storage, bytes) == cudaSuccess ? bytes : 0;
        }
        storage = own_storage;
    }
    hidden_lib::DeviceScan::InclusiveSum(storage, bytes, in, out, n);
}

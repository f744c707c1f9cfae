// Device memory that one process allocates and another maps: the timing server's buffers for one
// side's timed batches. CUDA's virtual memory management exports an allocation as a POSIX file
// descriptor, which travels over the handles socket (harness/channel.hpp) into the runner's
// sandbox; the runner maps it and its launcher works in it, while the server alone writes the
// inputs and reads the outputs back. The driver's entry points are looked up through the runtime
// (cudaGetDriverEntryPointByVersion), so nothing links libcuda itself.
#pragma once

#include <cstddef>

namespace harness::runner {

// The server's side: `bytes` (rounded up to the allocation granularity) of device memory on the
// current device, mapped readable and writable in this process too. Throws CudaError.
class ShareableAllocation {
public:
    explicit ShareableAllocation(std::size_t bytes);
    ~ShareableAllocation();
    ShareableAllocation(const ShareableAllocation&) = delete;
    ShareableAllocation& operator=(const ShareableAllocation&) = delete;

    // A new descriptor for the allocation; the caller closes it once sent.
    int export_descriptor() const;
    char* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }

private:
    unsigned long long handle_ = 0;
    char* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// A runner's side: the allocation behind `descriptor` (which it closes), `bytes` long, mapped
// readable and writable on the current device. Throws CudaError.
class MappedAllocation {
public:
    MappedAllocation(int descriptor, std::size_t bytes);
    ~MappedAllocation();
    MappedAllocation(const MappedAllocation&) = delete;
    MappedAllocation& operator=(const MappedAllocation&) = delete;

    char* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }

private:
    unsigned long long handle_ = 0;
    char* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// The allocation granularity of the current device (what ShareableAllocation rounds up to).
std::size_t allocation_granularity();

}  // namespace harness::runner

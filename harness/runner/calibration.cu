#include "calibration.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "harness/cuda_check.hpp"

namespace harness::runner {
namespace {

std::string uuid_text(const cudaUUID_t& uuid)
{
    std::string text = "GPU-";
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
        text += hex;
        if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
    }
    return text;
}

int attribute(cudaDeviceAttr what)
{
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, what, 0));
    return value;
}

// Median bandwidth of device-to-device copies of 256 MiB (far beyond any L2), counting the bytes
// read and written.
double copy_bandwidth_gb_s()
{
    const std::size_t bytes = std::size_t(256) << 20;
    void *a = nullptr, *b = nullptr;
    CUDA_CHECK(cudaMalloc(&a, bytes));
    CUDA_CHECK(cudaMalloc(&b, bytes));
    CUDA_CHECK(cudaMemset(a, 1, bytes));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> ms;
    for (int rep = 0; rep < 23; ++rep) {
        CUDA_CHECK(cudaEventRecord(start));
        CUDA_CHECK(cudaMemcpyAsync(rep % 2 ? a : b, rep % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        if (rep >= 3) ms.push_back(t);  // the first few warm the clocks up
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return 2.0 * static_cast<double>(bytes) / (static_cast<double>(ms[ms.size() / 2]) * 1e6);
}

}  // namespace

nlohmann::json calibrate_device()
{
    cudaDeviceProp props{};
    CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    const int memory_khz = attribute(cudaDevAttrMemoryClockRate);
    const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
    return {
        {"device", props.name},
        {"uuid", uuid_text(props.uuid)},
        {"cc", std::to_string(props.major) + "." + std::to_string(props.minor)},
        {"sm_count", props.multiProcessorCount},
        {"memory_bytes", props.totalGlobalMem},
        {"l2_bytes", props.l2CacheSize},
        {"sm_clock_khz", attribute(cudaDevAttrClockRate)},
        {"memory_clock_khz", memory_khz},
        {"dram_peak_gb_s", 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9},  // two transfers per clock
        {"driver_version", driver},
        {"runtime_version", runtime},
        {"copy_gb_s", copy_bandwidth_gb_s()},
    };
}

}  // namespace harness::runner

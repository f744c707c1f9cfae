#include "grading/device_probe.hpp"

#include <string>

#include <cuda_runtime_api.h>

namespace grading {
namespace {

std::string describe(cudaError_t error)
{
    return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

}  // namespace

DeviceState probe_cuda_device()
{
    DeviceState device;
    int count = 0;
    if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
        device.error = describe(error);
        return device;
    }
    if (count == 0) {
        device.error = "the CUDA runtime sees no device";
        return device;
    }
    cudaDeviceProp properties{};
    if (const cudaError_t error = cudaGetDeviceProperties(&properties, 0); error != cudaSuccess) {
        device.error = describe(error);
        return device;
    }
    device.name = properties.name;
    device.major = properties.major;
    device.minor = properties.minor;
    return device;
}

}  // namespace grading

#include "grading/device_probe.hpp"

#include <string>

#include <cuda_runtime_api.h>

namespace grading {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

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
    // nvidia-smi's spelling: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
    device.uuid = "GPU-";
    for (int k = 0; k < 16; ++k) {
        if (k == 4 || k == 6 || k == 8 || k == 10) device.uuid += '-';
        device.uuid += hex_digits[static_cast<unsigned char>(properties.uuid.bytes[k]) >> 4];
        device.uuid += hex_digits[static_cast<unsigned char>(properties.uuid.bytes[k]) & 15];
    }
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0) == cudaSuccess) device.pci_bus_id = bus_id;
    device.major = properties.major;
    device.minor = properties.minor;
    return device;
}

}  // namespace grading

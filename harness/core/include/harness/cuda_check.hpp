// The one CUDA error check: throws harness::CudaError with the call, file and line.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace harness {

class CudaError : public std::runtime_error {
public:
    CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
    cudaError_t code() const { return code_; }
    const char* name() const { return cudaGetErrorName(code_); }

private:
    cudaError_t code_;
};

inline void cuda_check(cudaError_t code, const char* call, const char* file, int line)
{
    if (code != cudaSuccess)
        throw CudaError(code, std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ") from " + call +
                                  " at " + file + ":" + std::to_string(line));
}

}  // namespace harness

#define CUDA_CHECK(call) ::harness::cuda_check((call), #call, __FILE__, __LINE__)

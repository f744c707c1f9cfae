// A process of no grading that keeps the GPU busy: kernels that spin for a millisecond each, one
// after another, for the seconds given (default 60), or until killed. Exits 77 without a GPU.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void spin(long long cycles, int* sink)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {}
    if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(sink, 1);
}

int main(int argc, char** argv)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("gpu_hog: no CUDA GPU\n");
        return 77;
    }
    const double seconds = argc > 1 ? std::atof(argv[1]) : 60;
    int* sink = nullptr;
    if (cudaMalloc(&sink, sizeof *sink) != cudaSuccess) return 1;
    std::printf("gpu_hog: busy for %.0f s\n", seconds);
    std::fflush(stdout);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        spin<<<264, 128>>>(2'000'000, sink);  // about 1 ms at 2 GHz, on every SM
        if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    }
    return 0;
}

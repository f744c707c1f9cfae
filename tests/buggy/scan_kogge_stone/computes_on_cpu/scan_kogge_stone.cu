// BUG: no kernel at all. The launcher copies the input to the host, scans each 1024-element
//      section there in a plain loop and copies the result back: every output is right, and
//      nothing of the exercise (a Kogge-Stone scan in shared memory on the GPU) was done.
// EXPECTED SYMPTOM: every case passes, yet the exercise scores no points: the technique read from
//      the compiled code says the launcher never launches a kernel (technique.missing lists
//      launches_kernel, uses_shared_memory and synchronizes_block), and the message says
//      "no points: your launcher never launches a kernel ...".

#include <cuda_runtime.h>

#include <vector>

void scan_kogge_stone(const float* in, float* out, int n)
{
    if (n <= 0) return;
    std::vector<float> host(static_cast<size_t>(n));
    cudaMemcpy(host.data(), in, sizeof(float) * host.size(), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < host.size(); ++i)
        if (i % 1024 != 0) host[i] += host[i - 1];
    cudaMemcpy(out, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice);
}

// Red team (issue 20, code before main / raw system calls): the grader must refuse this file at the build
// (invalid_submission, 0 points); the checks of code once missed it. From /tmp/rt-foreign/a.
// Constructor named like nvcc's registration with a '.' suffix: is_nvcc_registration strips ".x".
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }
void launch(float* x) { k<<<1, 32>>>(x); }
void student_work() { printf("student code before main\n"); }
static void early() __asm__("_ZL24__sti____cudaRegisterAllv.x");
__attribute__((constructor, used)) static void early() { student_work(); }

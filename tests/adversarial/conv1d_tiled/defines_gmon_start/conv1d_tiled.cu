// Red team (issue 20, code before main / raw system calls): the grader must refuse this file at the build
// (invalid_submission, 0 points); the checks of code once missed it. From /tmp/rt-foreign/d.
// __gmon_start__: crti.o's _init calls it (weak) before main when defined.
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }
void launch(float* x) { k<<<1, 32>>>(x); }
extern "C" void __gmon_start__() { printf("student code before main via __gmon_start__\n"); }

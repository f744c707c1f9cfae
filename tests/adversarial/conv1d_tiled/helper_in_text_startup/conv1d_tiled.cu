// Red team (issue 20, code before main): the grader must refuse this file at the build
// (invalid_submission, 0 points); the initializer walk once followed relocations only. From /tmp/rt-foreign/f.
// Pure C++: a global initialized by a call to a static noinline helper placed in .text.startup,
// the section of the compiler's initializer: the assembler resolves the call, no relocation to follow.
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }
void launch(float* x) { k<<<1, 32>>>(x); }
__attribute__((noinline, section(".text.startup"))) static int helper() { printf("student code before main (f)\n"); return 1; }
int g = helper();

// Red team (issue 20, code before main): the grader must refuse this file at the build
// (invalid_submission, 0 points); the initializer walk once followed relocations only. From /tmp/rt-foreign/c.
// Initializer written in top-level asm without .size: relocations_in() reads only its first byte.
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }
void launch(float* x) { k<<<1, 32>>>(x); }
extern "C" void student_work() { printf("student code before main\n"); }
asm(".text\n"
    ".type _GLOBAL__sub_I_evil,@function\n"
    "_GLOBAL__sub_I_evil:\n"
    "  jmp student_work\n"
    ".section .init_array,\"aw\",@init_array\n"
    ".p2align 3\n"
    ".quad _GLOBAL__sub_I_evil\n"
    ".text\n");

// Red team (issue 20, code before main): the grader must refuse this file at the build
// (invalid_submission, 0 points); the initializer walk once followed relocations only. From /tmp/rt-foreign/c2.
// Initializer in asm without .size, calling a function in ANOTHER section (a relocation exists past byte 0).
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }
void launch(float* x) { k<<<1, 32>>>(x); }
extern "C" void student_work() { printf("student code before main (c2)\n"); }
asm(".section .text.evil,\"ax\",@progbits\n.type _GLOBAL__sub_I_evil,@function\n_GLOBAL__sub_I_evil:\n  nop\n  jmp student_work\n"
    ".section .init_array,\"aw\",@init_array\n.p2align 3\n.quad _GLOBAL__sub_I_evil\n.text\n");

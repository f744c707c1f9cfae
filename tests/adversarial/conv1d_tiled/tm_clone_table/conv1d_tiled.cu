// Red team (issue 20, code before main / raw system calls): the grader must refuse this file at the build
// (invalid_submission, 0 points); the checks of code once missed it. From /tmp/rt-foreign/e.
// _ITM_registerTMCloneTable: crtbegin's frame_dummy (in .init_array) calls it when .tm_clone_table is non-empty.
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }
void launch(float* x) { k<<<1, 32>>>(x); }
extern "C" void _ITM_registerTMCloneTable(void*, unsigned long) { printf("student code before main via TM clones\n"); }
extern "C" void _ITM_deregisterTMCloneTable(void*) {}
asm(".section .tm_clone_table,\"aw\",@progbits\n.p2align 3\n.quad 0\n.quad 0\n.text\n");

// Red team (issue 20, code before main / raw system calls): the grader must refuse this file at the build
// (invalid_submission, 0 points); the checks of code once missed it. From /tmp/rt-foreign/b.
// syscall with a prefix byte: objdump prints "rex.W syscall" / "cs syscall", mnemonic check misses it.
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }
void launch(float* x) {
    long ret;
    // getpid via raw syscall, prefixed by REX.W (0x48) -> executes as syscall
    asm volatile(".byte 0x48, 0x0f, 0x05" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
    asm volatile(".byte 0x2e, 0x0f, 0x05" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
    printf("%ld\n", ret);
    k<<<1, 32>>>(x);
}

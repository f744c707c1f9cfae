#!/bin/sh
# A stand-in for compute-sanitizer in the host-only tests of `grade --sanitize`, installed by CMake
# as <build>/tests/fake_toolchain/root/compute-sanitizer/compute-sanitizer (where the toolkit keeps
# the real one). It takes compute-sanitizer's command line (options as "--name value" pairs, then
# the program and its arguments), runs the program and prints a recorded report of the tool's
# format (NVIDIA's documented output), the same for every program, and exits as the tool does:
# with --error-exitcode's code when it found errors (or the program's exit code was not 0), else 0.
#   memcheck   clean ("ERROR SUMMARY: 0 errors")
#   racecheck  one race in reduce_kernel, a write at line 31 against a read at line 29
#   synccheck  a flood: 3000 distinct divergent barriers (lines 1 to 3000)
#   initcheck  one uninitialized read, then no summary: the tool is killed (a tool that did not end)
set -u
tool=memcheck
error_exitcode=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool="$2"; shift 2 ;;
    --error-exitcode) error_exitcode="$2"; shift 2 ;;
    --*) shift 2 ;;
    *) break ;;
  esac
done
echo "========= COMPUTE-SANITIZER"
"$@"
status=$?
case "$tool" in
  memcheck) ;;
  racecheck)
    echo "========= Error: Race reported between Write access at reduce_kernel(const float *, double *, int)+0x1b0 in reduce.cu:31"
    echo "=========     and Read access at reduce_kernel(const float *, double *, int)+0x2e0 in reduce.cu:29 [128 hazards]"
    echo "=========" ;;
  synccheck)
    i=1
    while [ $i -le 3000 ]; do
      printf '========= Barrier error detected. Divergent thread(s) in block\n=========     at reduce_kernel(const float *, double *, int)+0x70 in reduce.cu:%d\n=========\n' $i
      i=$((i + 1))
    done ;;
  initcheck)
    echo "========= Uninitialized __global__ memory read of size 4 bytes"
    echo "=========     at reduce_kernel(const float *, double *, int)+0xb0 in reduce.cu:12"
    echo "========="
    kill -KILL $$ ;;
esac
case "$tool" in
  memcheck) echo "========= ERROR SUMMARY: 0 errors"; errors=0 ;;
  racecheck) echo "========= ERROR SUMMARY: 1 error"; errors=1 ;;
  synccheck) echo "========= ERROR SUMMARY: 3000 errors"; errors=3000 ;;
esac
[ "$status" -ne 0 ] && errors=$((errors + 1))
[ "$errors" -gt 0 ] && [ "$error_exitcode" -ne 0 ] && exit "$error_exitcode"
exit $status

#!/bin/sh
# A stand-in for nvcc in the host-only tests of `grade`, installed by CMake as
# <build>/tests/fake_toolchain/root/bin/nvcc beside fake_runner, so that the root looks like a
# (tiny) CUDA toolkit the sandbox can bind read-only. It takes the two command lines `grade` runs
# (grading/src/build/steps.cpp):
#
#   compile: nvcc -c <flags> -MD -MF DEPS [-MT TARGET] -o OBJECT SOURCE.cu
#     writes a real ELF object (cc -c of a generated C file, so that nm reads it) and the make-style
#     dependency list. What the "source" asks for, one line each:
#       // FAKE_RUNNER: <behaviour>       what the linked runner does (fake_runner.cpp; default correct)
#       // FAKE_DEFINES: sym [weak:sym]   global functions the object defines (raw symbol names)
#       // FAKE_CALLS: sym ...              functions the object calls (raw symbol names)
#       // FAKE_INCLUDES: path ...        more files in the dependency list; @ROOT@ is this root
#       FAKE_COMPILER_NOISE               a warning with bytes that are not UTF-8 and terminal control
#                                         sequences (as `#warning` with such bytes), then goes on
#       FAKE_COMPILE_ERROR                fails like a syntax error
#       FAKE_COMPILER_HANG                never finishes
#       FAKE_COMPILE_SLOW                 takes 8 s
#       FAKE_LINK_ERROR                   the link fails like a duplicate definition
#       FAKE_LAUNCHES_NO_KERNEL           the object does not call __cudaPushCallConfiguration, which
#                                         every other fake object calls (as <<<>>> does): a launcher
#                                         that computes its result on the host
#       // FAKE_PTX: <instruction>        a line of the PTX the compile keeps (--keep-dir KEEP:
#                                         KEEP/<source's stem>.ptx), in order; none: no PTX kept
#   link:    nvcc <flags> -o RUNNER RUNNER_OBJECT SUBMISSION_OBJECT
#     copies fake_runner to RUNNER with a trailer "FAKE_RUNNER_BEHAVIOUR=<behaviour>;" that
#     fake_behaviour() (fake_behaviour.cpp) reads back from /proc/self/exe; the behaviour
#     "unstartable" copies fake_runner_unstartable instead, which no exec can start.
# and the two questions grade's preflight asks: --version (answered) and --list-gpu-code (no sm_NN
# named, so that any --arch is taken: the fake runners run on the CPU).
set -u
case "${1:-}" in
  --version) echo "fake nvcc (tests/fake_toolchain), no real release"; exit 0 ;;
  --list-gpu-code) echo "fake nvcc: builds for every architecture"; exit 0 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
compile=no out= src= deps= target= last_object= keep=
while [ $# -gt 0 ]; do
  case "$1" in
    -c) compile=yes ;;
    -o) out="$2"; shift ;;
    -MF) deps="$2"; shift ;;
    -MT) target="$2"; shift ;;
    --keep-dir) keep="$2"; shift ;;
    *.cu) src="$1" ;;
    *.o) last_object="$1" ;;
  esac
  shift
done

if [ "$compile" = no ]; then
  if [ -z "$out" ] || [ -z "$last_object" ]; then echo "fake nvcc: link needs -o and objects" >&2; exit 2; fi
  if grep -q -a FAKE_LINK_ERROR_MARK "$last_object"; then
    echo "/usr/bin/ld: $last_object: multiple definition of \`main'; grader_runner.o: first defined here" >&2
    exit 1
  fi
  behaviour=$(grep -a -o 'FAKE_RUNNER_BEHAVIOUR=[^;]*;' "$last_object" | head -n 1 | sed 's/^FAKE_RUNNER_BEHAVIOUR=//; s/;$//')
  [ -n "$behaviour" ] || behaviour=correct
  runner=fake_runner
  [ "$behaviour" = unstartable ] && runner=fake_runner_unstartable
  cp "$root/bin/$runner" "$out" || exit 1
  printf '\nFAKE_RUNNER_BEHAVIOUR=%s;\n' "$behaviour" >> "$out"
  chmod 755 "$out"
  exit 0
fi

if [ -z "$src" ] || [ -z "$out" ]; then echo "fake nvcc: compile needs -o and a .cu source" >&2; exit 2; fi
if [ ! -r "$src" ]; then echo "fake nvcc: cannot read $src" >&2; exit 1; fi
if grep -q FAKE_COMPILER_NOISE "$src"; then
  printf '%s(1): warning: #warning \377\376 not UTF-8 \033[2J\033]0;owned\007 \302\2332J title\r overwritten\n' "$src" >&2
fi
if grep -q FAKE_COMPILE_ERROR "$src"; then
  echo "$src(3): error: expected a \";\"" >&2
  echo "1 error detected in the compilation of \"$src\"." >&2
  exit 1
fi
if grep -q FAKE_COMPILER_HANG "$src"; then
  sleep 600
fi
if grep -q FAKE_COMPILE_SLOW "$src"; then
  sleep 8
fi
behaviour=$(sed -n 's|.*// FAKE_RUNNER: *\([^ ]*\).*|\1|p' "$src" | head -n 1)
[ -n "$behaviour" ] || behaviour=correct
defines=$(sed -n 's|.*// FAKE_DEFINES:||p' "$src")
calls=$(sed -n 's|.*// FAKE_CALLS:||p' "$src")
includes=$(sed -n 's|.*// FAKE_INCLUDES:||p' "$src" | sed "s|@ROOT@|$root|g")

work=$(mktemp -d "${TMPDIR:-/tmp}/fake-nvcc-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
{
  printf '__attribute__((used)) const char fake_runner_behaviour[] = "FAKE_RUNNER_BEHAVIOUR=%s;";\n' "$behaviour"
  if grep -q FAKE_LINK_ERROR "$src"; then
    printf '__attribute__((used)) const char fake_link_error[] = "FAKE_LINK_ERROR_MARK";\n'
  fi
  printf 'void fake_submission_launcher(void) {}\n'
  if ! grep -q FAKE_LAUNCHES_NO_KERNEL "$src"; then
    printf 'extern int fake_push(void) __asm__("__cudaPushCallConfiguration");\nint fake_launches(void) { return fake_push(); }\n'
  fi
  k=0
  for symbol in $defines; do
    case "$symbol" in
      weak:*) symbol=${symbol#weak:}; attribute='__attribute__((weak))' ;;
      *) attribute= ;;
    esac
    printf '%s void fake_defined_%d(void) __asm__("%s");\n%s void fake_defined_%d(void) {}\n' \
      "$attribute" "$k" "$symbol" "$attribute" "$k"
    k=$((k + 1))
  done
  for symbol in $calls; do
    printf 'extern void fake_called_%d(void) __asm__("%s");\nvoid fake_caller_%d(void) { fake_called_%d(); }\n' \
      "$k" "$symbol" "$k" "$k"
    k=$((k + 1))
  done
} > "$work/submission.c"
cc -c -o "$out" "$work/submission.c" || exit 1

if [ -n "$keep" ] && grep -q '// FAKE_PTX:' "$src"; then
  sed -n 's|.*// FAKE_PTX: *||p' "$src" > "$keep/$(basename "$src" .cu).ptx" || exit 1
fi

if [ -n "$deps" ]; then
  escape() { printf '%s' "$1" | sed 's/ /\\ /g'; }
  {
    printf '%s : %s' "${target:-$out}" "$(escape "$src")"
    printf ' \\\n    /usr/include/stdc-predef.h'
    for path in $includes; do printf ' \\\n    %s' "$(escape "$path")"; done
    printf '\n'
  } > "$deps"
fi
exit 0

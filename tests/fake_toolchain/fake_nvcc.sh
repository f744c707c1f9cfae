#!/bin/sh
# A stand-in for nvcc in the host-only tests of `grade`: instead of compiling, it writes a small
# script that starts fake_runner with the behaviour the "source" asks for in a line
#   // FAKE_RUNNER: <behaviour>
# A source containing FAKE_COMPILE_ERROR fails to compile like a real syntax error would.
# usage (as grade calls nvcc): fake_nvcc.sh <flags...> -o OUTPUT SOURCE.cu LIBS...
fake_runner="$FAKE_RUNNER"
out= src=
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    *.cu) src="$1" ;;
  esac
  shift
done
if grep -q FAKE_COMPILE_ERROR "$src"; then
  echo "$src(3): error: expected a \";\"" >&2
  echo "1 error detected in the compilation of \"$src\"." >&2
  exit 1
fi
if grep -q FAKE_COMPILER_HANG "$src"; then
  sleep 600
fi
behaviour=$(sed -n 's|.*// FAKE_RUNNER: *\([^ ]*\).*|\1|p' "$src" | head -n 1)
[ -n "$behaviour" ] || behaviour=correct
printf '#!/bin/sh\nexec "%s" --behaviour "%s" "$@"\n' "$fake_runner" "$behaviour" > "$out"
chmod +x "$out"

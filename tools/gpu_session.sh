#!/usr/bin/env bash
# One device session: the README's demo command (configure, build, grade the references), then
# the GPU tests; full logs under $OUT (or ./gpu-logs), a short summary last.
#   tools/gpu_session.sh [ctest -R regex] [ctest -E regex]
# DEMO=0 builds without grading the demo (when the device call's time is short).
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tests_regex=${1:-.}
exclude=()
if [ -n "${2:-}" ]; then exclude=(-E "$2"); fi
. "$(dirname "$0")/device_packages.sh"  # the CUDA toolkit on the PATH, the carried .debs unpacked
echo "bwrap: $(command -v bwrap) $(bwrap --version 2>&1)" > "$out/sandbox.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
start=$(date +%s)
if [ "${DEMO:-1}" = 0 ]; then
  (cmake --preset default && cmake --build --preset default) > "$out/demo.log" 2>&1
else
  cmake --workflow --preset demo > "$out/demo.log" 2>&1
fi
demo_rc=$?
cp build/results.json "$out/results.json" 2>/dev/null
demo_done=$(date +%s)
timeout "${CTEST_SECONDS:-3000}" ctest --test-dir build -j 6 -L gpu -R "$tests_regex" "${exclude[@]}" -V --timeout 900 > "$out/ctest.log" 2>&1
ctest_rc=$?
tested=$(date +%s)
echo "== GPU"; cat "$out/gpu.txt" "$out/sandbox.txt"
echo "== ctest (rc $ctest_rc, $((tested - demo_done)) s)"
grep -E "Test +#|tests passed|FAIL|Skipped" "$out/ctest.log" | sed 's/^ *//' | cut -c1-110
echo "== demo: cmake --workflow --preset demo (rc $demo_rc, $((demo_done - start)) s with configure and build)"
sed -n '/^exercise /,$p' "$out/demo.log"

#!/usr/bin/env bash
# One device session: configure and build for sm_90, run the GPU tests and the demo grading,
# keep full logs under $OUT (or ./gpu-logs), and print a short summary last.
#   tools/gpu_session.sh [ctest -R regex] [grade --exercise list]
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
tests_regex=${1:-.}
demo_exercises=${2:-}
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
start=$(date +%s)
cmake --preset default -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build -j 16 > "$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -40; exit 1; }
built=$(date +%s)
ctest --test-dir build -j 6 -R "$tests_regex" --output-on-failure --timeout 900 > "$out/ctest.log" 2>&1
ctest_rc=$?
tested=$(date +%s)
demo_args=()
[ -n "$demo_exercises" ] && demo_args=(--exercise "$demo_exercises")
out_abs=$(cd "$out" && pwd)
(cd build && ./bin/grade --submission ../reference --output "$out_abs/results.json" --work-dir grader-work/demo \
   "${demo_args[@]}") > "$out/demo.log" 2>&1
demo_rc=$?
done_at=$(date +%s)
echo "== GPU"; cat "$out/gpu.txt"
echo "== ctest (rc $ctest_rc, $((tested - built)) s; build $((built - start)) s)"
grep -E "Test +#|tests passed|FAIL|Skipped" "$out/ctest.log" | sed 's/^ *//' | cut -c1-110
echo "== demo grading (rc $demo_rc, $((done_at - tested)) s)"
sed -n '/^exercise /,$p' "$out/demo.log"

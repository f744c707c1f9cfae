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
export PATH=/usr/local/cuda/bin:$PATH
# A device machine without some Debian packages (bubblewrap, libcli11-dev, libvalijson-dev): unpack
# the .debs carried in .debs/ (apt-get download NAME there, git-ignored); CMake finds the headers'
# package files through CMAKE_PREFIX_PATH, bwrap goes on the PATH where there is none.
if ls .debs/*.deb > /dev/null 2>&1; then
  mkdir -p .debs/root && for deb in .debs/*.deb; do dpkg -x "$deb" .debs/root; done
  export CMAKE_PREFIX_PATH="$PWD/.debs/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  if ! command -v bwrap > /dev/null; then
    export PATH="$PWD/.debs/root/usr/bin:$PATH" LD_LIBRARY_PATH="$PWD/.debs/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
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

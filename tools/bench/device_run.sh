#!/usr/bin/env bash
# Issue 9's benchmarks in one device call: build (DEMO=1: and the demo), the stability tables, `grade bench` (BENCH=0: not),
# gradings at other --parallel values (PARALLELS="4 10"), then as many
# GPU tests as the time left allows (SECONDS_TOTAL, default 560). Everything under $OUT.
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
total=${SECONDS_TOTAL:-560}
start=$(date +%s)
DEMO=${DEMO:-0} CTEST_SECONDS=1 tools/gpu_session.sh '^$' > "$out/build-session.txt" 2>&1
echo "== build: $(( $(date +%s) - start )) s"; grep -E "error|FAILED" "$out/demo.log" | head -5
# bubblewrap unpacked from the carried .debs by gpu_session.sh, where the machine has none.
if ! command -v bwrap > /dev/null && [ -x .debs/root/usr/bin/bwrap ]; then
  export PATH="$PWD/.debs/root/usr/bin:$PATH" LD_LIBRARY_PATH="$PWD/.debs/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# The GPU's memory in use, twice a second, and the compute processes' own, once a second.
nvidia-smi --query-gpu=timestamp,memory.used,memory.total --format=csv,noheader,nounits -lms 500 \
  > "$out/gpu-memory.csv" 2>&1 & memory_sampler=$!
nvidia-smi --query-compute-apps=timestamp,pid,process_name,used_memory --format=csv,noheader,nounits -l 1 \
  > "$out/gpu-apps.csv" 2>&1 & apps_sampler=$!
tools/bench/stability.sh build "$out/stability" "${GRADINGS:-5}" > "$out/stability.md" 2> "$out/stability-times.txt"
kill "$memory_sampler" "$apps_sampler" 2> /dev/null
echo "== stability: $(( $(date +%s) - start )) s"; cat "$out/stability-times.txt"
python3 - "$out/gpu-memory.csv" "$out/gpu-apps.csv" <<'PY' | tee -a "$out/stability-times.txt"
import collections, sys
used = [int(l.split(",")[1]) for l in open(sys.argv[1]) if l.count(",") == 2 and l.split(",")[1].strip().isdigit()]
if used: print(f"GPU memory used: max {max(used)} MiB of {open(sys.argv[1]).readline().split(',')[2].strip()} MiB")
per_stamp = collections.defaultdict(list)
for l in open(sys.argv[2]):
    f = [x.strip() for x in l.split(",")]
    if len(f) == 4 and f[3].isdigit(): per_stamp[f[0]].append(int(f[3]))
if per_stamp:
    worst = max(per_stamp.values(), key=sum)
    print(f"busiest sample: {len(worst)} processes, {sum(worst)} MiB; per process min/median/max "
          f"{min(worst)}/{sorted(worst)[len(worst)//2]}/{max(worst)} MiB")
PY
if [ "${BENCH:-1}" = 1 ]; then
  build/bin/grade bench --output-dir "$out" > "$out/bench-stdout.md" 2> "$out/bench-stderr.txt"
  echo "== grade bench (rc $?): $(( $(date +%s) - start )) s"
fi
# Extra gradings of the references, one per --parallel value in PARALLELS: their wall time.
for p in ${PARALLELS:-}; do
  s=$(date +%s%N)
  build/bin/grade --submission reference --parallel "$p" --work-dir "$out/stability/work-p$p" \
    --output "$out/stability/parallel-$p.json" > "$out/stability/parallel-$p.log" 2>&1
  echo "== --parallel $p: $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$out/stability-times.txt"
  { echo; echo "## one grading with --parallel $p"; python3 tools/bench/summarize.py walltime "$out/stability/parallel-$p.json"; } \
    >> "$out/stability.md"
done
# The device tool brings back 8 files at most: all but the tables go back as archives, packed
# before the tests start, so that a call cut off by its time limit loses only the tests' logs.
pack() {  # pack NAME.tgz: everything under $out but the tables and earlier archives
  local archive
  archive=$(mktemp --suffix=.tgz)
  (cd "$out" && tar czf "$archive" --ignore-failed-read --exclude='work-*' --exclude='*.tgz' \
    --exclude=stability.md --exclude=bench.md --exclude=bench.json . && \
    find . -mindepth 1 -maxdepth 1 ! -name stability.md ! -name bench.md ! -name bench.json ! -name '*.tgz' \
      -exec rm -rf {} + && mv "$archive" "$1")
}
{ lscpu | grep -E "^(Model name|Socket|NUMA|CPU\(s\))"; nvidia-smi topo -m; } > "$out/topology.txt" 2>&1
cat "$out/topology.txt"
pack results.tgz
echo; cat "$out/stability.md"; echo; cat "$out/bench.md" 2>/dev/null || echo "no bench.md"
left=$(( total - ($(date +%s) - start) ))
if [ "$left" -gt 60 ]; then
  timeout "$left" ctest --test-dir build -j 4 -L gpu -V --timeout 300 ${CTEST_EXCLUDE:+-E "$CTEST_EXCLUDE"} > "$out/ctest.log" 2>&1
  echo "== ctest (rc $?, $left s allowed)"
  grep -E "Test +#|tests passed|FAIL" "$out/ctest.log" | sed 's/^ *//' | cut -c1-110
  pack ctest.tgz
fi

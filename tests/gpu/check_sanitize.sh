#!/bin/sh
# grade --sanitize on a real GPU (issue 22): the references get a clean report from every tool
# (memcheck, racecheck, synccheck, initcheck), and two buggy kernels get their finding:
#   reduce_sequential_addressing/missing_syncthreads  racecheck: a race in its kernel (no barriers)
#   scan_kogge_stone/illegal_address                  memcheck: an invalid global write (n > 100,000)
# In the sandbox where bubblewrap works here (else --no-sandbox, said). Exits 77 (skipped) without a
# GPU or without compute-sanitizer; needs python3 to read results.json.
#   check_sanitize.sh GRADE REFERENCE_DIR BUGGY_DIR WORK_DIR
set -u
grade=$1 references=$2 buggy=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
[ -e /dev/nvidiactl ] || { echo "skipped: no CUDA GPU"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: python3 is needed to read results.json"; exit 1; }

# grade_sanitized NAME SUBMISSION [grade options...]: results in $work/NAME.json
grade_sanitized() {
    name=$1 submission=$2
    shift 2
    "$grade" --submission "$submission" --sanitize --no-reference-timing --work-dir "$work/$name" \
        --output "$work/$name.json" "$@" >"$work/$name.log" 2>&1
    status=$?
    if [ $status -eq 3 ] && grep -q "sandbox" "$work/$name.log"; then
        echo "note: no working sandbox here; $name graded with --no-sandbox"
        "$grade" --submission "$submission" --sanitize --no-reference-timing --no-sandbox --work-dir "$work/$name" \
            --output "$work/$name.json" "$@" >"$work/$name.log" 2>&1
        status=$?
    fi
    cat "$work/$name.log"
    [ $status -le 1 ] || { echo "FAIL: grade exited $status for $name"; exit 1; }
}

grade_sanitized references "$references"
if grep -q "compute-sanitizer not found" "$work/references.json"; then
    echo "skipped: compute-sanitizer not found on this machine (results say 'not checked')"
    exit 77
fi
mkdir -p "$work/race" "$work/oob"
cp "$buggy/reduce_sequential_addressing/missing_syncthreads/reduce_sequential_addressing.cu" "$work/race/"
cp "$buggy/scan_kogge_stone/illegal_address/scan_kogge_stone.cu" "$work/oob/"
grade_sanitized race "$work/race" --exercise reduce_sequential_addressing
grade_sanitized oob "$work/oob" --exercise scan_kogge_stone

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
failures = []
def sanitizer(name):
    return {e["name"]: e.get("sanitizer") for e in json.load(open(f"{work}/{name}.json"))["exercises"]}
for exercise, s in sanitizer("references").items():
    if s is None:
        failures.append(f"references: {exercise}: no sanitizer step"); continue
    for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
        r = s.get(tool, {})
        if not r.get("checked") or r.get("findings"):
            failures.append(f"references: {exercise}: {tool}: {json.dumps(r)[:600]}")
def expect(name, exercise, tool, kind):
    r = (sanitizer(name).get(exercise) or {}).get(tool, {})
    found = [f for f in r.get("findings", []) if f["kind"] == kind]
    if not found:
        failures.append(f"{name}: {exercise}: no {tool} {kind} finding: {json.dumps(r)[:600]}")
    else:
        f = found[0]
        print(f"{name}: {tool}: {f['kernel']} line {f['line']}: {f['explanation']}")
        if f["line"] == 0: failures.append(f"{name}: {tool}: the finding names no source line (-lineinfo?)")
expect("race", "reduce_sequential_addressing", "racecheck", "race")
expect("oob", "scan_kogge_stone", "memcheck", "invalid_access")  # "Invalid __global__ write of size 4 bytes" (H100, CUDA 13.0)
for f in failures: print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
status=$?
[ $status -eq 0 ] && echo "PASS: references clean under every tool; the race and the out-of-bounds write found"
exit $status

#!/bin/sh
# Red team 16: one student's runner takes the GPU's memory from another student's grading on the
# same GPU, as `grade class` grades two students at once on each GPU (their exercises share the
# GPU's places, one per 3.5 GiB, which bound how many exercises run, not the memory a runner
# takes). The attacker (neighbour_memory_hog/scan_kogge_stone.cu) is graded first; once it holds
# the GPU's memory (nvidia-smi), the neighbour, two copies of references, is graded beside it.
# The neighbour must lose nothing: every exercise full marks. (What the code did before session 16's
# fixes, traced in the red team's report: its timing server could not calibrate, so no speed case was
# timed in the whole grading; reference runners that could not start stayed failed; a timing alone
# that failed stayed failed; and an exercise "graded again alone" was alone only in its own grading,
# beside the same hog. Now a failed calibration and each regrade alone wait for every place of the
# GPU: grader.cpp calibrated(), grade_again_alone.) Exits 77 (skipped) without a GPU or nvidia-smi;
# needs python3.
#   check_neighbour_memory.sh GRADE ATTACK_DIR REFERENCE_DIR WORK_DIR [one]
# With `one` (red team 16b), the neighbour is a grading of ONE exercise (scan_brent_kung), started as
# the attacker's runner starts, before its hog (15 s after its first call): the neighbour calibrates
# at once, and its timings and its runner then meet the hog. Such a grading was never graded again
# alone; now, where the GPU lock is shared, it is (grader.cpp: others_may_run_beside).
set -u
grade=$1 attack=$2 references=$3 work=$4 mode=${5:-two}
rm -rf "$work" && mkdir -p "$work"
[ -e /dev/nvidiactl ] || { echo "skipped: no CUDA GPU"; exit 77; }
command -v nvidia-smi >/dev/null || { echo "skipped: no nvidia-smi to see the GPU's memory"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: python3 is needed to read results.json"; exit 1; }
gpu=${CUDA_VISIBLE_DEVICES:-0}
gpu=${gpu%%,*}
free_mib() { nvidia-smi -i "$gpu" --query-gpu=memory.free --format=csv,noheader,nounits | head -n 1 | tr -d ' '; }

"$grade" --submission "$attack" --exercise scan_kogge_stone --no-sandbox --case-time-limit 20 --time-limit 400 \
    --work-dir "$work/attacker" --output "$work/attacker.json" >"$work/attacker.log" 2>&1 &
attacker=$!
trap 'kill $attacker 2>/dev/null' EXIT

# The neighbour starts once the attacker's runner holds the memory (within 120 s); with `one`, as
# soon as the attacker's exercise has its place (its runner starting).
waited=0
while if [ "$mode" = one ]; then ! grep -q " cases*)" "$work/attacker.log"; else [ "$(free_mib)" -gt 2048 ]; fi; do
    if ! kill -0 $attacker 2>/dev/null; then
        cat "$work/attacker.log"
        echo "FAIL: the attacker's grading ended before it held the GPU's memory"
        exit 1
    fi
    [ $waited -ge 120 ] && { echo "FAIL: the attacker never held the GPU's memory (free: $(free_mib) MiB)"; exit 1; }
    sleep 1
    waited=$((waited + 1))
done
echo "the attacker's runner started ($(free_mib) MiB of the GPU's memory free); grading the neighbour"
exercises="--exercise scan_brent_kung --exercise reduce_sequential_addressing"
[ "$mode" = one ] && exercises="--exercise scan_brent_kung"

# The references' compiled code matches the hidden reference's: that must not cost (as gpu_references).
printf '{"reference_match_costs_all": false}\n' >"$work/rubric.json"
"$grade" --submission "$references" $exercises \
    --rubric "$work/rubric.json" --no-sandbox --work-dir "$work/neighbour" --output "$work/neighbour.json" >"$work/neighbour.log" 2>&1
status=$?
echo "--- the neighbour's grading (exit $status); GPU memory free at its end: $(free_mib) MiB"
cat "$work/neighbour.log"
wait $attacker
echo "--- the attacker's grading (exit $?)"
tail -n 20 "$work/attacker.log"
[ $status -le 1 ] || { echo "FAIL: grade exited $status for the neighbour"; exit 1; }

python3 - "$work/neighbour.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
failed = False
for e in results["exercises"]:
    full = e["points"] >= e["max_points"] - 1e-9
    print(f"{'ok  ' if full else 'FAIL'}  {e['name']}: {e['points']:g} of {e['max_points']:g} points "
          f"({e['status']}; {e.get('message', '')})")
    gpu = ((e.get("technique") or {}).get("checks") or {}).get("computes_on_gpu")
    if gpu is not None:
        print(f"        computes_on_gpu: {json.dumps(gpu)[:400]}")
    for c in e.get("cases", []):
        if c["status"] != "pass" or c.get("timed"):
            note = (c.get("timing") or {}).get("note", "")
            print(f"        {c['label']}: {c['status']} {c.get('summary', '')} {note}")
    failed |= not full
sys.exit(1 if failed else 0)
PY
[ $? -eq 0 ] || { echo "FAIL: the neighbour lost points to another student's runner"; exit 1; }
echo "PASS: the neighbour graded beside another student's memory hog scored full marks"

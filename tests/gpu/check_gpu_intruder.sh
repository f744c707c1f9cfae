#!/bin/sh
# A process of no grading keeps the GPU busy while the references of one exercise are graded: the
# grader must see it through NVML around the timing in turns, time the case once more, and mark the
# timing with the process. Exits 77 (skipped) without a GPU or without NVML.
#   check_gpu_intruder.sh GRADE GPU_HOG REFERENCE_DIR WORK_DIR
set -u
grade=$1 hog=$2 references=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$hog" 1 >/dev/null; status=$?
[ $status -eq 77 ] && { echo "skipped: no CUDA GPU"; exit 77; }
"$hog" 120 >"$work/hog.log" 2>&1 &
hog_pid=$!
trap 'kill $hog_pid 2>/dev/null' EXIT
sleep 2
"$grade" --submission "$references" --exercise reduce_unroll_last_warp --no-sandbox \
    --work-dir "$work/work" --output "$work/results.json" >"$work/grade.log" 2>&1
status=$?
cat "$work/grade.log"
if grep -q "not watching the GPU for other processes" "$work/grade.log"; then
    echo "skipped: this machine has no NVML the grader can use"
    exit 77
fi
[ $status -le 1 ] || { echo "FAIL: grade exited $status"; exit 1; }
grep -q '"other_processes": "[^"]*gpu_hog' "$work/results.json" ||
    { echo "FAIL: the timed case does not name gpu_hog in other_processes"; exit 1; }
grep -q '"turns": 2' "$work/results.json" || { echo "FAIL: the timed case was not timed twice"; exit 1; }
echo "PASS: the busy GPU was seen, the case timed twice and marked"

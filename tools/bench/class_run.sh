#!/bin/sh
# A class of the repository's own kernels graded on this GPU with `grade class`: 10 copies of the
# references, 2 stub submissions, every buggy kernel under tests/buggy/ and a few attacks from
# tests/adversarial/, each a student of its own; then the first reference copy graded alone, to
# compare its points with the same submission inside the busy class.
#   tools/bench/class_run.sh BUILD_DIR OUT_DIR [PER_GPU] [REFERENCE_COPIES]
# REFERENCES_ONLY=1: the reference copies alone (no stubs, buggy kernels or attacks).
# BUGGY_EVERY=K: only every K-th buggy kernel (1, the default: all of them).
set -eu
build=$1 out=$2 per_gpu=${3:-3} copies=${4:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
class="$out/class-submissions"
rm -rf "$class" "$out/graded"
mkdir -p "$class"
for i in $(seq -w 1 "$copies" | sed 's/^/0/;s/^0\(..\)$/\1/'); do
    mkdir -p "$class/ref$i" && cp "$root"/reference/*.cu "$class/ref$i/"
done
[ "${REFERENCES_ONLY:-0}" = 1 ] || for i in 1 2; do
    mkdir -p "$class/stub$i"
    for e in "$root"/exercises/*/; do cp "$e"*.cu "$class/stub$i/"; done
done
k=0
[ "${REFERENCES_ONLY:-0}" = 1 ] || for dir in "$root"/tests/buggy/*/*/; do
    k=$((k + 1))
    [ $(( (k - 1) % ${BUGGY_EVERY:-1} )) -eq 0 ] || continue
    name="buggy_$(basename "$(dirname "$dir")")_$(basename "$dir")"
    mkdir -p "$class/$name" && cp "$dir"*.cu "$class/$name/"
done
[ "${REFERENCES_ONLY:-0}" = 1 ] || for attack in scan_kogge_stone/relays_every_message scan_kogge_stone/replays_cached_output \
              scan_hierarchical/pasted_reference_ptx; do
    name="attack_$(basename "$attack")"
    mkdir -p "$class/$name" && cp "$root/tests/adversarial/$attack"/*.cu "$class/$name/"
done
echo "students: $(ls "$class" | wc -l)" >&2
start=$(date +%s%N)
# The reference copies match the reference's compiled code: shown, not priced (as in the demo).
"$build/bin/grade" class --submissions "$class" --output-dir "$out/graded" --per-gpu "$per_gpu" \
    --rubric "$build/demo-rubric.json" \
    > "$out/class.log" 2>&1 || echo "grade class exit $?" >&2
echo "class wall time: $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2
start=$(date +%s%N)
"$build/bin/grade" --submission "$class/ref01" --output "$out/ref01-alone.json" --work-dir "$out/alone-work" \
    --rubric "$build/demo-rubric.json" \
    > "$out/ref01-alone.log" 2>&1 || true
echo "ref01 alone: $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2
python3 - "$out" <<'PY'
import json, sys, csv
out = sys.argv[1]
alone = json.load(open(f"{out}/ref01-alone.json"))
inclass = json.load(open(f"{out}/graded/students/ref01/results.json"))
def pts(r): return {e["name"]: e.get("points") for e in r["exercises"]}
a, c = pts(alone), pts(inclass)
print("ref01 points alone vs in class:", sum(a.values()), sum(c.values()), "identical" if a == c else f"DIFFER {a} {c}")
refs = []
for row in csv.DictReader(open(f"{out}/graded/class.csv")):
    refs.append(row)
print("class.csv rows:", len(refs))
print("header:", list(refs[0].keys())[:8], "...")
tot = [r for r in refs if r["student"].startswith("ref")]
print("reference copies' totals:", sorted(set(r.get("total") or r.get("points") for r in tot)))
PY
tail -15 "$out/class.log"

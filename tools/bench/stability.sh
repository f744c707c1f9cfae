#!/bin/sh
# The stability table: the references graded N times in a row (default 5) on this GPU, then the
# same submission graded three times at once (the batch or CI case), and one grading's wall time.
#   tools/bench/stability.sh BUILD_DIR OUT_DIR [N]
# Prints Markdown tables; the results files stay in OUT_DIR.
set -eu
build=$1 out=$2 n=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
grade() {  # grade NAME: the references, results in $out/NAME.json, log in $out/NAME.log
    "$build/bin/grade" --submission "$root/reference" --work-dir "$out/work-$1" --output "$out/$1.json" \
        >"$out/$1.log" 2>&1 || [ $? -eq 1 ]
}
i=1
while [ $i -le "$n" ]; do
    start=$(date +%s%N)
    grade "alone-$i"
    echo "grading $i alone: $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2
    i=$((i + 1))
done
start=$(date +%s%N)
grade beside-1 & a=$!
grade beside-2 & b=$!
grade beside-3 & c=$!
wait $a $b $c
echo "three gradings at once: $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2

echo "## $n gradings of the references, one after another"
python3 "$here/summarize.py" stability $(i=1; while [ $i -le "$n" ]; do echo "$out/alone-$i.json"; i=$((i + 1)); done)
echo
echo "## three gradings of the references at once, on one GPU"
python3 "$here/summarize.py" stability "$out/beside-1.json" "$out/beside-2.json" "$out/beside-3.json"
echo
echo "## where one grading's time goes (the first alone)"
python3 "$here/summarize.py" walltime "$out/alone-1.json"

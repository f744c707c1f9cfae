#!/usr/bin/env bash
# Assembles what a student receives: this README, docs/CONTRACT.md, and every exercise's task
# statement and stub, in teaching order. The references are never copied.
#   student_template/make_handout.sh OUTPUT_DIR
# The handout keeps the repository's layout, so the READMEs' links to docs/CONTRACT.md work in
# both: exercises/NN_name/{README.md,name.cu} goes to OUTPUT_DIR/exercises/NN_name/ (the folder
# keeps its number, the stub keeps the name the grader looks for: name.cu, the prefix stripped).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: make_handout.sh OUTPUT_DIR}
mkdir -p "$out/exercises" "$out/docs"
cp "$repo/student_template/README.md" "$out/README.md"
cp "$repo/docs/CONTRACT.md" "$out/docs/CONTRACT.md"
count=0
for dir in "$repo"/exercises/[0-9][0-9]_*/; do
  folder=$(basename "$dir")
  name=${folder#[0-9][0-9]_}
  if [ ! -f "$dir/README.md" ] || [ ! -f "$dir/$name.cu" ]; then
    echo "make_handout.sh: $folder needs README.md and $name.cu" >&2
    exit 1
  fi
  mkdir -p "$out/exercises/$folder"
  cp "$dir/README.md" "$dir/$name.cu" "$out/exercises/$folder/"
  count=$((count + 1))
done
echo "handout written to $out ($count exercises)"

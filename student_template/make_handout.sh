#!/usr/bin/env bash
# Assembles what a student receives: this README, CONTRACT.md, and every exercise's task
# statement and stub. The references are never copied.
#   student_template/make_handout.sh OUTPUT_DIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: make_handout.sh OUTPUT_DIR}
mkdir -p "$out/exercises"
cp "$repo/student_template/README.md" "$out/README.md"
contract="$repo/../shared/CONTRACT.md"
if [ -f "$contract" ]; then cp "$contract" "$out/CONTRACT.md"; else echo "note: no CONTRACT.md beside the repository" >&2; fi
for dir in "$repo"/exercises/*/; do
  name=$(basename "$dir")
  mkdir -p "$out/exercises/$name"
  cp "$dir/README.md" "$dir/$name.cu" "$out/exercises/$name/"
done
echo "handout written to $out ($(ls "$out/exercises" | wc -l) exercises)"

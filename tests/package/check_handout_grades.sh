#!/usr/bin/env bash
# On a GPU: the assembled handout's own grader, built from a clean copy as a student builds it,
# grades the references (copied in as a student's files) to full marks and the stubs to zero. The
# checks are tests/gpu/check_grading's, with the expectations of the repository's own grader.
# Without a GPU it prints why and exits 77 (CTest: skipped).
#   check_handout_grades.sh REPOSITORY BUILD_DIR WORK_DIR CHECK_GRADING
set -euo pipefail
repo=$1 build=$2 work=$3 check_grading=$4
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "skipped: no GPU here (nvidia-smi lists none); the handout's build is checked by package_handout"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
cmake --build "$build" --target handout
cp -r "$build/handout" "$work/handout"
(cd "$work/handout" && PATH=/usr/local/cuda/bin:$PATH cmake --workflow --preset build) > "$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log"; exit 1; }
grade=$work/handout/build/bin/grade

# The references as a student's files: each stub replaced by its exercise's reference.
cp -r "$work/handout/exercises" "$work/references"
for dir in "$work"/references/[0-9][0-9]_*/; do
  name=$(basename "$dir")
  name=${name#[0-9][0-9]_}
  cp "$repo/reference/$name.cu" "$dir/$name.cu"
done
status=0
"$check_grading" --grade "$grade" --submission "$work/references" --expect "$repo/tests/gpu/expect_references.json" \
  --work "$work/grading-references" || status=1
"$check_grading" --grade "$grade" --submission "$work/handout/exercises" --expect "$repo/tests/gpu/expect_stubs.json" \
  --work "$work/grading-stubs" || status=1
exit $status

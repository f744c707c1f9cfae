#!/usr/bin/env bash
# The students' handout, as CI can check it without a GPU:
#   1. the `handout` target assembles it;
#   2. every file in it is a copy of a file the handout may carry (student_template/, the contract,
#      the exercises' tasks and stubs, the grader's cmake/, harness/ and grading/ sources), or one
#      of the two generated files of grader/references/;
#   3. no line of a reference source appears anywhere in it, the compiled references included
#      (and the check finds one planted there, so it can fail);
#   4. a clean copy runs the two steps of the students' one command, `cmake --workflow --preset grade`
#      (the configure preset `default`, the build preset `grade`): it configures and builds, then
#      grades, or, without a GPU, says why it cannot and grades nothing. The copy is compiled with -O0
#      instead of the Release flags' -O3: this proves the handout's project is complete (configures,
#      compiles, links, runs); the same sources with -O3 are the main build's, and -O0 halves the
#      time this test takes on CI's two cores.
#   check_handout.sh REPOSITORY BUILD_DIR WORK_DIR
set -euo pipefail
repo=$1 build=$2 work=$3
handout=$build/handout
rm -rf "$work" && mkdir -p "$work"

step() { echo "== $*"; }
fail() {
  echo "FAIL: $*"
  exit 1
}

step "assemble: cmake --build $build --target handout"
cmake --build "$build" --target handout

step "every file is an allowed copy or a generated file"
# The repository file a handout file must be a copy of; empty: the handout may not hold it.
source_of() {
  case "$1" in
    README.md | CMakeLists.txt | CMakePresets.json) echo "student_template/$1" ;;
    .gitignore) echo student_template/gitignore ;;
    docs/CONTRACT.md) echo docs/CONTRACT.md ;;
    exercises/[0-9][0-9]_*/README.md | exercises/[0-9][0-9]_*/*.cu) echo "$1" ;;
    grader/grading/integrations/*) ;;
    grader/cmake/* | grader/harness/* | grader/grading/*) echo "${1#grader/}" ;;
  esac
}
# Anything but files and folders (a link, say) would escape both checks below.
odd=$(find "$handout" ! -type f ! -type d)
[ -z "$odd" ] || fail "the handout holds what is neither a file nor a folder: $odd"
# Only files the repository tracks, where it is a git checkout: no editor backup or local rubric.
tracked=$work/tracked
if git -C "$repo" rev-parse --is-inside-work-tree > /dev/null 2>&1; then git -C "$repo" ls-files > "$tracked"; fi
files=0
while IFS= read -r -d '' path; do
  relative=${path#"$handout"/}
  files=$((files + 1))
  case "$relative" in
    grader/references/grader_references.o | grader/references/references.cmake) continue ;;
  esac
  original=$(source_of "$relative")
  [ -n "$original" ] || fail "the handout holds $relative, which it may not"
  cmp -s "$path" "$repo/$original" || fail "$relative is not a copy of $original"
  [ ! -s "$tracked" ] || grep -qxF -- "$original" "$tracked" || fail "$relative is a copy of $original, which git does not track"
done < <(find "$handout" -type f -print0)
[ "$files" -gt 100 ] || fail "only $files files in the handout"
echo "$files files"

step "no line of a reference source is in the handout"
# Each reference line of 20 characters or more that no file the handout carries also has (the
# stubs share the launcher's signature, for one) must appear in no handout file, binary or not.
carried=(student_template/README.md student_template/CMakeLists.txt student_template/CMakePresets.json
  student_template/gitignore docs/CONTRACT.md exercises cmake harness grading)
: > "$work/reference_lines"
for source in "$repo"/reference/*.cu; do
  sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$source" | awk 'length($0) >= 20' | sort -u |
    while IFS= read -r line; do
      (cd "$repo" && grep -rqF --exclude-dir=integrations -- "$line" "${carried[@]}") || printf '%s\n' "$line"
    done >> "$work/reference_lines"
done
lines=$(wc -l < "$work/reference_lines")
[ "$lines" -gt 100 ] || fail "only $lines distinctive reference lines: the check would prove little"
if grep -rlaF -f "$work/reference_lines" "$handout"; then fail "reference source in the files above"; fi
echo "none of $lines reference lines found"
# The same check must find a reference that is there: one planted in a copy of the compiled object.
cp "$handout/grader/references/grader_references.o" "$work/planted.o"
cat "$repo/reference/scan_hierarchical.cu" >> "$work/planted.o"
grep -qaF -f "$work/reference_lines" "$work/planted.o" || fail "the check missed a planted reference source"

step "the compiled references carry no debug information and name no file of the repository"
object=$handout/grader/references/grader_references.o
if readelf -S -W "$object" | grep -E '\.(nv_)?debug'; then fail "debug sections in $object"; fi
if grep -qaF -- "$repo" "$object"; then fail "$object names $repo"; fi
# The device code is compressed inside the fatbin, where only cuobjdump (not on CI) reads it.
if command -v cuobjdump > /dev/null; then
  if cuobjdump -ptx "$object" | grep -E '^[[:space:]]*\.(file|loc)[[:space:]]'; then fail "line information in the PTX"; fi
  echo "cuobjdump: no .file or .loc in the PTX"
else
  echo "no cuobjdump here: the device code's line information is checked where there is one"
fi

step "a clean copy: cmake --preset default && cmake --build --preset grade (the grade workflow, at -O0)"
cp -r "$handout" "$work/handout"
set +e
(cd "$work/handout" && export PATH=/usr/local/cuda/bin:$PATH &&
  cmake --preset default -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DCMAKE_CUDA_FLAGS_RELEASE="-O0 -DNDEBUG" \
    -DGRADER_ORCHESTRATION_OPTIMIZATION=-O0 &&
  cmake --build --preset grade) > "$work/workflow.log" 2>&1
status=$?
set -e
tail -n 25 "$work/workflow.log"
for program in grade grader_reference_runner; do
  [ -x "$work/handout/build/bin/$program" ] || fail "the handout built no bin/$program"
done
if grep -q "grade: nothing was graded" "$work/workflow.log"; then
  # No GPU here: grade must have said why, and graded nothing.
  grep -q "^grade: no usable GPU" "$work/workflow.log" || fail "grade refused without naming the GPU"
  [ "$status" -ne 0 ] || fail "the workflow succeeded without grading"
  [ ! -e "$work/handout/build/results.json" ] || fail "results.json written without a grading"
else
  # A GPU: the stubs were graded, and fail; that is the grading's answer, not a failed build.
  grep -q "^total" "$work/workflow.log" || fail "neither graded nor refused"
  grep -q "^graded: .* cases fail in" "$work/workflow.log" || fail "no line saying how many cases fail"
  [ "$status" -eq 0 ] || fail "the workflow failed although grading did its work (failing cases are no build error)"
  [ -f "$work/handout/build/results.json" ] || fail "no results.json after grading"
fi
"$work/handout/build/bin/grade" --list --exercise scan_hierarchical | grep -q "n=4196353/int" ||
  fail "the handout's grade does not list the cases"
echo "handout: passed"

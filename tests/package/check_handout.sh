#!/usr/bin/env bash
# The students' handout, as CI can check it without a GPU:
#   1. the `handout_for_tests` target assembles it: the `handout` target's handout with the
#      references compiled for fewer GPU architectures (student_template/handout.cmake); the
#      `handout` target's rules compile them for every architecture of GRADER_HANDOUT_ARCHITECTURES,
#      machine code for each -real entry and PTX for each -virtual one, at least one of those;
#   2. every file in it is a copy of a file the handout may carry (student_template/, the contract,
#      the exercises' tasks and stubs, the grader's cmake/, harness/ and grading/ sources), or one
#      of the two generated files of grader/references/;
#   3. no line of a reference source appears anywhere in it, the compiled references included
#      (and the check finds one planted there, so it can fail);
#   4. a clean copy runs the two steps of the students' one command, `cmake --workflow --preset grade`
#      (the configure preset `default`, the build preset `grade`): it configures and builds, then
#      grades, or, without a GPU, says why it cannot and grades nothing. This proves the handout's
#      project is complete (configures, finds every file it compiles in the copy, links, runs). The
#      copy's objects whose compile is the main build's (same compiler and flags, the same
#      preprocessed text but for paths: reuse_objects.sh, its compiler launcher) are the main
#      build's, copied; the others (sandbox_default.cpp, whose default the handout turns off, for
#      one) are compiled. So CI's two cores compile the grader once, not twice.
#   check_handout.sh REPOSITORY BUILD_DIR WORK_DIR
set -euo pipefail
repo=$1 build=$2 work=$3
handout=$build/handout-for-tests
rm -rf "$work" && mkdir -p "$work"

step() { echo "== $*"; }
fail() {
  echo "FAIL: $*"
  exit 1
}

step "the release's handout compiles the references for every architecture of GRADER_HANDOUT_ARCHITECTURES"
architectures=$(sed -n 's/^GRADER_HANDOUT_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$architectures" ] || fail "no GRADER_HANDOUT_ARCHITECTURES in $build/CMakeCache.txt"
[ -f "$build/build.ninja" ] || fail "$build is no Ninja build tree (the presets' generator)"
compiles=$(ninja -C "$build" -t commands handout | grep -F 'CMakeFiles/handout_references.dir/reference/' || true)
sources=$(find "$repo/reference" -maxdepth 1 -name '*.cu' | wc -l)
[ "$(printf '%s\n' "$compiles" | grep -c . || true)" -eq "$sources" ] ||
  fail "the handout target compiles $(printf '%s\n' "$compiles" | grep -c . || true) references, not the $sources of reference/"
virtual=0
IFS=';' read -r -a entries <<< "$architectures"
for entry in "${entries[@]}"; do
  case "$entry" in
    *-real) code="sm_${entry%-real}" ;;
    *-virtual) code="compute_${entry%-virtual}" virtual=$((virtual + 1)) ;;
    *) code="compute_$entry,sm_$entry" virtual=$((virtual + 1)) ;;
  esac
  flag="--generate-code=arch=compute_${entry%-*},code=[$code]"
  if printf '%s\n' "$compiles" | grep -vqF -- "$flag"; then fail "a reference is compiled without $flag for $entry"; fi
done
[ "$virtual" -gt 0 ] || fail "GRADER_HANDOUT_ARCHITECTURES ($architectures) has no PTX for later GPUs"
echo "$sources references, each for $architectures"

step "assemble: cmake --build $build --target handout_for_tests"
cmake --build "$build" --target handout_for_tests

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

step "a clean copy: cmake --preset default && cmake --build --preset grade (the grade workflow; the main build's objects where they are the copy's)"
cp -r "$handout" "$work/handout"
reuse_log=$work/reuse.log
: > "$reuse_log"
set +e
(cd "$work/handout" && export PATH=/usr/local/cuda/bin:$PATH &&
  launcher="$repo/tests/package/reuse_objects.sh;$repo;$(cd "$build" && pwd);$work/handout;$reuse_log" &&
  cmake --preset default "-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" "-DCMAKE_CUDA_COMPILER_LAUNCHER=$launcher" &&
  cmake --build --preset grade) > "$work/workflow.log" 2>&1
status=$?
set -e
tail -n 25 "$work/workflow.log"
echo "objects: $(grep -c '^reused ' "$reuse_log") the main build's, $(grep -c '^compiled ' "$reuse_log") compiled:"
grep '^compiled ' "$reuse_log" || true
# sandbox_default.cpp holds the handout's own sandbox default: never the main build's object.
grep -q '^compiled grader/grading/CMakeFiles/grading_core.dir/src/sandbox_default\.cpp\.o: ' "$reuse_log" ||
  fail "the copy's sandbox_default.cpp was not compiled: its sandbox default would be the main build's"
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

#!/usr/bin/env bash
# The installed grader and the Gradescope package, without a GPU:
#   1. `cmake --install` puts a grader in a prefix that runs from there (bin/, lib/, share/);
#   2. the gradescope_autograder target makes autograder.zip with Gradescope's two scripts at its
#      root, the config, and the grader's sources, which configure on their own as setup.sh does;
#   3. the package's run_autograder, run as Gradescope runs it (/autograder laid out in WORK_DIR),
#      grades a submission through the installed grader and writes Gradescope's results.json;
#      the fake toolchain (tests/fake_toolchain) stands in for nvcc and the GPU;
#   4. when grade cannot grade, run_autograder fails and writes no results: never a score;
#   5. the GitHub Actions workflow calls grade with options grade has.
#   check_gradescope.sh REPOSITORY BUILD_DIR WORK_DIR FAKE_NVCC FAKE_RUNNER
set -euo pipefail
repo=$1 build=$2 work=$3 fake_nvcc=$4 fake_runner=$5
root=$work/autograder
rm -rf "$work" && mkdir -p "$root/source" "$root/submission"

step() { echo "== $*"; }
fail() {
  echo "FAIL: $*"
  exit 1
}

step "cmake --install $build --prefix $root/grader"
cmake --install "$build" --prefix "$root/grader" > "$work/install.log"
for file in bin/grade bin/grader_reference_runner lib/grader_runner.o lib/reference-ptx/scan_hierarchical.ptx share/pmpp-grader/CONTRACT.md \
  share/pmpp-grader/results.schema.json share/pmpp-grader/rubric.schema.json share/pmpp-grader/rubric.example.json; do
  [ -f "$root/grader/$file" ] || fail "the install lacks $file"
done
"$root/grader/bin/grade" --version | grep -q "^grade " || fail "the installed grade does not run"
# Its --help names the installed files, not the repository's (which a course machine does not have).
installed_help=$("$root/grader/bin/grade" --help)
for file in rubric.schema.json rubric.example.json CONTRACT.md; do
  grep -qF "$(cd "$root/grader/share/pmpp-grader" && pwd -P)/$file" <<< "$installed_help" ||
    fail "the installed grade --help does not name share/pmpp-grader/$file"
done

step "cmake --build $build --target gradescope_autograder"
cmake --build "$build" --target gradescope_autograder
(cd "$root/source" && cmake -E tar xf "$build/gradescope/autograder.zip")
for file in setup.sh run_autograder; do [ -x "$root/source/$file" ] || fail "$file is not an executable at the root"; done
for file in config/rubric.json config/cuda_architecture config/grade_args source/CMakeLists.txt source/reference; do
  [ -e "$root/source/$file" ] || fail "the package lacks $file"
done
for absent in source/tests source/student_template source/grading/integrations; do
  [ ! -e "$root/source/$absent" ] || fail "the package holds $absent"
done
step "the package's sources configure as setup.sh configures them"
PATH=/usr/local/cuda/bin:$PATH cmake -S "$root/source/source" -B "$work/package-build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$(cat "$root/source/config/cuda_architecture")" \
  -DGRADER_BUILD_TESTS=OFF -DGRADER_BUILD_PACKAGES=OFF > "$work/configure.log" 2>&1 ||
  { tail -n 30 "$work/configure.log"; fail "the package's sources do not configure"; }

step "run_autograder grades a submission through the installed grader"
printf '%s\n' "// FAKE_RUNNER: correct" > "$root/submission/scan_kogge_stone.cu"
printf '%s\n' "FAKE_COMPILE_ERROR" > "$root/submission/scan_brent_kung.cu"
# Written as an editor on Windows might: CRLF line ends, and no newline after the last line.
{
  printf '%s\r\n' --nvcc "$fake_nvcc" --reference-runner "$fake_runner" --exercise scan_kogge_stone,scan_brent_kung \
    --case-time-limit 5 --gpu-lock-dir "$work"
  # Where this machine cannot sandbox (test_sandbox says why): the fake runners are the tests' own.
  bwrap --unshare-all --die-with-parent --ro-bind / / true 2> /dev/null || printf '%s\r\n' --no-sandbox
  printf '%s\r\n%s' --reps 5
} > "$root/source/config/grade_args"
AUTOGRADER_ROOT=$root GRADE=$root/grader/bin/grade TMPDIR=$work "$root/source/run_autograder" > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "run_autograder failed on a gradable submission"; }
results=$root/results/results.json
[ -f "$results" ] || fail "no $results"
[ -f "$root/results/pmpp-results.json" ] || fail "no pmpp-results.json beside it"
for field in '"score"' '"tests"' '"leaderboard"' '"name": "scan_kogge_stone: correctness"' \
  '"name": "scan_brent_kung: correctness"' '"visibility": "after_published"'; do
  grep -q "$field" "$results" || fail "results.json lacks $field"
done
grep -q '"status": "failed"' "$results" || fail "the compile error did not fail a test"
# The last option, --reps 5, counted: 5 rounds of timed batches for each speed case, not up to the default 60.
grep -q '"rounds": 5,' "$root/results/pmpp-results.json" || fail "the last line of config/grade_args was lost"

step "run_autograder when grade cannot grade: a failure, no results"
rm -rf "$root/results"
printf '\n--arch\n100\n' >> "$root/source/config/grade_args"
set +e
AUTOGRADER_ROOT=$root GRADE=$root/grader/bin/grade TMPDIR=$work "$root/source/run_autograder" > "$work/refused.log" 2>&1
status=$?
set -e
cat "$work/refused.log"
[ "$status" -eq 3 ] || fail "run_autograder exited $status, not grade's 3"
[ ! -e "$root/results/results.json" ] || fail "results.json written for a grading that did not happen"

step "the GitHub Actions workflow's grade command uses grade's options"
workflow=$repo/grading/integrations/github-actions/grade.yml
# The command: the line that starts "$GRADE" and the lines it continues onto with a backslash.
options=$(awk '/"\$GRADE" /{on=1} on{print; if ($0 !~ /\\$/) on=0}' "$workflow" | grep -o -- '--[a-z][a-z-]*' | sort -u)
[ -n "$options" ] || fail "found no grade command in $workflow"
help=$("$root/grader/bin/grade" --help)
for option in $options; do
  grep -q -- "^  $option " <<< "$help" || fail "grade.yml passes $option, which grade --help does not list"
done
echo "grade.yml uses" $options
echo "gradescope: passed"

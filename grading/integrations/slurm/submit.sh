#!/bin/bash
# Grades a class on a Slurm cluster: a job array of N tasks, one GPU each, each grading share I of
# the students, then a merge job once every task has ended. See README.md beside this file.
#
#   submit.sh --tasks N --submissions DIR --output-dir OUT [-- GRADING OPTIONS]
#
# Environment: GRADE (default: grade on the PATH of the jobs), GPUS_PER_TASK (default 1; 0 asks for
# none, for a cluster without GPU scheduling or the tests' fake toolchain), SBATCH_EXTRA (more
# sbatch options for both jobs, e.g. "--partition=gpu --account=course").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tasks= submissions= output=
while [ $# -gt 0 ]; do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
    --submissions) submissions=$2; shift 2 ;;
    --output-dir) output=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "submit.sh: unknown option $1 (see README.md)" >&2; exit 2 ;;
  esac
done
if [ -z "$tasks" ] || [ -z "$submissions" ] || [ -z "$output" ] || ! [ "$tasks" -ge 1 ] 2>/dev/null; then
  echo "usage: submit.sh --tasks N --submissions DIR --output-dir OUT [-- GRADING OPTIONS]" >&2
  exit 2
fi
submissions=$(cd "$submissions" && pwd)
mkdir -p "$output"
output=$(cd "$output" && pwd)
gpus=()
[ "${GPUS_PER_TASK:-1}" != 0 ] && gpus=(--gpus="${GPUS_PER_TASK:-1}")
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_EXTRA:-} --array="0-$((tasks - 1))" "${gpus[@]}" --chdir="$output" \
  --export=ALL "$here/grade_class_shard.sbatch" "$submissions" "$output" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_EXTRA:-} --dependency="afterany:$array" --chdir="$output" --export=ALL \
  "$here/grade_class_merge.sbatch" "$output" "$submissions")
merge=${merge%%;*}
echo "job array $array ($tasks tasks), then merge job $merge; the class's results: $output/report.html"

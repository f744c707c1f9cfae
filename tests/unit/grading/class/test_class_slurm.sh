#!/bin/bash
# grading/integrations/slurm/ on a real Slurm: a one-node cluster started here (munged, slurmctld and
# slurmd of Debian's slurm-wlm and munge, on ports and files of its own, nothing of the machine's own
# configuration used), submit.sh's job array of two tasks grading a class of five with the fake
# toolchain (no GPU asked for), and the merge job after it; then the class's files are checked; then a
# late submission and the array again: only that student is graded, by the task of their shard.
# Needs root (the daemons) and the packages: otherwise it says why and exits 77 (skipped).
#
#   test_class_slurm.sh GRADE FAKE_NVCC FAKE_RUNNER SUBMIT_SH
set -u
grade=$1 fake_nvcc=$2 fake_runner=$3 submit=$4

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "starting slurmctld, slurmd and munged needs root"
for tool in munged mungekey slurmctld slurmd sbatch squeue sinfo; do
  command -v "$tool" > /dev/null || skip "no $tool here (Debian: apt-get install slurm-wlm munge)"
done

work=$(mktemp -d /tmp/grader_class_slurm_XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
  sleep 1
  for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for log in "$work"/*.log "$work"/out/*.log; do [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }; done
  exit 1
}

# munge, on a socket and key of this test's own.
mkdir -p "$work/munge"
chmod 700 "$work/munge"
mungekey --create --keyfile="$work/munge/munge.key" > /dev/null 2>&1 ||
  dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 2> /dev/null
chmod 400 "$work/munge/munge.key"
munged --force --foreground --socket="$work/munge/munge.sock" --key-file="$work/munge/munge.key" \
  --log-file="$work/munge/munged.log" --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" \
  > "$work/munged.log" 2>&1 &
pids+=($!)

host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf
cat > "$SLURM_CONF" << EOF
ClusterName=gradertest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=grading Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
for k in $(seq 50); do [ -S "$work/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$work/munge/munge.sock" ] || fail "munged did not start"
slurmctld -D -i -f "$SLURM_CONF" > "$work/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" > "$work/slurmd.log" 2>&1 &
pids+=($!)
idle=no
for k in $(seq 60); do
  if sinfo -h -N -o '%T' 2> /dev/null | grep -q '^idle'; then idle=yes; break; fi
  sleep 0.5
done
[ $idle = yes ] || fail "the node did not come up: $(sinfo -N 2>&1)"

# A class of five: two full marks, a stub, a crash, a compile error; one case each.
subs=$work/submissions
for s in alice bob carol dave erin; do mkdir -p "$subs/$s"; done
echo '// FAKE_RUNNER: correct' > "$subs/alice/scan_kogge_stone.cu"
echo '// FAKE_RUNNER: correct' > "$subs/bob/scan_kogge_stone.cu"
echo '// FAKE_RUNNER: unwritten' > "$subs/carol/scan_kogge_stone.cu"
echo '// FAKE_RUNNER: crash_at:7' > "$subs/dave/scan_kogge_stone.cu"
echo 'FAKE_COMPILE_ERROR' > "$subs/erin/scan_kogge_stone.cu"
sandbox=()
bwrap --unshare-all --die-with-parent --ro-bind / / true > /dev/null 2>&1 || sandbox=(--no-sandbox)

out=$work/out
# A GPU lock of its own: the default (/tmp) is shared with the gradings of the tests CTest runs beside it.
mkdir -p "$work/gpu-lock"
GRADE=$grade GPUS_PER_TASK=0 SBATCH_EXTRA="--cpus-per-task=1" "$submit" --tasks 2 --submissions "$subs" \
  --output-dir "$out" -- --nvcc "$fake_nvcc" --reference-runner "$fake_runner" --exercise scan_kogge_stone \
  --case n=1025/int --per-gpu 2 --gpu-lock-dir "$work/gpu-lock" "${sandbox[@]}" > "$work/submit.log" 2>&1 || fail "submit.sh failed: $(cat "$work/submit.log")"
cat "$work/submit.log"
done=no
for k in $(seq 600); do
  if [ -z "$(squeue -h -o %i 2> /dev/null)" ]; then done=yes; break; fi
  sleep 0.5
done
[ $done = yes ] || fail "the jobs did not finish in 5 minutes: $(squeue 2>&1)"

[ -f "$out/class.csv" ] || fail "no class.csv: the merge job did not run"
[ -f "$out/report.html" ] && [ -f "$out/results.json" ] || fail "no report.html or results.json"
rows=$(($(wc -l < "$out/class.csv") - 1))
[ "$rows" = 5 ] || fail "class.csv has $rows rows, not 5: $(cat "$out/class.csv")"
for s in alice bob carol dave erin; do
  [ -f "$out/students/$s/results.json" ] || fail "$s was not graded"
done
# Each student by the task of their shard: the first 8 bytes of the SHA-256 of the folder's name, mod
# N (the README's recipe, computed here in the shell: alice, dave and erin in 1/2, bob and carol in 0/2).
for s in alice bob carol dave erin; do
  h=$(printf %s "$s" | sha256sum | cut -c1-16)
  shard=$(( ((0x${h:0:8} % 2) * (4294967296 % 2) + 0x${h:8:8} % 2) % 2 ))
  grep -q "\"shard\": \"$shard/2\"" "$out/students/$s/record.json" || fail "$s was not graded by task $shard"
done
grep -q '^alice,8,8,10,passed,' "$out/class.csv" || fail "alice's row: $(grep alice "$out/class.csv")"
grep -q '^erin,0,0,10,failed,' "$out/class.csv" || fail "erin's row: $(grep erin "$out/class.csv")"
ls "$out"/grade-class-*_0.log "$out"/grade-class-*_1.log "$out"/grade-class-merge-*.log > /dev/null ||
  fail "the tasks' logs are missing"
echo "the job array graded 5 students in 2 tasks and the merge job wrote the class's results:"
cat "$out/class.csv"

# A late submission, and the same array submitted again: frank is graded by his shard's task, nobody
# else is graded again (their shards did not move), and the class has six rows.
for s in alice bob carol dave erin; do cp "$out/students/$s/record.json" "$work/$s.record.json"; done
mkdir -p "$subs/frank"
echo '// FAKE_RUNNER: correct' > "$subs/frank/scan_kogge_stone.cu"
GRADE=$grade GPUS_PER_TASK=0 SBATCH_EXTRA="--cpus-per-task=1" "$submit" --tasks 2 --submissions "$subs" \
  --output-dir "$out" -- --nvcc "$fake_nvcc" --reference-runner "$fake_runner" --exercise scan_kogge_stone \
  --case n=1025/int --per-gpu 2 --gpu-lock-dir "$work/gpu-lock" "${sandbox[@]}" > "$work/submit2.log" 2>&1 || fail "submit.sh failed: $(cat "$work/submit2.log")"
done=no
for k in $(seq 600); do
  if [ -z "$(squeue -h -o %i 2> /dev/null)" ]; then done=yes; break; fi
  sleep 0.5
done
[ $done = yes ] || fail "the second jobs did not finish in 5 minutes: $(squeue 2>&1)"
rows=$(($(wc -l < "$out/class.csv") - 1))
[ "$rows" = 6 ] || fail "after the late submission class.csv has $rows rows, not 6: $(cat "$out/class.csv")"
grep -q '^frank,8,8,10,passed,' "$out/class.csv" || fail "frank's row: $(grep frank "$out/class.csv")"
for s in alice bob carol dave erin; do
  cmp -s "$out/students/$s/record.json" "$work/$s.record.json" || fail "$s was graded again after frank came"
done
h=$(printf %s frank | sha256sum | cut -c1-16)
shard=$(( ((0x${h:0:8} % 2) * (4294967296 % 2) + 0x${h:8:8} % 2) % 2 ))
grep -q "\"shard\": \"$shard/2\"" "$out/students/frank/record.json" || fail "frank was not graded by task $shard"
echo "the late submission was graded by task $shard alone:"
cat "$out/class.csv"

#!/bin/bash
# Airy under Slurm, for real: a one-node cluster (munged, slurmctld,
# slurmd; 2 CPUs) started here as root from a generated slurm.conf in a
# temporary folder, then
#  - sbatch of a job that runs `mpirun -np 2 airy-sim run …` inside its
#    allocation: the file equals the one-process run's, byte for byte;
#  - a job with more ranks than the run has planes: told so;
#  - a sweep as a job array (`airy-sim sweep --index $SLURM_ARRAY_TASK_ID`):
#    the folder equals the one-process sweep's;
#  - scancel of a sweep mid-way: only complete files are left (no half
#    file, no temporary), and --resume finishes it the same.
# TAP; skipped as a whole ("1..0 # SKIP reason") when not root, or without
# Slurm, munge or mpirun. Every wait has a deadline and the daemons are stopped
# in a trap, so it cannot hang a CI run.
#   AIRY_SIM=build/app/airy-sim AIRY_MPIRUN=/usr/bin/mpirun tests/slurm/slurm-cluster.sh
set -u

SIM=${AIRY_SIM:?set AIRY_SIM to the airy-sim to test}
# the build's mpirun (empty: airy-sim was built without MPI)
MPIRUN=${AIRY_MPIRUN-$(command -v mpirun || true)}

N=0
skip () { echo "1..0 # SKIP $*"; exit 0; }
ok () { N=$((N + 1)); echo "ok $N - $*"; }
fail () { N=$((N + 1)); echo "not ok $N - $*"; show_logs | sed 's/^/# /'; echo "1..$N"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root: slurmd and munged run as root here"
for c in munged slurmctld slurmd sbatch squeue sinfo scancel; do
  command -v "$c" >/dev/null || skip "$c not found (apt-get install slurm-wlm munge)"
done
[ -n "$MPIRUN" ] || skip "no mpirun, or airy-sim built without MPI (apt-get install openmpi-bin libopenmpi-dev)"

T=$(mktemp -d /tmp/airy-slurm-XXXXXX)
chmod 0700 "$T"
PIDS=()

show_logs () {
  for f in "$T"/slurmctld.log "$T"/slurmd.log "$T"/munged.log "$T"/job-*.out; do
    [ -f "$f" ] && { echo "---- $f (last lines)"; tail -n 15 "$f"; }
  done
}

cleanup () {
  local p
  # jobs still queued or running on our cluster (a failed check) first:
  # their steps are slurmstepd's, not ours to kill
  if [ -n "${SLURM_CONF:-}" ]; then
    squeue -h -o %A 2>/dev/null | xargs -r scancel 2>/dev/null
    for _ in $(seq 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  # our own daemons, by their ids: TERM, then KILL what is left
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# wait_for SECONDS COMMAND…: until the command succeeds, or fail
wait_for () {
  local limit=$1 i
  shift
  for i in $(seq $((limit * 10))); do
    "$@" && return 0
    sleep 0.1
  done
  fail "timed out after ${limit} s waiting for: $*"
}

NODE=$(hostname -s)
# ports of our own, away from a system Slurm's 6817/6818
BASE=$((20000 + RANDOM % 20000))
mkdir -p "$T/state" "$T/spool" "$T/work"

# munge: a key and a socket of our own
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
chmod 0400 "$T/munge.key"
munged -F --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munged.seed" >>"$T/munged.stderr" 2>&1 &
PIDS+=($!)
wait_for 20 test -S "$T/munge.sock"

cat > "$T/slurm.conf" <<EOF
ClusterName=airytest
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$BASE
SlurmdPort=$((BASE + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
KillWait=5
InactiveLimit=0
SlurmdTimeout=30
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=airy Nodes=$NODE Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF="$T/slurm.conf"

slurmctld -D -c -f "$SLURM_CONF" >>"$T/daemons.stderr" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" -N "$NODE" >>"$T/daemons.stderr" 2>&1 &
PIDS+=($!)
node_idle () { [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" = idle ]; }
wait_for 60 node_idle
echo "# one-node cluster up: $NODE, 2 CPUs, ports $BASE/$((BASE + 1))"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$T/work"

# submit ARGS…: sbatch, printing the job id
submit () { sbatch --parsable --output="$T/job-%A_%a.out" "$@" | cut -d';' -f1; }
job_gone () { [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; }

psf () {   # psf N PLANES [SENSOR]: a widefield PSF with an aberration
  cat <<EOF
{"airy": 1, "grid": {"shape": [$1, $1], "spacing": $(awk -v n="$1" 'BEGIN { printf "%.10g", 160 / n }')},
 "spectrum": {"wavelengths": [0.532]}, "z": {"start": -2, "stop": 2, "count": $2},
 "elements": [{"type": "objective-point-source", "f": 100, "n": 1.33, "na": 0.8},
   {"type": "phase-mask", "source": "zernike", "zernike-indices": [7], "zernike-coefficients": [0.1]},
   {"type": "ff-lens", "f": 100, "n": 1.33}]${3:-}}
EOF
}
psf 64 8 > run.json
psf 64 1 > one-plane.json
psf 512 128 ', "sensor": {"reduce": "sum"}' > slow.json

# 1. mpirun -np 2 inside a job's allocation
"$SIM" run run.json -o one.tif --threads 1 -q || fail "the one-process run failed"
id=$(submit -n 2 --wrap "$MPIRUN --timeout 120 -np 2 $SIM run run.json -o mpi.tif --threads 1 --json")
wait_for 150 job_gone "$id"
grep -q '"ranks": 2' "$T"/job-"$id"_*.out || fail "the job's run did not span 2 ranks"
cmp one.tif mpi.tif || fail "the job's 2-rank run differs from the one-process run"
ok "sbatch -n 2 + mpirun -np 2 airy-sim run = one process, byte for byte"

# 2. more ranks than planes: told so
id=$(submit -n 2 --wrap "$MPIRUN --timeout 120 -np 2 $SIM run one-plane.json -o few.tif --threads 1 -q")
wait_for 150 job_gone "$id"
grep -q "warning: 2 ranks for a run of 1 planes" "$T"/job-"$id"_*.out || fail "a job with more ranks than planes was not told so"
ok "a job with more ranks than planes is told so"

# 3. a sweep as a job array, one system per task
SET='elements[1].zernike-coefficients[0]=-0.2:0.2:4'
"$SIM" sweep run.json --set "$SET" -o sweep-one --threads 1 -q || fail "the one-process sweep failed"
id=$(submit -n 1 --array=0-3 --wrap "$SIM sweep run.json --set '$SET' -o sweep-array --index \$SLURM_ARRAY_TASK_ID --threads 1 -q")
wait_for 150 job_gone "$id"
for f in sweep-one/*; do
  cmp "$f" "sweep-array/$(basename "$f")" || fail "job array: $(basename "$f") differs from the one-process sweep"
done
[ "$(ls sweep-array | wc -l)" = "$(ls sweep-one | wc -l)" ] || fail "job array: other files than the sweep's"
ok "sweep as a job array (--index \$SLURM_ARRAY_TASK_ID) = one-process sweep"

# 4. scancel mid-sweep: no half file; --resume finishes it the same
SLOW='elements[1].zernike-coefficients[0]=-0.3:0.3:40'
id=$(submit -n 1 --wrap "$SIM sweep slow.json --set '$SLOW' -o cancelled --threads 1 -q")
has_output () { compgen -G "cancelled/0*.tif" >/dev/null; }
wait_for 150 has_output
scancel "$id"
wait_for 60 job_gone "$id"
left=$(ls -A cancelled | grep -v '^[0-9]\{4\}\.tif$' || true)
[ -z "$left" ] || fail "scancel left other files than whole outputs: $left"
n=$(ls cancelled | wc -l)
[ "$n" -lt 40 ] || fail "the sweep ended before scancel reached it"
"$SIM" sweep slow.json --set "$SLOW" -o cancelled --threads 1 --resume --json > resumed.json || fail "--resume failed"
skipped=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["skipped"]))' resumed.json)
[ "$skipped" = "$n" ] || fail "--resume kept $skipped of the $n files scancel left (a half file?)"
"$SIM" sweep slow.json --set "$SLOW" -o uncancelled --threads 1 -q || fail "the uncancelled sweep failed"
for f in uncancelled/*; do
  cmp "$f" "cancelled/$(basename "$f")" || fail "scancel + --resume: $(basename "$f") differs"
done
ok "scancel left $n whole files and no half file; --resume kept them and finished the same"
echo "1..$N"

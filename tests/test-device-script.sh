#!/usr/bin/env bash
# tests/device/run.sh without a GPU (TAP): once over this build's own
# programs (no CUDA device here: the RESULT at once), and over a fake pack
# (nvidia-smi, airy-sim, test-cuda, python) that fails at each step in
# turn: hangs (also one that ignores SIGTERM), crashes, fails. Each run
# must end within its deadline (scaled down to AIRY_DEVICE_DEADLINE=60 s)
# with the RESULT line expected, the same in summary.txt, and leave at most
# six named files and rest.tar.gz in its OUT. The scenarios run side by
# side: they mostly sleep. Where a busy machine may leave a later case
# without time, the pattern takes that too (it is named NOT RUN).
#
#   test-device-script.sh SOURCE_ROOT BUILD_ROOT
set -uo pipefail
src=$1
build=$2
script=$src/tests/device/run.sh
deadline=60
tmp=$(mktemp -d "${TMPDIR:-/tmp}/airy-device-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- the fake pack ----
fake=$tmp/pack
mkdir -p "$fake/app" "$fake/tests/modules" "$fake/engine/cuda" "$fake/peers" "$fake/libs" "$tmp/bin"
: > "$fake/engine/cuda/airy-cuda.so"
: > "$fake/peers/chromatix_bench.py"
cat > "$fake/fault.sh" <<'EOF'
# FAKE_FAULT=POINT:MODE: at POINT, hang (sleep), hangterm (ignore SIGTERM
# too), crash (SIGSEGV) or fail (exit status 1); other modes are the
# caller's
fault_at() {
  local point=${FAKE_FAULT%:*} mode=${FAKE_FAULT##*:}
  [ "$point" = "$1" ] || [ "$point" = "${2:-}" ] || return 0
  case $mode in
    hang) exec sleep 1000 ;;
    hangterm) trap '' TERM; while :; do sleep 1; done ;;
    crash) kill -SEGV $$ ;;
    fail) echo "Bail out! airy-test:ERROR:fake.c:1: a fake failure at $1" >&2; exit 1 ;;
  esac
}
EOF
cat > "$fake/app/airy-sim" <<'EOF'
#!/usr/bin/env bash
. "$(dirname "$0")/../fault.sh"
fault_at "sim-$1"
case $1 in
  info)
    printf 'Airy 0.1.0\nBackends:\n  cpu   CPU (FFTW single precision, threads)\n'
    printf '        device 0: CPU — 16 threads, FFTW 3.3.10, 128 GiB\n'
    printf '  cuda  NVIDIA GPUs (CUDA runtime, cuFFT, NCCL)\n        module: airy-cuda.so\n'
    if [ "$FAKE_FAULT" = sim-info:nodevice ]; then
      echo "        unavailable: no CUDA device: the fake driver is missing"
    else
      echo "        device 0: Fake H200 — compute 9.0, 132 SMs, 139.8 GiB"
    fi
    echo "Presets: seed-widefield seed-imaging oil-vectorial" ;;
  bench)
    echo "{\"system\": \"$2\", \"median_s\": 0.041000, \"floor_s\": 0.030000, \"threads\": 16, \"download_s\": 0.100000, \"download_floor_s\": 0.050000}" ;;
  run)
    while [ $# -gt 0 ]; do [ "$1" = -o ] && : > "$2"; shift; done ;;
  fit)
    while [ $# -gt 0 ]; do
      [ "$1" = --report ] && echo '{ "seconds": 1.5, "iterations_total": 40, "seconds_per_iteration": 0.0375 }' > "$2"
      shift
    done ;;
esac
EOF
cat > "$fake/tests/test-cuda" <<'EOF'
#!/usr/bin/env bash
. "$(dirname "$0")/../fault.sh"
if [ "$1" = -l ]; then
  fault_at list
  [ "$FAKE_FAULT" = list:skip ] && { echo "1..0 # SKIP no CUDA device: the fake says so"; exit 0; }
  printf '/cuda/gl-interop\n/cuda/versions\n/cuda/psf-agreement\n/cuda/seed-presets\n'
  exit 0
fi
fault_at "case-$2" case-all
echo "1..1"
if [ "$2" = /cuda/gl-interop ] && [ "${FAKE_GL:-}" != ok ]; then
  echo "ok 1 $2 # SKIP no EGL device with a CUDA index"
else
  echo "# worst |gpu − cpu| = 1e-6 of a plane's peak"
  echo "ok 1 $2"
fi
EOF
cat > "$fake/tests/test-physics" <<'EOF'
#!/usr/bin/env bash
printf '1..2\nok 1 /physics/a\nok 2 /physics/b\n'
EOF
cat > "$tmp/bin/nvidia-smi" <<EOF
#!/usr/bin/env bash
. "$fake/fault.sh"
fault_at nvidia-smi
echo "Fake H200, 143771 MiB, 570.00"
EOF
cat > "$tmp/bin/fake-python" <<EOF
#!/usr/bin/env bash
. "$fake/fault.sh"
if [ "\$1" = -c ]; then
  fault_at jax
  [ "\$FAKE_FAULT" = jax:cpu ] && { echo "cpu TFRT_CPU_0"; exit 0; }
  echo "gpu cuda:0"
  exit 0
fi
fault_at chromatix
while [ \$# -gt 0 ]; do
  [ "\$1" = --out ] && printf '{"device": "cuda:0", "psf_ms_mean_median_min": [210.0, 209.0, 208.0],\n "imaging_ms_mean_median_min": [400.0, 399.0, 398.0]}\n' > "\$2"
  shift
done
EOF
chmod +x "$fake/app/airy-sim" "$fake/tests/test-cuda" "$fake/tests/test-physics" "$tmp/bin/nvidia-smi" \
  "$tmp/bin/fake-python"

# ---- the scenarios: name, FAKE_FAULT, FAKE_GL, the RESULT line's pattern (grep -E) ----
scenarios=(
  "all-pass|none|ok|^RESULT: PASSED$"
  "gl-skipped|none||^RESULT: INCOMPLETE: GL interop \(/cuda/gl-interop\): NOT VERIFIED \(no EGL device with a CUDA index\)$"
  "nvidia-smi-hangs|nvidia-smi:hang|ok|^RESULT: PASSED$"
  "nvidia-smi-crashes|nvidia-smi:crash|ok|^RESULT: PASSED$"
  "info-hangs|sim-info:hang||^RESULT: FAILED: airy-sim info timed out after 3 s$"
  "info-ignores-sigterm|sim-info:hangterm||^RESULT: FAILED: airy-sim info timed out after 3 s \(killed: it did not stop on SIGTERM\)$"
  "info-crashes|sim-info:crash||^RESULT: FAILED: airy-sim info crashed \(signal 11, SIGSEGV\)$"
  "info-fails|sim-info:fail||^RESULT: FAILED: airy-sim info exit status 1$"
  "no-device|sim-info:nodevice||^RESULT: FAILED: no CUDA device: the fake driver is missing$"
  "test-cuda-skips-all|list:skip||^RESULT: FAILED: test-cuda skipped as a whole: no CUDA device: the fake says so$"
  "test-cuda-list-hangs|list:hang||^RESULT: FAILED: test-cuda -l \(listing its cases\) timed out after 1 s$"
  "case-hangs|case-/cuda/psf-agreement:hang|ok|^RESULT: FAILED: /cuda/psf-agreement timed out after 9 s$"
  "case-ignores-sigterm|case-/cuda/psf-agreement:hangterm|ok|^RESULT: FAILED: /cuda/psf-agreement timed out after 9 s \(killed: it did not stop on SIGTERM\)(; /cuda/seed-presets: NOT RUN \(deadline\))?$"
  "case-crashes|case-/cuda/psf-agreement:crash|ok|^RESULT: FAILED: /cuda/psf-agreement crashed \(signal 11, SIGSEGV\)$"
  "case-fails|case-/cuda/psf-agreement:fail|ok|^RESULT: FAILED: /cuda/psf-agreement exit status 1: Bail out! airy-test:ERROR:fake.c:1: a fake failure at case-/cuda/psf-agreement$"
  "every-case-hangs|case-all:hang|ok|^RESULT: FAILED: GL interop \(/cuda/gl-interop\) timed out after 9 s; /cuda/versions timed out after [0-9]+ s; /cuda/psf-agreement( timed out after [0-9]+ s|: NOT RUN \(deadline\)); /cuda/seed-presets: NOT RUN \(deadline\)$"
  "bench-hangs|sim-bench:hang|ok|^RESULT: FAILED: bench seed-widefield --backend cuda timed out after 4 s; bench seed-imaging --backend cuda timed out after 4 s; bench oil-vectorial --backend cuda timed out after 4 s$"
  "bench-crashes|sim-bench:crash|ok|^RESULT: FAILED: bench seed-widefield --backend cuda crashed \(signal 11, SIGSEGV\); "
  "bench-fails|sim-bench:fail|ok|^RESULT: FAILED: bench seed-widefield --backend cuda exit status 1; "
  "fit-fails|sim-fit:fail|ok|^RESULT: FAILED: fit --backend cuda exit status 1$"
  "jax-on-cpu|jax:cpu|ok|^RESULT: INCOMPLETE: chromatix: NOT ON GPU \(platform cpu\)$"
  "jax-hangs|jax:hang|ok|^RESULT: INCOMPLETE: chromatix: NOT RUN \(jax does not start\)$"
  "chromatix-hangs|chromatix:hang|ok|^RESULT: INCOMPLETE: chromatix: NOT RUN \(timed out after [0-9]+ s\)$"
  "chromatix-crashes|chromatix:crash|ok|^RESULT: INCOMPLETE: chromatix: NOT RUN \(crashed \(signal 11, SIGSEGV\)\)$"
)

run_one() {
  local name=$1 fault=$2 gl=$3 pack=$4 t0 rc
  mkdir -p "$tmp/$name"
  t0=$(date +%s)
  PATH="$tmp/bin:$PATH" FAKE_FAULT=$fault FAKE_GL=$gl AIRY_DEVICE_DEADLINE=$deadline AIRY_DEVICE_PACK=$pack \
    AIRY_DEVICE_PYTHON="$tmp/bin/fake-python" TMPDIR="$tmp/$name" \
    bash "$script" "$tmp/$name/out" > "$tmp/$name/stdout" 2> "$tmp/$name/stderr"
  rc=$?
  echo "$rc $(( $(date +%s) - t0 ))" > "$tmp/$name/status"
}

for s in "${scenarios[@]}"; do
  IFS='|' read -r name fault gl pattern <<< "$s"
  run_one "$name" "$fault" "$gl" "$fake" &
done
# without the module in the pack
cp -r "$fake" "$tmp/pack-no-module"
rm "$tmp/pack-no-module/engine/cuda/airy-cuda.so"
run_one no-module none ok "$tmp/pack-no-module" &
# this build's own programs: no CUDA device on this machine
run_one this-build none ok "$build" &
wait

n=0
check() {
  local name=$1 pattern=$2 code=$3 rc secs result files named
  n=$(( n + 1 ))
  read -r rc secs < "$tmp/$name/status"
  result=$(tail -1 "$tmp/$name/stdout")
  files=$(find "$tmp/$name/out" -type f | wc -l)
  named=$(find "$tmp/$name/out" -type f ! -name rest.tar.gz | wc -l)
  if [ "$secs" -gt $(( deadline + 3 )) ]; then
    echo "not ok $n $name: took $secs s, past the $deadline s deadline"
  elif ! echo "$result" | grep -q -E -- "$pattern"; then
    echo "not ok $n $name: the last line is \"$result\", not /$pattern/"
    sed 's/^/# /' "$tmp/$name/stdout" "$tmp/$name/stderr"
  elif [ "$(tail -1 "$tmp/$name/out/summary.txt")" != "$result" ]; then
    echo "not ok $n $name: summary.txt does not end with the RESULT line"
  elif [ "$rc" -ne "$code" ]; then
    echo "not ok $n $name: exit status $rc, wanted $code"
  elif [ "$files" -gt 7 ] || [ "$named" -gt 6 ] || [ ! -f "$tmp/$name/out/rest.tar.gz" ]; then
    echo "not ok $n $name: OUT holds $files files ($named named; rest.tar.gz: $(ls "$tmp/$name/out" | tr '\n' ' '))"
  else
    echo "ok $n $name ($secs s): $result"
  fi
}
echo "1..$(( ${#scenarios[@]} + 5 ))"
for s in "${scenarios[@]}"; do
  IFS='|' read -r name fault gl pattern <<< "$s"
  case $pattern in *PASSED*) code=0 ;; *INCOMPLETE*) code=3 ;; *) code=1 ;; esac
  check "$name" "$pattern" "$code"
done
check no-module '^RESULT: FAILED: the pack has no airy-cuda.so \(run tests/device/prepare.sh and carry build-device/pack\)$' 1
if [ -e "$build/engine/cuda/airy-cuda.so" ]; then
  check this-build '^RESULT: FAILED: no CUDA device: ' 1
else
  check this-build '^RESULT: FAILED: the pack has no airy-cuda.so' 1
fi
# the lines a reader needs, beside the RESULT line
n=$(( n + 1 ))
if grep -q '^machine   nvidia-smi: timed out after 2 s$' "$tmp/nvidia-smi-hangs/out/summary.txt" \
   && grep -q '^  NOT RUN  /cuda/seed-presets' "$tmp/every-case-hangs/out/summary.txt" \
   && grep -q -E '^test-cuda 0 passed, [23] failed, 0 skipped, [12] not run, of 4 cases' "$tmp/every-case-hangs/out/summary.txt"; then
  echo "ok $n the summary names the cut nvidia-smi and the case left out"
else
  echo "not ok $n the summary lines of nvidia-smi-hangs or every-case-hangs"
  sed 's/^/# /' "$tmp/nvidia-smi-hangs/out/summary.txt" "$tmp/every-case-hangs/out/summary.txt"
fi
n=$(( n + 1 ))
s=$tmp/all-pass/out/summary.txt
if grep -q '^bench     seed-widefield cuda resident: median 41.0 ms, cuFFT floor 30.0 ms, 1.37 × floor; download 100.0 ms, PCIe floor 50.0 ms, 2.00 × floor$' "$s" \
   && grep -q '^versus    seed-widefield Airy 41.0 ms: 5.12 × faster; seed-imaging Airy 41.0 ms: 9.76 × faster$' "$s" \
   && grep -q '^fit       cuda: 1.5 s, 40 iterations, 37.5 ms each$' "$s" \
   && grep -q '^mpi       not measurable here' "$s" \
   && [ "$(grep -c '"cuda"\|"cpu"' "$tmp/all-pass/out/fit.json")" -eq 2 ] \
   && [ "$(wc -l < "$tmp/all-pass/out/bench.jsonl")" -eq 3 ] \
   && grep -q '^ok 1 /cuda/seed-presets$' "$tmp/all-pass/out/test-cuda.tap"; then
  echo "ok $n the summary of a full run: benches, chromatix, fit, the files"
else
  echo "not ok $n the summary of a full run"
  sed 's/^/# /' "$s"
fi
# every GPU-against-CPU case the README's summary shows is one test-cuda
# registers (the device run lists them from the binary itself)
n=$(( n + 1 ))
missing=
for t in $(grep -o -E '^  ok       /cuda/[a-z0-9-]+' "$src/tests/device/README.md" | awk '{print $2}'); do
  grep -q "g_test_add_func (\"$t\"" "$src/tests/test-cuda.c" || missing="$missing $t"
done
if [ -z "$missing" ] && grep -q '^  ok       /cuda/jones-agreement' "$src/tests/device/README.md"; then
  echo "ok $n the README's expected cases are test-cuda's"
else
  echo "not ok $n cases the README shows but test-cuda does not register:$missing"
fi

#!/usr/bin/env bash
# The GPU check, one command of at most 9 minutes on a machine with an
# NVIDIA GPU and CUDA 13 (an H200 here), after tests/device/prepare.sh on
# the build machine:
#
#   bash tests/device/run.sh [OUT_DIR]        (carry: build-device)
#
# GPU steps first: test-cuda (GPU vs CPU on both seed workloads at the
# CPU's shape and reduced, every mask kind, operation lists, imaging and
# the NCCL path, memory-limited batches, repeated runs, results kept on the
# device for the viewer, GL interop through EGL), then `airy-sim bench
# --backend cuda` on both seed presets, `airy-sim fit --backend cuda` (and
# the CPU's fit beside it), then chromatix on the same GPU
# when prepare.sh packed it (within the cap, at most 240 s). The CPU steps come last and only
# while the time cap (AIRY_DEVICE_TIME_CAP seconds, default 510) allows:
# the cap stops the CPU part, never the GPU part.
#
# OUT_DIR/summary.txt ends with "RESULT: PASSED" or "RESULT: FAILED: …"
# and so does the exit status (0 or 1). No CUDA device in `airy-sim
# info`, test-cuda skipped as a whole or failing, a GPU benchmark failing:
# FAILED with the reason and how the CUDA libraries resolve (ldd).
set -uo pipefail
cd "$(dirname "$0")/../.."
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
start=$SECONDS
cap=${AIRY_DEVICE_TIME_CAP:-510}
out=${1:-${OUT:-/tmp/airy-device}}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
failures=()
say() { echo "$@" | tee -a "$summary"; }
step() { say; say "== $* [t = $((SECONDS - start)) s]"; }
fail() { failures+=("$*"); say "FAILED: $*"; }
left() { echo $((cap - (SECONDS - start))); }

# The machine's CUDA 13: its toolkit, or the pip packages' lib folders.
cuda_libs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 /usr/local/cuda-13*/lib; do
  [ -e "$d/libcudart.so.13" ] && cuda_libs="$cuda_libs:$d"
done
for pkg in nvidia/cuda_runtime nvidia/cufft nvidia/nccl nvidia/cu13; do
  d=$(python3 -c "import importlib.util,os,sys; s=importlib.util.find_spec('${pkg//\//.}'); print(os.path.join(list(s.submodule_search_locations)[0],'lib') if s else '')" 2>/dev/null)
  [ -n "$d" ] && [ -d "$d" ] && cuda_libs="$cuda_libs:$d"
done
cuda_shown=${cuda_libs#:}
[ -n "$cuda_shown" ] || cuda_shown="(none found)"
# glvnd's loaders from the pack only where the machine has none: epoxy
# aborts without libEGL.so.1 (test-cuda then skips its GL case instead)
gl_libs=""
if ! "$ldconfig" -p 2>/dev/null | grep -q 'libEGL.so.1 '; then
  gl_libs=":$PWD/build-device/libs/gl"
fi
# Only Airy's own programs see the packed libraries (first: they are what
# the build used), then the CUDA libraries; nvidia-smi, python3 and the
# rest keep the machine's.
airy_ld="$PWD/build-device/libs${cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}${gl_libs}"
with_airy() { LD_LIBRARY_PATH="$airy_ld" "$@"; }
export AIRY_BACKEND_PATH="$PWD/build-device/engine/cuda:$PWD/build-device/tests/modules"
# caches (FFTW wisdom) outside OUT_DIR: only results come back
export XDG_CACHE_HOME="${TMPDIR:-/tmp}/airy-device-cache"
export G_DEBUG=gc-friendly LC_ALL=C.UTF-8 LANGUAGE=C NCCL_DEBUG=WARN
for f in /usr/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json; do
  [ -f "$f" ] && nvidia_egl=$f
done
if [ -z "${nvidia_egl:-}" ] && [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
sim=build-device/app/airy-sim

# How the module's CUDA libraries resolve, for a FAILED line.
resolution() {
  say "   ldd of the CUDA module (LD_LIBRARY_PATH as Airy's programs get it):"
  with_airy ldd build-device/engine/cuda/airy-cuda.so 2>&1 | grep -E 'libcudart|libcufft|libnccl|libcuda|not found' \
    | sed 's/^[[:space:]]*/     /' | tee -a "$summary"
  driver=$("$ldconfig" -p 2>/dev/null | awk '$1 == "libcuda.so.1" {print $NF; exit}')
  say "   libcuda.so.1 (the driver): ${driver:-not found}"
  say "   CUDA libraries searched: $cuda_shown"
}

step "machine"
say "$(date -u) $(uname -srm)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
else
  say "nvidia-smi: not on PATH"
fi
say "CUDA libraries from: $cuda_shown${gl_libs:+; GL loaders from the pack}"
missing=$(with_airy ldd "$sim" build-device/engine/cuda/airy-cuda.so build-device/tests/test-cuda 2>&1 | grep "not found" | sort -u)
[ -z "$missing" ] || say "missing libraries: $missing"
info=$(with_airy "$sim" info 2>&1)
echo "$info" | tee -a "$summary"
# the cuda backend's block: device lines under "  cuda", up to the next backend
cuda_devices=$(echo "$info" | awk '/^  cuda /{c=1; next} /^  [a-z]/{c=0} /^[A-Z]/{c=0} c && /^ +device [0-9]+:/{n++} END{print n+0}')
if [ "$cuda_devices" -eq 0 ]; then
  fail "airy-sim info lists no CUDA device: $(echo "$info" | grep -E 'no CUDA device|unavailable' | head -1 | sed 's/^ *//')"
  resolution
fi

step "GPU tests (test-cuda, TAP)"
with_airy timeout 240 build-device/tests/test-cuda > "$out/test-cuda.log" 2>&1
status=$?
grep -E "^(ok|not ok|1\.\.|# (SKIP|worst|free|seed|NVIDIA|.*: compute))" "$out/test-cuda.log" | tee -a "$summary"
say "test-cuda exit status: $status"
if grep -q "^1\.\.0 # SKIP" "$out/test-cuda.log"; then
  fail "test-cuda skipped as a whole: $(grep -m1 '^1\.\.0 # SKIP' "$out/test-cuda.log" | sed 's/^1\.\.0 # SKIP //')"
  resolution
elif [ "$status" -eq 124 ]; then
  fail "test-cuda ran past 240 s"
elif [ "$status" -ne 0 ] || grep -q "^not ok\|^Bail out" "$out/test-cuda.log"; then
  fail "test-cuda: $(grep -c '^not ok' "$out/test-cuda.log") case(s) failed, exit status $status: $(grep -m1 -E 'ERROR|Bail out' "$out/test-cuda.log")"
fi
skipped=$(grep -c "^ok .*# SKIP" "$out/test-cuda.log")
[ "$skipped" -gt 0 ] && say "test-cuda cases skipped (not failures): $skipped"

bench() {
  local limit=$1 preset=$2; shift 2
  say "-- $preset $*"
  with_airy timeout "$limit" "$sim" bench "$preset" "$@" --json > "$out/bench.tmp" 2>&1
  local status=$?
  tee -a "$summary" < "$out/bench.tmp"
  rm -f "$out/bench.tmp"
  return $status
}
step "benchmarks on the GPU (median of 10 warm runs; floor = bare cuFFT)"
for preset in seed-widefield seed-imaging oil-vectorial; do
  if [ "$cuda_devices" -eq 0 ]; then
    say "-- $preset: not run (no CUDA device)"
    continue
  fi
  bench 90 "$preset" --backend cuda --repeat 10 --warmup 2 || fail "bench $preset --backend cuda (exit status $?)"
done

# the fit's passes on the GPU (README's worked example: 32 × 128², 12 free
# terms; the noise-free PSF, least squares), the CPU's fit beside it
step "fit on the GPU and on the CPU (32 × 128², 12 terms)"
if [ "$cuda_devices" -eq 0 ]; then
  say "-- not run (no CUDA device)"
else
  cat > "$out/fit-system.json" <<'JSON'
{ "airy": 1, "grid": { "shape": [128, 128], "spacing": 3.125 },
  "spectrum": { "wavelengths": [0.532], "weights": [1.0] },
  "z": { "start": -2.0, "stop": 2.0, "count": 32 },
  "elements": [ { "type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8 },
                { "type": "ff-lens", "f": 100.0, "n": 1.33 } ] }
JSON
  cat > "$out/fit-truth.json" <<'JSON'
{ "airy": 1, "grid": { "shape": [128, 128], "spacing": 3.125 },
  "spectrum": { "wavelengths": [0.532], "weights": [1.0] },
  "z": { "start": -2.0, "stop": 2.0, "count": 32 },
  "elements": [ { "type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8,
                  "offset-x": 0.23, "offset-y": -0.17, "z": -0.3 },
                { "type": "phase-mask", "source": "zernike", "zernike-indices": [3, 5, 6, 7, 8, 9, 10, 11, 12, 13],
                  "zernike-coefficients": [0.12, -0.15, 0.08, -0.1, 0.15, -0.05, 0.1, -0.12, 0.06, 0.14] },
                { "type": "ff-lens", "f": 100.0, "n": 1.33 } ] }
JSON
  if with_airy timeout 60 "$sim" run "$out/fit-truth.json" --backend cpu -o "$out/fit-psf.tif" -q; then
    for b in cuda cpu; do
      with_airy timeout 60 "$sim" fit "$out/fit-psf.tif" --system "$out/fit-system.json" --zernike 15 --backend $b \
        -o "$out/fit-$b.json" --report "$out/fit-report-$b.json" -q
      status=$?
      if [ "$status" -eq 0 ]; then
        say "-- $b: $(grep -E '"(seconds|iterations_total|seconds_per_iteration|device|rms_waves)"' "$out/fit-report-$b.json" | tr -d '\n ' )"
      elif [ "$b" = cuda ]; then
        fail "airy-sim fit --backend cuda (exit status $status)"
      else
        say "-- cpu fit failed (exit status $status; not a GPU failure)"
      fi
    done
  else
    fail "airy-sim run of the fit's truth (exit status $?)"
  fi
fi

# chromatix on the same GPU, for the side-by-side (not a failure when its
# imports do not work there: said, and Airy's numbers stand alone)
step "chromatix on the same GPU (mean, median, min of 10 jitted calls)"
if [ ! -f build-device/peers/chromatix_bench.py ]; then
  say "-- not run: build-device/peers/chromatix_bench.py was not prepared"
elif ! python3 -c "import jax" 2>/dev/null; then
  say "-- not run: this machine's python3 has no jax"
elif [ "$(left)" -lt 90 ]; then
  say "-- not run (time cap: $(left) s left of ${cap} s)"
else
  # within the cap like the CPU part, so the whole command stays under it
  PYTHONPATH="$PWD/build-device/peers" XLA_PYTHON_CLIENT_PREALLOCATE=false \
    timeout $(( $(left) < 240 ? $(left) - 30 : 240 )) python3 build-device/peers/chromatix_bench.py \
    --out "$out/chromatix.json" > "$out/chromatix.log" 2>&1
  status=$?
  if [ "$status" -eq 0 ]; then
    tee -a "$summary" < "$out/chromatix.json"
  else
    say "-- chromatix did not run (exit status $status): $(grep -v '^ *$' "$out/chromatix.log" | tail -1)"
  fi
fi

# The CPU part: only within the cap, each step cut at what is left.
cpu_step() {
  local need=$1; shift
  local t
  t=$(left)
  if [ "$t" -lt "$need" ]; then
    say "-- skipped (time cap: ${t} s left of ${cap} s): $*"
    return 0
  fi
  "$@"
}
physics() {
  local t
  t=$(left)
  with_airy timeout "$t" build-device/tests/test-physics 2>&1 | grep -E "^(ok|not ok|1\.\.)" | tee -a "$summary"
  local status=${PIPESTATUS[0]}
  if [ "$status" -eq 124 ]; then
    say "-- test-physics stopped by the time cap"
  elif [ "$status" -ne 0 ]; then
    fail "test-physics on this machine (exit status $status)"
  fi
}
cpu_bench() {
  local t
  t=$(left)
  bench "$t" "$@"
  local status=$?
  if [ "$status" -eq 124 ]; then
    say "-- stopped by the time cap"
  elif [ "$status" -ne 0 ]; then
    say "-- the CPU benchmark failed (exit status $status; not a GPU failure)"
  fi
}
# issue 18's efficiency on real cores: t1 / (2·t2) of `bench` under
# mpirun -np 1 and -np 2, one thread per rank (only where mpirun exists)
mpi_efficiency() {
  local p np t
  if ! command -v mpirun >/dev/null; then
    say "-- not run: this machine has no mpirun"
    return 0
  fi
  for p in seed-widefield seed-imaging; do
    for np in 1 2; do
      t=$(with_airy timeout 60 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe \
            -np $np "$sim" bench $p --planes 32 --threads 1 --repeat 9 --no-write --json 2>/dev/null \
          | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["median_s"], d.get("rank_s"))')
      say "-- $p -np $np: median_s rank_s = ${t:-failed}"
      eval "t$np=\${t%% *}"
    done
    [ -n "${t1:-}" ] && [ -n "${t2:-}" ] && say "-- $p: t1 / (2·t2) = $(python3 -c "print(round($t1 / (2 * $t2), 3))")"
  done
}
step "MPI parallel efficiency on this machine's cores (issue 18; within the time cap)"
cpu_step 90 mpi_efficiency
step "CPU physics tests on this machine (TAP; within the time cap)"
cpu_step 60 physics
step "benchmarks on the CPU of the same machine (floor = bare FFTW, same threads; within the time cap)"
cpu_step 45 cpu_bench seed-widefield --backend cpu --repeat 3 --warmup 1
cpu_step 60 cpu_bench seed-imaging --backend cpu --repeat 3 --warmup 1

say
say "took $((SECONDS - start)) s (cap ${cap} s for the CPU part)"
if [ ${#failures[@]} -eq 0 ]; then
  say "RESULT: PASSED"
  code=0
else
  say "RESULT: FAILED: $(printf '%s; ' "${failures[@]}" | sed 's/; $//')"
  code=1
fi
say "summary written to $summary"
exit $code

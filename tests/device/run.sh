#!/usr/bin/env bash
# The GPU check: one short command on a lent machine with an NVIDIA GPU and
# CUDA 13, after tests/device/prepare.sh on the build machine (which packs
# build-device/pack). tests/device/README.md says how to start it and what
# each line of the summary means.
#
#   bash tests/device/run.sh [OUT_DIR]                 (carry: build-device/pack)
#
# One global deadline (AIRY_DEVICE_DEADLINE seconds, default 420) from
# which every step's `timeout -k 5` is derived, so the whole command ends
# before it with a RESULT line. In order: the machine and the module (no
# CUDA device, or a module that does not load: the RESULT at once), each
# test-cuda case in its own process, the GPU benchmarks (results kept on
# the device, nothing written), the fit, chromatix on the same GPU, then
# CPU steps while time is left.
#
# OUT_DIR gets six named files and rest.tar.gz (at most 8 files come back):
#   summary.txt     the summary, ending with the RESULT line
#   info.txt        nvidia-smi, airy-sim info, ldd of Airy's programs
#   test-cuda.tap   every test-cuda case's TAP, one after the other
#   bench.jsonl     one `airy-sim bench --json` line per benchmark
#   fit.json        the fit's reports (CUDA, CPU)
#   chromatix.json  chromatix's timings (when it ran on the GPU)
#   rest.tar.gz     every step's own log
# RESULT: PASSED (exit 0) only when every check ran and passed; FAILED: …
# (exit 1) names each failure; INCOMPLETE: … (exit 3) names what was not
# verified (a skipped case, a step cut by the deadline) when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
deadline=${AIRY_DEVICE_DEADLINE:-420}
if ! [[ $deadline =~ ^[0-9]+$ ]] || [ "$deadline" -lt 20 ] || [ "$deadline" -gt 590 ]; then
  echo "run.sh: AIRY_DEVICE_DEADLINE: must be whole seconds in [20, 590], got \"$deadline\"" >&2
  exit 2
fi
pack=${AIRY_DEVICE_PACK:-build-device/pack}
case $pack in /*) ;; *) pack=$PWD/$pack ;; esac
py=${AIRY_DEVICE_PYTHON:-python3}
out=${1:-${OUT:-/tmp/airy-device}}
mkdir -p "$out" || exit 2
rm -f "$out"/summary.txt "$out"/info.txt "$out"/test-cuda.tap "$out"/bench.jsonl "$out"/fit.json \
  "$out"/chromatix.json "$out"/rest.tar.gz
work=$(mktemp -d "${TMPDIR:-/tmp}/airy-device.XXXXXX") || exit 2
summary=$out/summary.txt
info_file=$out/info.txt
tap=$out/test-cuda.tap
benches=$out/bench.jsonl
: > "$summary"
: > "$info_file"
: > "$tap"
: > "$benches"

# ---- time: every cap comes from the one deadline ----
# reserve: the end (summary, rest.tar.gz); 5 s more for each step's kill
reserve=$(( deadline * 3 / 100 + 3 ))
left() { echo $(( deadline - (SECONDS - start) )); }
share() { local s=$(( deadline * $1 / 100 )); [ "$s" -lt 1 ] && s=1; echo "$s"; }
# cap WANT: seconds a step may take now (0: no time for it)
cap() {
  local t=$(( $(left) - reserve - 5 ))
  [ "$t" -gt "$1" ] && t=$1
  [ "$t" -lt 1 ] && t=0
  echo "$t"
}
# capped SECONDS CMD…: the command under `timeout -k 5`; rc and took set
rc=0
took=0
capped() {
  local c=$1 t0=$SECONDS
  shift
  if [ "$c" -lt 1 ]; then
    # `timeout 0` would mean no limit at all
    rc=124
    took=0
    return
  fi
  timeout -k 5 "$c" "$@"
  rc=$?
  took=$(( SECONDS - t0 ))
}
# what an exit status means (rc, the cap it ran under, how long it took)
why() {
  local r=$1 c=$2 t=$3
  if [ "$r" -eq 124 ] || { [ "$r" -eq 137 ] && [ "$t" -ge "$c" ]; }; then
    [ "$r" -eq 137 ] && echo "timed out after $c s (killed: it did not stop on SIGTERM)" \
                     || echo "timed out after $c s"
  elif [ "$r" -gt 128 ] && [ "$r" -lt 160 ]; then
    echo "crashed (signal $(( r - 128 )), SIG$(kill -l $(( r - 128 )) 2>/dev/null || echo '?'))"
  else
    echo "exit status $r"
  fi
}

failures=()
unverified=()
say() { echo "$*" >> "$summary"; }
fail() { failures+=("$*"); }
unverified() { unverified+=("$*"); }
result_written=0
finish() {
  local code=0 line
  [ "$result_written" -eq 1 ] && return
  result_written=1
  say "took $(( SECONDS - start )) s of the ${deadline} s deadline"
  if [ ${#failures[@]} -gt 0 ]; then
    line="RESULT: FAILED: $(printf '%s; ' "${failures[@]}" "${unverified[@]}" | sed 's/; $//')"
    code=1
  elif [ ${#unverified[@]} -gt 0 ]; then
    line="RESULT: INCOMPLETE: $(printf '%s; ' "${unverified[@]}" | sed 's/; $//')"
    code=3
  else
    line="RESULT: PASSED"
  fi
  say "$line"
  (cd "$work" && tar czf "$out/rest.tar.gz" --ignore-failed-read . 2>/dev/null)
  rm -rf "$work"
  cat "$summary"
  exit $code
}
# an unexpected stop still ends with a RESULT line
trap 'fail "run.sh stopped by a signal"; finish' TERM INT HUP
trap 'st=$?; if [ "$result_written" -eq 0 ]; then fail "run.sh stopped early (exit status $st)"; finish; fi' EXIT

# a JSON number or string of a one-line object (our own --json output)
jget() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^,\"}]*\).*/\1/p" "$2" | head -1; }
ms() { awk -v s="${1:-}" 'BEGIN { if (s == "") print "?"; else printf "%.1f", s * 1000 }'; }
# the last line a step wrote, without the shell's own report of a crash
last_line() { grep -v -E '^ *$|^/.*: line [0-9]+: +[0-9]+ ' "$1" | tail -1 | cut -c1-200; }
ratio() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "?"; else printf "%.2f", a / b }'; }

# ---- the libraries Airy's programs see ----
cuda_libs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64; do
  [ -e "$d/libcudart.so.13" ] && cuda_libs="$cuda_libs:$d"
done
for d in /usr/local/lib/python3*/dist-packages/nvidia/*/lib /usr/lib/python3/dist-packages/nvidia/*/lib \
         /usr/local/lib/python3*/site-packages/nvidia/*/lib; do
  [ -d "$d" ] && cuda_libs="$cuda_libs:$d"
done
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
gl_libs=""
"$ldconfig" -p 2>/dev/null | grep -q 'libEGL.so.1 ' || gl_libs=":$pack/libs/gl"
airy_ld="$pack/libs${cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}${gl_libs}"
# Airy's programs only: nvidia-smi, python3 and the rest keep the machine's libraries
airy=(env "LD_LIBRARY_PATH=$airy_ld")
export AIRY_BACKEND_PATH="$pack/engine/cuda:$pack/tests/modules"
export XDG_CACHE_HOME="$work/cache"
export G_DEBUG=gc-friendly LC_ALL=C.UTF-8 LANGUAGE=C NCCL_DEBUG=WARN
if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ ! -f /usr/share/glvnd/egl_vendor.d/10_nvidia.json ] \
   && [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
sim=$pack/app/airy-sim
test_cuda=$pack/tests/test-cuda
module=$pack/engine/cuda/airy-cuda.so

say "Airy device check: $(date -u '+%Y-%m-%d %H:%M UTC'), deadline ${deadline} s, pack ${pack}"

# ---- 1. the machine and the module ----
{
  echo "== nvidia-smi"
} >> "$info_file"
if command -v nvidia-smi > /dev/null; then
  capped "$(cap "$(share 4)")" nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
    >> "$info_file" 2>&1
  if [ "$rc" -eq 0 ]; then
    say "machine   $(grep -v '^==' "$info_file" | head -1)"
  else
    say "machine   nvidia-smi: $(why "$rc" "$(share 4)" "$took")"
  fi
else
  say "machine   nvidia-smi: not on PATH"
  echo "not on PATH" >> "$info_file"
fi
resolution() {
  {
    echo "== ldd (LD_LIBRARY_PATH as Airy's programs get it: $airy_ld)"
    for f in "$sim" "$test_cuda" "$module"; do
      echo "-- $f"
      [ -e "$f" ] && "${airy[@]}" ldd "$f" 2>&1
    done
    echo "== libcuda.so.1 (the driver): $("$ldconfig" -p 2>/dev/null | awk '$1 == "libcuda.so.1" {print $NF; exit}')"
  } >> "$info_file"
}
resolution
missing=$(grep "not found" "$info_file" | awk '{print $1}' | sort -u | tr '\n' ' ')
[ -n "$missing" ] && say "libraries not found: $missing"
for f in "$sim" "$test_cuda" "$module"; do
  if [ ! -e "$f" ]; then
    fail "the pack has no $(basename "$f") (run tests/device/prepare.sh and carry build-device/pack)"
    finish
  fi
done
echo "== airy-sim info" >> "$info_file"
c=$(cap "$(share 5)")
capped "$c" "${airy[@]}" "$sim" info > "$work/info.log" 2>&1
cat "$work/info.log" >> "$info_file"
# the cuda backend's block: its "device N:" lines, up to the next backend
cuda_devices=$(awk '/^  cuda /{c=1; next} /^  [a-z]/{c=0} /^[A-Z]/{c=0} c && /^ +device [0-9]+:/{n++} END{print n+0}' \
               "$work/info.log")
if [ "$rc" -ne 0 ]; then
  fail "airy-sim info $(why "$rc" "$c" "$took")"
  finish
fi
if [ "$cuda_devices" -eq 0 ]; then
  reason=$(grep -m1 -E 'Module failed: .*airy-cuda' "$work/info.log" | sed 's/^Module failed: //')
  [ -n "$reason" ] && reason="the CUDA module does not load: $reason"
  [ -z "$reason" ] && reason=$(grep -m1 -E '^ +unavailable: ' "$work/info.log" | sed 's/^ *unavailable: //')
  [ -z "$reason" ] && reason=$(grep -m1 -E '^  cuda +not installed' "$work/info.log" | sed 's/^  cuda *//')
  case $reason in "no CUDA device"*) ;; *) reason="no CUDA device: ${reason:-airy-sim info lists none}" ;; esac
  say "cuda      $reason (ldd in info.txt)"
  fail "$reason"
  finish
fi
awk '/^  cuda /{c=1; next} /^  [a-z]/{c=0} /^[A-Z]/{c=0} c && /^ +device [0-9]+:/' "$work/info.log" \
  | sed 's/^ */cuda      /' >> "$summary"

# ---- 2. test-cuda, one case per process ----
export AIRY_FFTW_PLANNER=estimate   # the CPU references: no FFTW_MEASURE planning of 3072² on 16 threads
tests_end=$(( start + $(share 45) ))
c=$(cap "$(share 3)")
capped "$c" "${airy[@]}" "$test_cuda" -l > "$work/test-cuda-list.log" 2>&1
cases=$(grep -E '^/cuda/' "$work/test-cuda-list.log")
skip_all=$(grep -m1 '^1\.\.0 # SKIP' "$work/test-cuda-list.log" | sed 's/^1\.\.0 # SKIP //')
if [ -n "$skip_all" ]; then
  fail "test-cuda skipped as a whole: $skip_all"
  finish
elif [ "$rc" -ne 0 ] || [ -z "$cases" ]; then
  fail "test-cuda -l (listing its cases) $(why "$rc" "$c" "$took")"
  finish
fi
label() { [ "$1" = /cuda/gl-interop ] && echo "GL interop ($1)" || echo "$1"; }
n_cases=0 n_pass=0 n_fail=0 n_skip=0 n_notrun=0
case_lines=()
for t in $cases; do
  n_cases=$(( n_cases + 1 ))
  room=$(( tests_end - SECONDS ))
  want=$(share 15)
  [ "$room" -lt "$want" ] && want=$room
  c=$(cap "$want")
  if [ "$c" -lt 2 ]; then
    n_notrun=$(( n_notrun + 1 ))
    case_lines+=("  NOT RUN  $t (the test-cuda share of the deadline is spent)")
    unverified "$(label "$t"): NOT RUN (deadline)"
    continue
  fi
  capped "$c" "${airy[@]}" "$test_cuda" -p "$t" > "$work/case.log" 2>&1
  { echo "# ==== $t: exit status $rc, $took s (cap $c s)"; cat "$work/case.log"; } >> "$tap"
  skip=$(grep -m1 -E '^ok [0-9]+ .*# SKIP' "$work/case.log" | sed 's/.*# SKIP *//')
  if [ "$rc" -eq 0 ] && grep -q -E '^ok [0-9]+ ' "$work/case.log" && ! grep -q -E '^not ok|^Bail out' "$work/case.log"; then
    if [ -n "$skip" ]; then
      n_skip=$(( n_skip + 1 ))
      case_lines+=("  SKIP     $t: NOT VERIFIED (${skip:-no reason given})")
      unverified "$(label "$t"): NOT VERIFIED (${skip:-no reason given})"
    else
      n_pass=$(( n_pass + 1 ))
      case_lines+=("  ok       $t (${took} s)$(grep -m1 -E '^# (worst|GPU|seed)' "$work/case.log" | sed 's/^#/:/')")
    fi
  else
    n_fail=$(( n_fail + 1 ))
    detail=$(grep -m1 -E 'ERROR|Bail out|^not ok' "$work/case.log" | cut -c1-200)
    if [ "$rc" -eq 0 ]; then reason="no TAP result${detail:+: $detail}"
    else reason="$(why "$rc" "$c" "$took")${detail:+: $detail}"; fi
    case_lines+=("  FAILED   $t: $reason")
    fail "$(label "$t") $reason"
  fi
done
say "test-cuda $n_pass passed, $n_fail failed, $n_skip skipped, $n_notrun not run, of $n_cases cases (one process each)"
printf '%s\n' "${case_lines[@]}" >> "$summary"
# the CPU fit and the CPU benchmarks below are timed with MEASURE plans
unset AIRY_FFTW_PLANNER

# ---- 3. the GPU benchmarks: results kept on the device, nothing written ----
declare -A airy_median
for preset in seed-widefield seed-imaging oil-vectorial; do
  c=$(cap "$(share 8)")
  if [ "$c" -lt 2 ]; then
    say "bench     $preset: NOT RUN (deadline)"
    unverified "bench $preset: NOT RUN (deadline)"
    continue
  fi
  capped "$c" "${airy[@]}" "$sim" bench "$preset" --backend cuda --resident --no-write --repeat 10 --warmup 2 --json \
    > "$work/bench-$preset.json" 2> "$work/bench-$preset.log"
  j=$work/bench-$preset.json
  if [ "$rc" -eq 0 ] && grep -q median_s "$j"; then
    cat "$j" >> "$benches"
    airy_median[$preset]=$(jget median_s "$j")
    line="bench     $preset cuda resident: median $(ms "$(jget median_s "$j")") ms, cuFFT floor $(ms "$(jget floor_s "$j")") ms, $(ratio "$(jget median_s "$j")" "$(jget floor_s "$j")") × floor"
    dl=$(jget download_s "$j")
    [ -n "$dl" ] && line="$line; download $(ms "$dl") ms, PCIe floor $(ms "$(jget download_floor_s "$j")") ms, $(ratio "$dl" "$(jget download_floor_s "$j")") × floor"
    say "$line"
  else
    say "bench     $preset: FAILED, $(why "$rc" "$c" "$took"): $(last_line "$work/bench-$preset.log")"
    fail "bench $preset --backend cuda $(why "$rc" "$c" "$took")"
  fi
done

# ---- 4. the fit on the GPU (and the CPU's beside it) ----
cat > "$work/fit-system.json" <<'JSON'
{ "airy": 1, "grid": { "shape": [128, 128], "spacing": 3.125 },
  "spectrum": { "wavelengths": [0.532], "weights": [1.0] },
  "z": { "start": -2.0, "stop": 2.0, "count": 32 },
  "elements": [ { "type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8 },
                { "type": "ff-lens", "f": 100.0, "n": 1.33 } ] }
JSON
cat > "$work/fit-truth.json" <<'JSON'
{ "airy": 1, "grid": { "shape": [128, 128], "spacing": 3.125 },
  "spectrum": { "wavelengths": [0.532], "weights": [1.0] },
  "z": { "start": -2.0, "stop": 2.0, "count": 32 },
  "elements": [ { "type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8,
                  "offset-x": 0.23, "offset-y": -0.17, "z": -0.3 },
                { "type": "phase-mask", "source": "zernike", "zernike-indices": [3, 5, 6, 7, 8, 9, 10, 11, 12, 13],
                  "zernike-coefficients": [0.12, -0.15, 0.08, -0.1, 0.15, -0.05, 0.1, -0.12, 0.06, 0.14] },
                { "type": "ff-lens", "f": 100.0, "n": 1.33 } ] }
JSON
fit_line() {
  local r=$1
  echo "$(jget seconds "$r") s, $(jget iterations_total "$r") iterations, $(ms "$(jget seconds_per_iteration "$r")") ms each"
}
c=$(cap "$(share 5)")
if [ "$c" -lt 2 ]; then
  say "fit       NOT RUN (deadline)"
  unverified "fit --backend cuda: NOT RUN (deadline)"
else
  capped "$c" "${airy[@]}" "$sim" run "$work/fit-truth.json" --backend cpu -o "$work/fit-psf.tif" -q > "$work/fit-truth.log" 2>&1
  if [ "$rc" -ne 0 ]; then
    say "fit       the truth's run on the CPU: $(why "$rc" "$c" "$took")"
    fail "fit: the truth's run on the CPU $(why "$rc" "$c" "$took")"
  else
    reports=()
    for b in cuda cpu; do
      c=$(cap "$(share 6)")
      if [ "$c" -lt 2 ]; then
        say "fit       $b: NOT RUN (deadline)"
        [ "$b" = cuda ] && unverified "fit --backend cuda: NOT RUN (deadline)"
        continue
      fi
      capped "$c" "${airy[@]}" "$sim" fit "$work/fit-psf.tif" --system "$work/fit-system.json" --zernike 15 --backend "$b" \
        -o "$work/fit-$b.json" --report "$work/fit-report-$b.json" -q > "$work/fit-$b.log" 2>&1
      if [ "$rc" -eq 0 ] && [ -s "$work/fit-report-$b.json" ]; then
        tr -d '\n' < "$work/fit-report-$b.json" > "$work/fit-report-$b.line"
        reports+=("\"$b\": $(cat "$work/fit-report-$b.line")")
        say "fit       $b: $(fit_line "$work/fit-report-$b.line")"
      elif [ "$b" = cuda ]; then
        say "fit       cuda: FAILED, $(why "$rc" "$c" "$took"): $(last_line "$work/fit-$b.log")"
        fail "fit --backend cuda $(why "$rc" "$c" "$took")"
      else
        say "fit       cpu: $(why "$rc" "$c" "$took") (not a GPU failure)"
      fi
    done
    [ ${#reports[@]} -gt 0 ] && { echo "{"; printf '%s\n' "${reports[@]}" | sed '$!s/$/,/'; echo "}"; } > "$out/fit.json"
  fi
fi

# ---- 5. chromatix on the same GPU (checked to be there) ----
chromatix_json=$out/chromatix.json
if [ ! -f "$pack/peers/chromatix_bench.py" ]; then
  say "chromatix NOT RUN: the pack has no peers/chromatix_bench.py (prepare.sh without ../shared/peers)"
  unverified "chromatix: NOT RUN (not packed)"
else
  c=$(cap "$(share 7)")
  [ "$c" -gt 30 ] && c=30
  if [ "$c" -lt 2 ]; then
    say "chromatix NOT RUN (deadline)"
    unverified "chromatix: NOT RUN (deadline)"
  else
    capped "$c" env PYTHONPATH="$pack/peers" XLA_PYTHON_CLIENT_PREALLOCATE=false "$py" -c \
      'import jax; d = jax.devices()[0]; print(d.platform, d)' > "$work/jax-platform.log" 2>&1
    platform=$(tail -1 "$work/jax-platform.log" | awk '{print $1}')
    if [ "$rc" -ne 0 ]; then
      say "chromatix NOT RUN: jax does not start ($(why "$rc" "$c" "$took"): $(last_line "$work/jax-platform.log"))"
      unverified "chromatix: NOT RUN (jax does not start)"
    elif [ "$platform" != gpu ] && [ "$platform" != cuda ]; then
      say "chromatix NOT ON GPU: jax runs on \"$(tail -1 "$work/jax-platform.log")\"; its time is not used"
      unverified "chromatix: NOT ON GPU (platform $platform)"
    else
      c=$(cap 120)
      capped "$c" env PYTHONPATH="$pack/peers" XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 \
        "$py" "$pack/peers/chromatix_bench.py" --out "$chromatix_json" > "$work/chromatix.log" 2>&1
      if [ "$rc" -ne 0 ] || [ ! -s "$chromatix_json" ]; then
        rm -f "$chromatix_json"
        say "chromatix NOT RUN: $(why "$rc" "$c" "$took"): $(last_line "$work/chromatix.log")"
        unverified "chromatix: NOT RUN ($(why "$rc" "$c" "$took"))"
      elif ! grep -q -E '"device": *"(cuda|gpu)' "$chromatix_json"; then
        say "chromatix NOT ON GPU: $(grep -m1 '"device"' "$chromatix_json" | tr -d ' ,'); its time is not used"
        mv "$chromatix_json" "$work/chromatix-not-on-gpu.json"
        unverified "chromatix: NOT ON GPU"
      else
        # chromatix's mean of 10 calls (its own measure) against Airy's median
        psf=$(tr -d '\n ' < "$chromatix_json" | sed -n 's/.*"psf_ms_mean_median_min":\[\([^,]*\),.*/\1/p')
        img=$(tr -d '\n ' < "$chromatix_json" | sed -n 's/.*"imaging_ms_mean_median_min":\[\([^,]*\),.*/\1/p')
        awm=$(ms "${airy_median[seed-widefield]:-}")
        aim=$(ms "${airy_median[seed-imaging]:-}")
        say "chromatix on the GPU ($(grep -m1 '"device"' "$chromatix_json" | sed 's/.*: *"\([^"]*\)".*/\1/')): PSF ${psf:-?} ms, imaging ${img:-?} ms (mean of 10 jitted calls)"
        say "versus    seed-widefield Airy ${awm} ms: $(ratio "$psf" "$awm") × faster; seed-imaging Airy ${aim} ms: $(ratio "$img" "$aim") × faster"
      fi
    fi
  fi
fi

# ---- 6. the CPU of the same machine, while time is left ----
say "mpi       not measurable here (the device image has no Open MPI)"
export AIRY_FFTW_PLANNER=estimate   # the physics tests' transforms: checked, not timed
c=$(cap "$(share 10)")
if [ "$c" -lt 10 ]; then
  say "cpu       physics tests NOT RUN (deadline: $(left) s left)"
else
  capped "$c" "${airy[@]}" "$pack/tests/test-physics" > "$work/test-physics.log" 2>&1
  if [ "$rc" -eq 0 ]; then
    say "cpu       test-physics: $(grep -c '^ok' "$work/test-physics.log") ok, $(grep -c '^not ok' "$work/test-physics.log") not ok"
  else
    say "cpu       test-physics: $(why "$rc" "$c" "$took") (not a GPU failure)"
  fi
fi
unset AIRY_FFTW_PLANNER
for preset in seed-widefield seed-imaging; do
  c=$(cap "$(share 12)")
  if [ "$c" -lt 10 ]; then
    say "cpu       bench $preset NOT RUN (deadline: $(left) s left)"
    continue
  fi
  capped "$c" "${airy[@]}" "$sim" bench "$preset" --backend cpu --no-write --repeat 3 --warmup 1 --json \
    > "$work/cpu-bench-$preset.json" 2> "$work/cpu-bench-$preset.log"
  j=$work/cpu-bench-$preset.json
  if [ "$rc" -eq 0 ] && grep -q median_s "$j"; then
    cat "$j" >> "$benches"
    say "cpu       bench $preset: median $(ms "$(jget median_s "$j")") ms, FFTW floor $(ms "$(jget floor_s "$j")") ms, $(jget threads "$j") threads"
  else
    say "cpu       bench $preset: $(why "$rc" "$c" "$took") (not a GPU failure)"
  fi
done
finish

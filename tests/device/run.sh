#!/usr/bin/env bash
# The GPU check, in one run on a machine with an NVIDIA GPU and CUDA 13
# (an H200 here), after tests/device/prepare.sh on the build machine:
#
#   bash tests/device/run.sh [OUT_DIR]        (carry: build-device)
#
# It links the machine's own CUDA libraries, runs the GPU tests (GPU vs CPU
# agreement, imaging and the NCCL path, noise statistics, several devices,
# GL interop through EGL), then `airy-sim bench` on both seed presets on
# the GPU (with the bare cuFFT floor beside them) and on the CPU, and
# writes everything to OUT_DIR/summary.txt. It takes a few minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-${OUT:-/tmp/airy-device}}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
say() { echo "$@" | tee -a "$summary"; }
step() { say; say "== $*"; }

# the machine's CUDA 13: its toolkit, or the pip packages' lib folders
cuda_libs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64; do
  [ -e "$d/libcudart.so.13" ] && cuda_libs="$cuda_libs:$d"
done
for pkg in nvidia/cuda_runtime nvidia/cufft nvidia/nccl nvidia/cu13; do
  d=$(python3 -c "import importlib.util,os,sys; s=importlib.util.find_spec('${pkg//\//.}'); print(os.path.join(list(s.submodule_search_locations)[0],'lib') if s else '')" 2>/dev/null)
  [ -n "$d" ] && [ -d "$d" ] && cuda_libs="$cuda_libs:$d"
done
export LD_LIBRARY_PATH="$PWD/build-device/libs${cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AIRY_BACKEND_PATH="$PWD/build-device/engine/cuda:$PWD/build-device/tests/modules"
export XDG_CACHE_HOME="$out/cache" G_DEBUG=gc-friendly LC_ALL=C.UTF-8 LANGUAGE=C
export __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json}
[ -f "$__EGL_VENDOR_LIBRARY_FILENAMES" ] || unset __EGL_VENDOR_LIBRARY_FILENAMES
sim=build-device/app/airy-sim

step "machine"
say "$(date -u) $(uname -srm)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
say "CUDA libraries from:${cuda_libs:- (none found)}"
missing=$(ldd "$sim" build-device/engine/cuda/airy-cuda.so 2>&1 | grep "not found" | sort -u)
[ -z "$missing" ] || say "missing libraries: $missing"
"$sim" info 2>&1 | tee -a "$summary"

step "GPU tests (TAP)"
timeout 300 build-device/tests/test-cuda 2>&1 | tee "$out/test-cuda.log" | grep -E "^(ok|not ok|1\.\.|# )" | tee -a "$summary"
say "test-cuda exit status: ${PIPESTATUS[0]}"
step "CPU physics tests on this machine (TAP)"
timeout 120 build-device/tests/test-physics 2>&1 | grep -E "^(ok|not ok|1\.\.)" | tee -a "$summary"

bench() {
  local preset=$1; shift
  say "-- $preset $*"
  timeout 240 "$sim" bench "$preset" "$@" --json 2>&1 | tee -a "$summary"
}
step "benchmarks on the GPU (median of 10 warm runs; floor = bare cuFFT)"
bench seed-widefield --backend cuda --repeat 10 --warmup 2
bench seed-imaging --backend cuda --repeat 10 --warmup 2
step "benchmarks on the CPU of the same machine (floor = bare FFTW, same threads)"
bench seed-widefield --backend cpu --repeat 3 --warmup 1
bench seed-imaging --backend cpu --repeat 3 --warmup 1
say
say "summary written to $summary"

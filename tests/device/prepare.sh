#!/usr/bin/env bash
# Prepares the GPU check on this machine (no GPU needed): a release build
# with the CUDA module in build-device/ (no GUI, no MPI: the GPU machine has
# no Open MPI), then build-device/pack, the one folder that travels (name
# it in run's carry): Airy's programs and test binaries in the build's
# layout (app/, tests/, engine/cuda/), stripped; the shared libraries a bare
# GPU machine may lack (GLib, json-glib, FFTW, libtiff, libpng, epoxy …) in
# libs/; glvnd's GL loaders (libEGL, libOpenGL, libGLdispatch) in libs/gl
# for a machine with the NVIDIA driver but no loader (run.sh uses them only
# then); and chromatix with its benchmark in peers/ (from ../shared/peers,
# or AIRY_PEERS). The CUDA runtime, cuFFT and NCCL are not copied (hundreds
# of MB): run.sh links the GPU machine's own CUDA 13. The pack must stay
# well inside the 64 MiB that a call carries, the working tree included.
set -euo pipefail
cd "$(dirname "$0")/../.."
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
limit_mib=${AIRY_PACK_LIMIT_MIB:-40}

want="cuda=enabled gui=disabled mpi=disabled buildtype=release tests=true"
options=()
for o in $want; do options+=("-D$o"); done
options_of() {
  meson introspect "$1" --buildoptions | /usr/bin/python3 -c '
import json, sys
opts = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(" ".join("%s=%s" % (k, str(opts.get(k)).lower()) for k in sys.argv[1:]))' cuda gui mpi buildtype tests
}

if [ -f build-device/build.ninja ]; then
  have=$(options_of build-device)
  if [ "$have" != "$want" ]; then
    # a build dir made with other options is not reused as it is
    echo "prepare: build-device has $have; reconfiguring for $want"
    meson setup --reconfigure build-device "${options[@]}" >/dev/null
  fi
else
  meson setup build-device "${options[@]}" >/dev/null
fi
have=$(options_of build-device)
if [ "$have" != "$want" ]; then
  echo "prepare: FAILED: build-device has $have after configuring, wanted $want" >&2
  exit 1
fi
if ! ninja -C build-device > build-device/ninja.log 2>&1; then
  tail -30 build-device/ninja.log >&2
  echo "prepare: FAILED: the build (build-device/ninja.log)" >&2
  exit 1
fi
programs="app/airy-sim tests/test-cuda tests/test-physics engine/cuda/airy-cuda.so tests/modules/airy-ring-mask.so"
for f in $programs; do
  if [ ! -e "build-device/$f" ]; then
    echo "prepare: FAILED: build-device/$f was not built (is nvcc on PATH? CUDA 13 in /usr/local/cuda?)" >&2
    exit 1
  fi
done

pack=build-device/pack
rm -rf "$pack"
mkdir -p "$pack/libs/gl"
for f in $programs; do
  mkdir -p "$pack/$(dirname "$f")"
  cp "build-device/$f" "$pack/$f"
  strip --strip-unneeded "$pack/$f" 2>/dev/null || true
done
# the run-time libraries the machine may lack; never libc, the C++ runtime,
# CUDA's or the driver's and GL's (the machine's own must be used)
for f in $programs; do
  ldd "build-device/$f" | awk '/=> \//{print $3}'
done | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libcudart|libcufft|libnccl|libcuda|libGL[^/]*|libEGL[^/]*|libGLX[^/]*|libOpenGL[^/]*)\.so' \
  | while read -r lib; do cp -L "$lib" "$pack/libs/"; done
# the loaders epoxy opens (the NVIDIA vendor libraries come with the driver)
for lib in libEGL.so.1 libOpenGL.so.0 libGLdispatch.so.0; do
  path=$("$ldconfig" -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
  [ -n "$path" ] && cp -L "$path" "$pack/libs/gl/"
done
strip --strip-unneeded "$pack"/libs/*.so* "$pack"/libs/gl/*.so* 2>/dev/null || true
echo "prepare: $pack: $want; $(ls "$pack/libs" | grep -c '\.so') libraries, $(ls "$pack/libs/gl" | wc -l) GL loaders"

# chromatix beside Airy on the same GPU
peers=${AIRY_PEERS:-$(cd .. && pwd)/shared/peers}
if [ -f "$peers/chromatix_bench.py" ]; then
  mkdir -p "$pack/peers"
  cp "$peers/chromatix_bench.py" "$pack/peers/"
  [ -d "$peers/chromatix" ] && cp -r "$peers/chromatix" "$pack/peers/"
  find "$pack/peers" -name __pycache__ -prune -exec rm -rf {} +
  echo "prepare: chromatix and its benchmark copied to $pack/peers ($(du -sh "$pack/peers" | cut -f1))"
else
  echo "prepare: no $peers here: the device run will say chromatix was NOT RUN"
fi

size_kib=$(du -sk "$pack" | cut -f1)
if [ "$size_kib" -gt $(( limit_mib * 1024 )) ]; then
  echo "prepare: FAILED: $pack is $(( size_kib / 1024 )) MiB, more than ${limit_mib} MiB (a call carries 64 MiB in all)" >&2
  exit 1
fi
echo "prepare: $pack is $(( (size_kib + 1023) / 1024 )) MiB: carry it (run's carry: [\"build-device/pack\"])"

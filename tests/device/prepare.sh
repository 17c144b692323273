#!/usr/bin/env bash
# Prepares the GPU check on this machine (no GPU needed): a release build
# with the CUDA module in build-device/, the shared libraries it needs that
# a bare GPU machine may lack (GLib, json-glib, FFTW, libtiff, libpng,
# epoxy …) in build-device/libs, and glvnd's GL loaders (libEGL,
# libOpenGL, libGLdispatch) in build-device/libs/gl for a machine with the
# NVIDIA driver but no loader (run.sh uses them only then). The CUDA
# runtime, cuFFT and NCCL are not copied (hundreds of MB): run.sh links
# the GPU machine's own CUDA 13.
set -euo pipefail
cd "$(dirname "$0")/../.."
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"

want="cuda=enabled gui=disabled buildtype=release tests=true"
options=()
for o in $want; do options+=("-D$o"); done
options_of() {
  meson introspect "$1" --buildoptions | /usr/bin/python3 -c '
import json, sys
opts = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(" ".join("%s=%s" % (k, str(opts.get(k)).lower()) for k in sys.argv[1:]))' cuda gui buildtype tests
}

if [ -f build-device/build.ninja ]; then
  have=$(options_of build-device)
  if [ "$have" != "$want" ]; then
    # a build dir made with other options (once: a non-CUDA one) is not
    # reused as it is
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
ninja -C build-device >/dev/null
for f in build-device/engine/cuda/airy-cuda.so build-device/tests/test-cuda build-device/app/airy-sim; do
  if [ ! -e "$f" ]; then
    echo "prepare: FAILED: $f was not built (is nvcc on PATH? CUDA 13 in /usr/local/cuda?)" >&2
    exit 1
  fi
done

rm -rf build-device/libs
mkdir -p build-device/libs/gl
for bin in build-device/app/airy-sim build-device/tests/test-cuda build-device/tests/test-physics \
           build-device/engine/cuda/airy-cuda.so; do
  ldd "$bin" | awk '/=> \//{print $3}'
done | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libcudart|libcufft|libnccl|libcuda|libGL[^/]*|libEGL[^/]*|libGLX[^/]*|libOpenGL[^/]*)\.so' \
  | while read -r lib; do cp -L "$lib" build-device/libs/; done
# the loaders epoxy opens (the NVIDIA vendor libraries come with the driver)
for lib in libEGL.so.1 libOpenGL.so.0 libGLdispatch.so.0; do
  path=$("$ldconfig" -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
  [ -n "$path" ] && cp -L "$path" build-device/libs/gl/
done
echo "prepare: build-device: $want; $(ls build-device/libs | grep -c '\.so') libraries packed, $(ls build-device/libs/gl | wc -l) GL loaders"
du -sh build-device | awk '{print "prepare: build-device is " $1 " (carry it: name build-device in run\x27s carry)"}'
# chromatix beside Airy on the same GPU (the GPU issue): ../shared/peers,
# when this checkout has it, travels inside build-device
peers=$(cd .. && pwd)/shared/peers
rm -rf build-device/peers
if [ -f "$peers/chromatix_bench.py" ]; then
  cp -r "$peers" build-device/peers
  echo "prepare: chromatix and its benchmark copied to build-device/peers ($(du -sh build-device/peers | cut -f1))"
else
  echo "prepare: no ../shared/peers here: the device run will not time chromatix"
fi

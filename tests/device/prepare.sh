#!/usr/bin/env bash
# Prepares the GPU check on this machine (no GPU needed): a release build
# with the CUDA module in build-device/, and the shared libraries it needs
# that a bare GPU machine may lack (GLib, json-glib, FFTW, libtiff, libpng,
# epoxy …) in build-device/libs. The CUDA runtime, cuFFT and NCCL are not
# copied (hundreds of MB): run.sh links the GPU machine's own CUDA 13.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
if [ ! -f build-device/build.ninja ]; then
  meson setup build-device -Dcuda=enabled -Dgui=disabled -Dbuildtype=release >/dev/null
fi
ninja -C build-device >/dev/null
mkdir -p build-device/libs
for bin in build-device/app/airy-sim build-device/tests/test-cuda build-device/tests/test-physics \
           build-device/engine/cuda/airy-cuda.so; do
  ldd "$bin" | awk '/=> \//{print $3}'
done | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libcudart|libcufft|libnccl|libcuda|libGL[^/]*|libEGL[^/]*|libGLX[^/]*|libOpenGL[^/]*)\.so' \
  | while read -r lib; do cp -L "$lib" build-device/libs/; done
du -sh build-device | awk '{print "prepare: build-device is " $1 " (carry it: name build-device in run\x27s carry)"}'

#!/usr/bin/env bash
# Regenerates the fuzz seed corpora in tests/fuzz/corpus/{json,png,tiff,zarr}:
# the presets, files written by Airy itself (a PSF stack, its colormapped
# middle plane, a microscope image), and the hand-made valid and broken
# files of make-corpus.py. Needs a build (for airy-sim) and Debian's
# python3-tifffile.
#
#   tests/fuzz/make-corpus.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
sim=$build/app/airy-sim
out=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out/json" "$out/png" "$out/tiff"
for p in $("$sim" preset --list); do
  "$sim" preset "$p" > "$out/json/preset-$p"
done
"$sim" info --elements > "$tmp/elements"
/usr/bin/python3 "$here/make-corpus.py" "$out" "$tmp/elements"

# written by Airy (16 × 16 grids, 3 planes: a few KB each)
export XDG_CACHE_HOME=$tmp/cache
"$sim" run "$out/json/minimal" -o "$tmp/psf.tif" --png "$tmp/psf.png" -q
"$sim" run "$out/json/microscope-sample-1" -o "$tmp/image.tif" --psf-out "$tmp/image-psf.tif" -q
cp "$tmp/psf.tif" "$out/tiff/airy-psf-stack"
cp "$tmp/image.tif" "$out/tiff/airy-image"
cp "$tmp/image-psf.tif" "$out/tiff/airy-image-psf"
cp "$tmp/psf.png" "$out/png/airy-colormapped"
# two wavelengths kept as channels: a hyperstack with Airy's wavelength tag
sed 's/"wavelengths": \[/&0.64, /; s/"weights": \[/&1.0, /' "$out/json/minimal" | tr -d '\n' > "$tmp/two.json"
"$sim" run "$tmp/two.json" -o "$tmp/channels.tif" --channels wavelength -q
cp "$tmp/channels.tif" "$out/tiff/airy-channels"

for kind in json png tiff; do
  printf '%s: %d files, %d bytes\n' "$kind" "$(ls "$out/$kind" | wc -l)" "$(cat "$out/$kind"/* | wc -c)"
done
"$here/make-zarr-corpus.sh" "$build" >/dev/null

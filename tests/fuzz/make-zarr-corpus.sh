#!/usr/bin/env bash
# Regenerates tests/fuzz/corpus/zarr: each seed is a store's .zattrs, a NUL,
# level 0's .zarray, a NUL and its first chunk (fuzz-zarr.c). Stores written
# by airy-sim (a small PSF stack) and by Debian's python3-zarr (other dtypes,
# compressors, separators, a bare array), and one edit each of the lies the
# reader refuses. Called by make-corpus.sh; needs a build and python3-zarr.
#
#   tests/fuzz/make-zarr-corpus.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
out=$here/corpus/zarr
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out"
cat > "$tmp/psf.json" <<'JSON'
{"airy": 1, "grid": {"shape": [16, 16], "spacing": 1}, "spectrum": {"wavelengths": [0.5]},
 "z": {"start": -1, "stop": 1, "count": 2},
 "elements": [{"type": "objective-point-source", "f": 10, "n": 1, "na": 0.5}, {"type": "ff-lens", "f": 10, "n": 1}]}
JSON
"$build/app/airy-sim" run "$tmp/psf.json" -q -o "$tmp/airy.ome.zarr" 2>/dev/null
/usr/bin/python3 - "$tmp" "$out" <<'PY'
import os, sys, zarr, numpy as np, numcodecs
tmp, out = sys.argv[1:]

def seed(name, zattrs, zarray, chunk):
    with open(os.path.join(out, name), "wb") as f:
        f.write(zattrs + b"\0" + zarray + b"\0" + chunk)

def read(p):
    with open(p, "rb") as f:
        return f.read()

a = os.path.join(tmp, "airy.ome.zarr")
attrs, array, chunk = read(a + "/.zattrs"), read(a + "/0/.zarray"), read(a + "/0/0/0/0")
seed("airy", attrs, array, chunk)
lies = {
    "lie-chunks": (b'"chunks": [1, 16, 16]', b'"chunks": [1, 8, 16]'),
    "lie-dtype": (b'"<f4"', b'"<f8"'),
    "lie-dtype-complex": (b'"<f4"', b'"<c8"'),
    "lie-compressor": (b'"id": "blosc"', b'"id": "lz4"'),
    "lie-no-compressor": (b'"compressor": {', b'"compressor": null, "x": {'),
    "lie-order": (b'"order": "C"', b'"order": "F"'),
    "lie-filters": (b'"filters": null', b'"filters": [{"id": "delta"}]'),
    "lie-shape": (b'"shape": [2, 16, 16]', b'"shape": [2, 16]'),
    "lie-fill-null": (b'"fill_value": 0.0', b'"fill_value": null'),
}
for name, (old, new) in lies.items():
    seed(name, attrs, array.replace(old, new, 1), chunk)
seed("lie-path", attrs.replace(b'"path" : "0"', b'"path" : "../0"', 1), array, chunk)
seed("lie-unit", attrs.replace(b'"micrometer"', b'"parsec"', 1), array, chunk)
seed("lie-version", attrs.replace(b'"0.4"', b'"0.5"', 1), array, chunk)
seed("missing-chunk", attrs, array, b"")
cases = [("u2", numcodecs.Blosc("lz4", 5, 2), "."), (">f8", numcodecs.Zstd(3), "/"), ("i1", None, "."),
         ("<u4", numcodecs.Blosc("zlib", 1, 0), "/")]
for i, (dt, comp, sep) in enumerate(cases):
    v = (np.arange(2 * 6 * 5) % 97).reshape(2, 6, 5).astype(dt)
    p = os.path.join(tmp, "py%d.zarr" % i)
    z = zarr.create(v.shape, chunks=(1, 6, 5), dtype=dt, compressor=comp, fill_value=0,
                    store=zarr.DirectoryStore(p, dimension_separator=sep))
    z[:] = v
    key = "0/0/0" if sep == "/" else "0.0.0"
    seed("python-%s" % dt.strip("<>|"), b"", read(p + "/.zarray"), read(p + "/" + key))
seed("python-group-3d", attrs.replace(b'"airy"', b'"other"', 1), read(os.path.join(tmp, "py0.zarr/.zarray")),
     read(os.path.join(tmp, "py0.zarr/0.0.0")))
PY
ls "$out" | wc -l

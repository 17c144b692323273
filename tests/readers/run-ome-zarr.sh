#!/usr/bin/env bash
# The ome-zarr package reads and validates stores airy-sim writes (issue #32):
#   run-ome-zarr.sh BUILD_ROOT SOURCE_ROOT
# The venv is BUILD_ROOT/peers-venv (tests/peers/venv.sh, with ome-zarr
# added); without it (no network, no venv module) the test is skipped with
# the reason. Two stores: the widefield preset (planes as chunks) and planes
# of 2100 x 2100 (tiles of 1024 with edges).
set -uo pipefail
build=$1 source=$2
skip() { echo "1..0 # SKIP $*"; exit 0; }
python=$("$source/tests/peers/venv.sh" "$build/peers-venv" ome-zarr) \
  || skip "no virtual environment with ome-zarr (see the message above)"
sim=${AIRY_SIM:-$build/app/airy-sim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$sim" run --preset widefield -q -o "$tmp/widefield.ome.zarr" || { echo "1..1"; echo "not ok 1 - airy-sim run"; exit 1; }
cat > "$tmp/tiles.json" <<'JSON'
{"airy": 1, "grid": {"shape": [2100, 2100], "spacing": 0.05}, "spectrum": {"wavelengths": [0.5]},
 "z": {"start": -0.5, "stop": 0.5, "count": 2},
 "elements": [{"type": "objective-point-source", "f": 2, "n": 1.33, "na": 0.8}, {"type": "ff-lens", "f": 2, "n": 1.33}]}
JSON
"$sim" run "$tmp/tiles.json" -q -o "$tmp/tiles.ome.zarr" || { echo "1..1"; echo "not ok 1 - airy-sim run (tiles)"; exit 1; }
grep -q '"chunks": \[1, 1024, 1024\]' "$tmp/tiles.ome.zarr/0/.zarray" \
  || { echo "1..1"; echo "not ok 1 - tiles.ome.zarr is not chunked in tiles of 1024"; exit 1; }
exec "$python" "$source/tests/readers/ome-zarr-check.py" "$tmp/widefield.ome.zarr" "$tmp/tiles.ome.zarr"

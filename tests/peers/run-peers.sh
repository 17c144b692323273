#!/usr/bin/env bash
# The peer tests: makes the venv (tests/peers/venv.sh, once), runs chromatix on
# every case (cases.py, one process) and then Airy's side (test-peers).
#   run-peers.sh BUILD_ROOT SOURCE_ROOT TEST_PEERS_BINARY
# chromatix is found in $AIRY_PEERS_DIR (the folder holding chromatix/), by
# default SOURCE_ROOT/../shared/peers; the venv is BUILD_ROOT/peers-venv (the
# one tests/peers/bench uses), the results BUILD_ROOT/peers-results (read by
# test-peers from $AIRY_PEERS_RESULTS). Without chromatix or the registry: TAP skip.
set -uo pipefail
build=$1 source=$2 binary=$3
here=$(cd "$(dirname "$0")" && pwd)
peers=${AIRY_PEERS_DIR:-$source/../shared/peers}
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ -f "$peers/chromatix/__init__.py" ] || skip "no chromatix at $peers/chromatix (the project's shared/peers)"
python=$("$here/venv.sh" "$build/peers-venv" tifffile) || skip "no virtual environment for chromatix (see the message above)"
out="$build/peers-results"
rm -rf "$out"
PYTHONPATH="$(cd "$peers" && pwd)" JAX_PLATFORMS=cpu "$python" "$here/cases.py" "$out" >&2 \
  || { echo "1..1"; echo "not ok 1 - chromatix's side (cases.py) failed"; exit 1; }
AIRY_PEERS_RESULTS=$out exec "$binary" --tap

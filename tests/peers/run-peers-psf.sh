#!/usr/bin/env bash
# Airy's scanning modalities beside Gohlke's psf package: the peer venv
# (tests/peers/venv.sh, with psf from the package registry), psf's side of
# every case (psf-cases.py), then Airy's (test-peers-psf).
#   run-peers-psf.sh BUILD_ROOT TEST_PEERS_PSF_BINARY
# Without the registry the test is skipped with the reason.
set -uo pipefail
build=$1 binary=$2
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "1..0 # SKIP $*"; exit 0; }
python=$("$here/venv.sh" "$build/peers-venv" psf) || skip "no virtual environment with psf (see the message above)"
out="$build/peers-psf-results"
rm -rf "$out"
"$python" "$here/psf-cases.py" "$out" >&2 \
  || { echo "1..1"; echo "not ok 1 - psf's side (psf-cases.py) failed"; exit 1; }
AIRY_PEERS_RESULTS=$out exec "$binary" --tap

#!/usr/bin/env bash
# A Python virtual environment for the peer tests, made once and reused.
#
#   tests/peers/venv.sh DIR [PKG...]
#
# makes DIR (a venv of /usr/bin/python3, or python3) if it is missing, installs
# chromatix's dependencies and any PKG given (pip requirement specifiers, e.g.
# `psf` or `ome-zarr==0.9`) from the package registry, and prints DIR/bin/python.
# A stamp file (DIR/.airy-stamp) lists what is installed: a later call with the
# same packages returns at once, one with more installs only those. A lock
# (DIR.lock, flock) serialises parallel tests. pip honours PIP_FIND_LINKS and
# PIP_INDEX_URL as usual.
#
# Exit status 77 (meson's "skipped") with the reason on stderr when the
# environment cannot be made: no python venv module, or the registry is
# unreachable.
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: $0 DIR [PKG...]" >&2; exit 2; }
dir=$1; shift
# chromatix (51c10db) runs with these (checked together, JAX on the CPU)
base=(jax==0.10.2 jaxlib==0.10.2 equinox==0.13.8 einops==0.8.2 jaxtyping==0.3.11
      chex==0.1.92 scipy==1.17.1 numpy==2.4.6)
want=("${base[@]}" "$@")

python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3) || { echo "no python3 to make a virtual environment with" >&2; exit 77; }

mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

stamp="$dir/.airy-stamp"
missing=()
for p in "${want[@]}"; do
  grep -qxF -- "$p" "$stamp" 2>/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ ! -x "$dir/bin/python" ]; then
    "$python" -m venv "$dir" >&2 || { rm -rf "$dir"; echo "cannot make a virtual environment with $python -m venv (Debian: apt-get install python3-venv)" >&2; exit 77; }
  fi
  echo "peers: installing ${missing[*]} into $dir" >&2
  if ! "$dir/bin/python" -m pip install -q --disable-pip-version-check "${missing[@]}" >&2; then
    echo "cannot install ${missing[*]} from the package registry (no network?)" >&2
    exit 77
  fi
  printf '%s\n' "${missing[@]}" >> "$stamp"
fi
echo "$dir/bin/python"

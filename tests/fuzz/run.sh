#!/usr/bin/env bash
# A libFuzzer campaign on each harness, one after the other:
#
#   tests/fuzz/run.sh SECONDS [json] [png] [tiff] [zarr]    (default: all four)
#
# Needs the libFuzzer build (CC=clang meson setup build-fuzz -Dfuzzing=true
# -Dgui=disabled -Dcuda=disabled; BUILD_FUZZ names another). Each harness
# starts from its checked-in seeds (tests/fuzz/corpus/NAME, never written)
# and keeps what it finds in a work directory outside the source tree,
# AIRY_FUZZ_WORK (default ~/.cache/airy-fuzz): NAME/corpus grows from run to
# run, NAME/crashes gets one reproducer per crash, leak, out-of-memory
# (-rss_limit_mb=2048, or one malloc over -malloc_limit_mb=256: the
# harnesses set a 64 MiB budget) or timeout (-timeout=10 s), NAME/log the
# output.
# fuzz-tiff compares every accepted stack with an independent decode of the
# file (tests/fuzz/README.md); AIRY_FUZZ_DECODE=0 turns that off.
# Fuzzing goes on after a crash (fork mode). Exit status 1 if anything
# was found; a reproducer replays with `build-fuzz/tests/fuzz/fuzz-NAME FILE`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${BUILD_FUZZ:-$src/build-fuzz}
work=${AIRY_FUZZ_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/airy-fuzz}
secs=${1:?usage: run.sh SECONDS [json] [png] [tiff] [zarr]}
shift
harnesses=${*:-json png tiff zarr}
found=0

declare -A max_len=([json]=8192 [png]=16384 [tiff]=16384 [zarr]=16384)

for name in $harnesses; do
  bin=$build/tests/fuzz/fuzz-$name
  [ -x "$bin" ] || { echo "run.sh: $bin missing; build with -Dfuzzing=true (see tests/fuzz/meson.build)" >&2; exit 2; }
  dir=$work/$name
  mkdir -p "$dir/corpus" "$dir/crashes"
  dict=()
  [ -f "$here/$name.dict" ] && dict=(-dict="$here/$name.dict")
  before=$(ls "$dir/corpus" | wc -l)
  crashes_before=$(ls "$dir/crashes" | wc -l)
  mode=
  [ "$name" = tiff ] && mode=", independent decode ${AIRY_FUZZ_DECODE:-1}"
  echo "== $name: ${secs} s, corpus $dir/corpus ($before files) + $here/corpus/$name$mode"
  # fork mode: one worker at a time, a crash ends that worker, not the campaign
  "$bin" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10 -max_len="${max_len[$name]}" \
    -artifact_prefix="$dir/crashes/" "${dict[@]}" \
    "$dir/corpus" "$here/corpus/$name" > "$dir/log" 2>&1 || true
  last=$(grep -E '^#[0-9]+: cov:' "$dir/log" | tail -1 || true)
  after=$(ls "$dir/corpus" | wc -l)
  new_crashes=$(( $(ls "$dir/crashes" | wc -l) - crashes_before ))
  echo "   ${last:-no stats (see $dir/log)}"
  echo "   corpus: $before → $after files; new findings: $new_crashes"
  if [ "$new_crashes" -gt 0 ]; then
    found=1
    ls -t "$dir/crashes" | head -n "$new_crashes" | sed "s|^|   $dir/crashes/|"
  fi
done
exit $found

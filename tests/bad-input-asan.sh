#!/usr/bin/env bash
# The bad-input tests on an AddressSanitizer + UndefinedBehaviorSanitizer
# build: hostile system files, options, outputs and signals
# (system-hostile, cli-hostile), hostile TIFFs, PNGs, OME-XML, FIFOs and
# oversized masks (reader-hostile), the readers' own cases (tiff, readers,
# files) and the three fuzz harnesses over their seed corpora.
#
#   tests/bad-input-asan.sh            build in build-asan/ (AIRY_ASAN_BUILD names another), run
#
# Any sanitizer report fails the test it happens in (halt_on_error, and
# abort_on_error so the TAP shows it). Leak checking is off: GLib keeps its
# type system and caches for the process's life by design, which LeakSanitizer
# would list on every exit; AIRY_ASAN_LEAKS=1 turns it on. Without the GUI
# and CUDA (the GUI tests need a display, CUDA a device), release-like
# optimisation (-O1) so the hostile cases run in minutes.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${AIRY_ASAN_BUILD:-$src/build-asan}
jobs=${AIRY_ASAN_JOBS:-2}
tests=(system-hostile cli-hostile reader-hostile tiff readers files fuzz-json fuzz-png fuzz-tiff)

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$src" -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=true \
    -Dgui=disabled -Dcuda=disabled -Dc_args=-fno-sanitize-recover=undefined
fi
ninja -C "$build" -j "$jobs"

leaks=0
[ "${AIRY_ASAN_LEAKS:-0}" = 1 ] && leaks=1
export ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
# the sanitizers' own reports go to stderr, which meson keeps in the log
meson test -C "$build" --num-processes 1 --print-errorlogs "${tests[@]}"

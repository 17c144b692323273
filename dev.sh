#!/usr/bin/env bash
# Airy's one helper script: installs what is missing (Debian 12), builds, and
# either starts the main job or runs the whole test suite.
#
#   ./dev.sh run    install, build, start Airy on the default preset
#   ./dev.sh test   install, build, run every test; last line "N passed, N failed, N skipped"
set -euo pipefail
cd "$(dirname "$0")"

BUILD=${AIRY_BUILD_DIR:-build}
PACKAGES=(meson ninja-build pkg-config gcc libc6-dev python3 python3-dev python3-numpy gettext
          libglib2.0-dev libjson-glib-dev libfftw3-dev libpng-dev libtiff-dev libgsl-dev libblosc-dev libzstd-dev
          libgtk-4-dev libepoxy-dev libopenmpi-dev gobject-introspection libgirepository1.0-dev
          desktop-file-utils shared-mime-info libgtk-4-bin)  # the install's post-install steps
TEST_PACKAGES=(xvfb xauth libgl1-mesa-dri appstream flatpak-builder
               python3-jsonschema libglib2.0-bin libxml2-utils
               imagej python3-tifffile python3-numpy python3-pytest python3-mesonpy patchelf openmpi-bin python3-gi xdotool locales
               python3-venv python3-zarr python3-numcodecs
               slurm-wlm munge valgrind)  # tests/slurm (its own one-node cluster), tests/scaling

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
  # the CUDA toolkit, when the machine has one, builds the CUDA backend module
  if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  if [ ! -f "$BUILD/build.ninja" ]; then
    log "configuring $BUILD"
    meson setup "$BUILD" >&2
  fi
  log "building"
  ninja -C "$BUILD" >&2
}

# Per-case counts from meson's test log: every GLib test binary speaks TAP.
# the TAP results of the meson test logs named (default: this build's)
summarize() {
  [ $# -gt 0 ] || set -- "$BUILD/meson-logs/testlog.json"
  python3 - "$@" <<'PY'
import json, os, re, sys
passed = failed = skipped = 0
lines = []
for path in sys.argv[1:]:
    try:
        lines += open(path, encoding="utf-8").read().splitlines()
    except OSError:
        pass
for line in lines:
    if not line.strip():
        continue
    t = json.loads(line)
    out = t.get("stdout") or ""
    cases = [l for l in out.splitlines() if re.match(r"^(not )?ok\b", l)]
    plan_skip = re.search(r"^1\.\.0\s*#\s*SKIP", out, re.M | re.I)
    bad = 0
    if cases:
        for c in cases:
            if c.startswith("not ok"):
                if re.search(r"#\s*TODO", c, re.I):
                    continue
                failed += 1; bad += 1
            elif re.search(r"#\s*SKIP", c, re.I):
                skipped += 1
            else:
                passed += 1
    elif plan_skip or t.get("result") == "SKIP":
        skipped += 1
    elif t.get("result") in ("OK", "EXPECTEDFAIL"):
        passed += 1
    # a binary that crashed or bailed out fails even if no case said "not ok"
    if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL") and bad == 0:
        failed += 1
# a step that failed before its tests ran (a build) counts as one failure
failed += int(os.environ.get("AIRY_SUMMARY_FAILED", "0"))
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
PY
}

cmd=${1:-run}
case "$cmd" in
  summary)
    # ./dev.sh summary DIR…: one line over the tests run in those build folders
    shift
    logs=()
    for d in "$@"; do logs+=("$d/meson-logs/testlog.json"); done
    summarize "${logs[@]}"
    ;;
  run)
    install_missing "${PACKAGES[@]}"
    build
    if [ -x "$BUILD/app/airy" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
      log "starting Airy on the widefield preset"
      exec env AIRY_BACKEND_PATH="$BUILD/engine/cuda" GSETTINGS_SCHEMA_DIR="$BUILD/resources" \
        "$BUILD/app/airy" --preset widefield
    fi
    out="$PWD/$BUILD/widefield.tif"
    log "running airy-sim on the widefield preset"
    AIRY_BACKEND_PATH="$BUILD/engine/cuda" "$BUILD/app/airy-sim" run --preset widefield -o "$out" --png "${out%.tif}.png"
    log "the PSF stack is in $out (open it in Fiji or napari); the middle plane is in ${out%.tif}.png"
    ;;
  test)
    install_missing "${PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    # the German-locale test (one decimal sign, the locale's) needs de_DE.UTF-8
    if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
      log "making the de_DE.UTF-8 locale"
      sudo=()
      [ "$(id -u)" -eq 0 ] || sudo=(sudo)
      "${sudo[@]}" localedef -i de_DE -c -f UTF-8 de_DE.UTF-8 || true
    fi
    build
    log "running the tests"
    runner=()
    if [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then
      runner=(xvfb-run -a -s "-screen 0 1280x800x24")
    fi
    set +e
    # the second readers (ImageJ, tifffile) are installed above: a missing
    # one fails instead of skipping
    AIRY_REQUIRE_READERS=1 "${runner[@]}" meson test -C "$BUILD" --print-errorlogs --num-processes 1 >&2
    set -e
    summarize
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# gtk4-builder-tool validate needs a display (it crashes without one).
set -euo pipefail
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "check-ui: no display, skipped"
  exit 77
fi
status=0
for ui in "$@"; do
  gtk4-builder-tool validate "$ui" || status=1
done
exit $status

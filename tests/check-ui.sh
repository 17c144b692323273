#!/usr/bin/env bash
# gtk4-builder-tool validate needs a display (it crashes without one).
set -euo pipefail
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "check-ui: no display, skipped"
  exit 77
fi
status=0
# The app's own widgets inside a template (the window's bench panel and
# viewer) are unknown to the tool: validated as GtkBox, their parent class.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ui in "$@"; do
  copy="$tmp/$(basename "$ui")"
  sed -E 's/<object class="Airy(BenchPanel|StackViewer)"/<object class="GtkBox"/' "$ui" > "$copy"
  gtk4-builder-tool validate "$copy" || status=1
done
exit $status

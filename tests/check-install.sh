#!/usr/bin/env bash
# `meson install` into a DESTDIR, then the installed programs find their
# modules, presets and data without any Airy variable.
set -euo pipefail
build=$1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
unset AIRY_BACKEND_PATH AIRY_LOCALEDIR
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
libdir=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"))')
root="$dest$prefix"
fail() { echo "check-install: $*" >&2; exit 1; }

for f in bin/airy-sim share/airy/presets/widefield.json share/airy/presets/seed-widefield.json \
         share/airy/airy-system.schema.json share/locale/de/LC_MESSAGES/airy.mo; do
  [ -f "$root/$f" ] || fail "missing $f"
done
# libairy for other programs (tests/check-library.sh checks what they see)
for f in "$libdir/libairy.so.0" "$libdir/libairy.so" "$libdir/pkgconfig/airy.pc" include/airy/airy.h \
         include/airy/airy-version.h; do
  [ -e "$root/$f" ] || fail "missing $f"
done
ls "$root/include/airy" | grep -q -- '-private\.h$' && fail "private headers installed: $(ls "$root/include/airy")"
if [ -f "$build/engine/Airy-0.typelib" ]; then
  for f in "$libdir/girepository-1.0/Airy-0.typelib" share/gir-1.0/Airy-0.gir; do
    [ -f "$root/$f" ] || fail "missing $f"
  done
fi
if [ -x "$build/app/airy" ]; then
  for f in bin/airy share/applications/io.github.airyoptics.Airy.desktop \
           share/metainfo/io.github.airyoptics.Airy.metainfo.xml \
           share/icons/hicolor/scalable/apps/io.github.airyoptics.Airy.svg \
           share/icons/hicolor/symbolic/apps/io.github.airyoptics.Airy-symbolic.svg \
           share/glib-2.0/schemas/io.github.airyoptics.Airy.gschema.xml \
           share/mime/packages/io.github.airyoptics.Airy.xml; do
    [ -f "$root/$f" ] || fail "missing $f"
  done
fi

info=$("$root/bin/airy-sim" info)
echo "$info" | grep -q "Presets: astigmatic brightfield-bead confocal depth-aberration imaging ism light-field light-sheet oil-vectorial polarization-microscope seed-imaging seed-widefield sim sted two-photon widefield" || fail "presets not found: $info"
if [ -f "$build/engine/cuda/airy-cuda.so" ]; then
  [ -f "$root/$libdir/airy/backends/airy-cuda.so" ] || fail "the CUDA module was not installed"
  echo "$info" | grep -q "module: $root/$libdir/airy/backends/airy-cuda.so" || fail "the installed CUDA module was not found: $info"
  echo "$info" | grep -q "no CUDA device" || fail "no 'no CUDA device' line: $info"
fi
"$root/bin/airy-sim" schema --builtin | cmp -s - "$root/share/airy/airy-system.schema.json" \
  || fail "the installed schema is not what the installed airy-sim describes"
"$root/bin/airy-sim" run --preset widefield -o "$dest/wf.tif" -q --threads 1
[ -s "$dest/wf.tif" ] || fail "the installed airy-sim wrote nothing"
echo "check-install: ok ($root)"

#!/usr/bin/env bash
# libairy for other programs: `meson install` into a DESTDIR, then what a
# program outside the tree sees there. The installed airy.h includes no
# *-private.h header and no header from the source tree, compiles alone with
# -Wall -Werror (each installed header too), and a program built with
# `pkg-config --cflags --libs airy` alone computes the widefield PSF right
# (tests/library/psf-peak.c), and so does tests/library/airy-gi.py through the
# installed typelib. Nothing installed keeps the build folder's rpath.
set -euo pipefail
src=$1 build=$2 cc=$3
fail() { echo "check-library: $*" >&2; exit 1; }
command -v pkg-config >/dev/null || { echo "check-library: SKIP: no pkg-config on PATH"; exit 77; }
command -v readelf >/dev/null || { echo "check-library: SKIP: no readelf on PATH (binutils)"; exit 77; }
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
unset AIRY_BACKEND_PATH LD_LIBRARY_PATH
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
opt() { meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]==sys.argv[1]))' "$1"; }
prefix=$(opt prefix) libdir=$(opt libdir) includedir=$(opt includedir)
root="$dest$prefix"
version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
lib="$root/$libdir/libairy.so.$version"

[ -f "$lib" ] || fail "libairy.so.$version not installed in $libdir"
[ "$(readlink "$root/$libdir/libairy.so.${version%%.*}")" = "libairy.so.$version" ] || fail "no libairy.so.${version%%.*} link"
[ -L "$root/$libdir/libairy.so" ] || fail "no libairy.so link for the linker"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libairy.so.${version%%.*}" ] || fail "soname is '$soname', not libairy.so.${version%%.*}"
for f in "$lib" "$root"/bin/* $(find "$root/$libdir/airy" -name '*.so' 2>/dev/null); do
  if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qF "$(cd "$build" && pwd)"; then
    fail "$f keeps the build folder's rpath: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"
  fi
done

inc="$root/$includedir/airy"
[ -f "$inc/airy.h" ] || fail "airy.h not installed in $includedir/airy"
ls "$inc" | grep -- '-private\.h$' && fail "private headers installed"
# the .pc as installed names the real prefix; here it lives under DESTDIR
pcdir="$dest/pkgconfig"
mkdir "$pcdir"
sed "s|^prefix=.*|prefix=$root|" "$root/$libdir/pkgconfig/airy.pc" > "$pcdir/airy.pc"
export PKG_CONFIG_PATH="$pcdir"
cflags=$(pkg-config --cflags airy) libs=$(pkg-config --libs airy)
[ "$(pkg-config --modversion airy)" = "$version" ] || fail "airy.pc says version $(pkg-config --modversion airy)"

# what airy.h pulls in: its own installed headers and system ones, no
# *-private.h, nothing of the source or build tree
m=$(echo '#include <airy.h>' | "$cc" -x c -M $cflags - 2>&1) \
  || fail "the installed airy.h does not compile with pkg-config --cflags airy alone: $m"
deps=$(echo "$m" | tr -d '\\' | tr ' ' '\n' | grep -v '^-:$' | grep . || true)
echo "$deps" | grep -q "^$inc/airy-stack.h$" || fail "airy.h does not include the installed airy-stack.h: $deps"
echo "$deps" | grep -- '-private\.h$' && fail "airy.h includes private headers"
echo "$deps" | grep -F -e "$(cd "$src" && pwd)" -e "$(cd "$build" && pwd)" && fail "airy.h includes headers of the tree"
for h in "$inc"/*.h; do
  echo "#include <$(basename "$h")>" | "$cc" -x c -fsyntax-only -Wall -Wextra -Werror $cflags - \
    || fail "$(basename "$h") does not compile alone with -Wall -Wextra -Werror"
done

"$cc" -Wall -Wextra -Werror -o "$dest/psf-peak" "$src/tests/library/psf-peak.c" $cflags $libs \
  || fail "psf-peak.c does not build with pkg-config --cflags --libs airy"
ldd=$(LD_LIBRARY_PATH="$root/$libdir" ldd "$dest/psf-peak")
echo "$ldd" | grep -qF "libairy.so.${version%%.*} => $root/$libdir/libairy.so.${version%%.*}" \
  || fail "psf-peak does not load the installed libairy: $ldd"
LD_LIBRARY_PATH="$root/$libdir" "$dest/psf-peak" || fail "psf-peak: the installed library computes a wrong PSF"
# the installed typelib, as a binding finds it (the introspection test runs
# the same script on the build tree)
typelibs="$root/$libdir/girepository-1.0"
if [ -f "$typelibs/Airy-0.typelib" ]; then
  rc=0
  mkdir -p "$root/$libdir/airy/backends"
  AIRY_GI_MODULE_DIR="$root/$libdir/airy/backends" \
  GI_TYPELIB_PATH="$typelibs" LD_LIBRARY_PATH="$root/$libdir" /usr/bin/python3 "$src/tests/library/airy-gi.py" \
    > "$dest/gi.log" 2>&1 || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "airy-gi.py on the installed typelib: $(cat "$dest/gi.log")"
  if [ $rc -eq 0 ]; then grep '^classes:\|^boxed' "$dest/gi.log"; else cat "$dest/gi.log"; fi
fi
echo "check-library: ok ($soname, $(ls "$inc" | wc -l) headers, pkg-config: $cflags $libs)"

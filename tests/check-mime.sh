#!/usr/bin/env bash
# The shared-mime-info package: it parses, update-mime-database accepts it
# without a complaint, and then GIO maps *.airy.json to the Airy system type
# (a kind of application/json) while a plain *.json stays application/json.
# The desktop file announces the same type.
set -euo pipefail
xml=$1
desktop=$2
type=application/x-airy-system+json
fail() { echo "check-mime: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xmllint --noout "$xml" || fail "$xml is not well-formed XML"
mkdir -p "$tmp/data/mime/packages"
cp "$xml" "$tmp/data/mime/packages/io.github.airyoptics.Airy.xml"
# update-mime-database exits 0 even on errors: what it prints is the verdict
XDG_DATA_HOME="$tmp/data" update-mime-database "$tmp/data/mime" 2>"$tmp/log" || fail "update-mime-database failed"
[ ! -s "$tmp/log" ] || fail "update-mime-database complained: $(cat "$tmp/log")"
grep -qx "50:$type:\*.airy.json" "$tmp/data/mime/globs2" || fail "no *.airy.json glob in globs2: $(cat "$tmp/data/mime/globs2")"
grep -qx "$type application/json" "$tmp/data/mime/subclasses" || fail "$type is not a subclass of application/json"

printf '{ "airy": 1 }\n' >"$tmp/system.airy.json"
printf '{ "airy": 1 }\n' >"$tmp/other.json"
guess() {
  XDG_DATA_HOME="$tmp/data" gio info -a standard::content-type "$1" | sed -n 's/^ *standard::content-type: //p'
}
got=$(guess "$tmp/system.airy.json")
[ "$got" = "$type" ] || fail "system.airy.json is $got, not $type"
got=$(guess "$tmp/other.json")
[ "$got" = application/json ] || fail "other.json is $got: Airy must not claim every JSON file"

mimetypes=$(sed -n 's/^MimeType=//p' "$desktop")
for want in "$type" image/tiff image/png; do
  case ";$mimetypes" in *";$want;"*) ;; *) fail "the desktop file does not list $want: $mimetypes" ;; esac
done
case ";$mimetypes" in *";application/json;"*) fail "the desktop file claims all of application/json" ;; esac
grep -qx 'Exec=airy %U' "$desktop" || fail "the desktop file does not pass URIs (Exec=airy %U)"
echo "check-mime: ok"

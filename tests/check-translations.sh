#!/usr/bin/env bash
# po/POTFILES.in lists every file with translatable strings, and the German
# translation covers every string of the current sources.
set -euo pipefail
src=$1
cd "$src"
fail() { echo "check-translations: $*" >&2; exit 1; }

listed=$(grep -v '^#' po/POTFILES.in | sed '/^$/d' | sort)
marked=$( { grep -rlE '\b(N_|_)\("' app engine ui --include='*.c' || true;
            grep -rl 'translatable="yes"' resources --include='*.ui' || true;
            ls resources/*.desktop.in resources/*.metainfo.xml.in resources/*.gschema.xml; } | sort -u)
missing=$(comm -13 <(echo "$listed") <(echo "$marked"))
[ -z "$missing" ] || fail "files with translatable strings missing from po/POTFILES.in: $missing"
stale=$(comm -23 <(echo "$listed") <(echo "$marked"))
[ -z "$stale" ] || fail "po/POTFILES.in lists files without translatable strings: $stale"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xgettext --from-code=UTF-8 --add-comments --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 \
  --keyword=g_dngettext:2,3 --flag=g_strdup_printf:1:c-format --flag=g_set_error:4:c-format \
  --flag=g_printerr:1:c-format --flag=g_print:1:c-format \
  --files-from=<(grep -v '^#' po/POTFILES.in | sed '/^$/d') --output="$tmp/airy.pot" 2>/dev/null
while read -r lang; do
  [ -n "$lang" ] || continue
  msgmerge --quiet --no-fuzzy-matching "po/$lang.po" "$tmp/airy.pot" -o "$tmp/$lang.po"
  stats=$(msgfmt --check --statistics -o /dev/null "$tmp/$lang.po" 2>&1)
  echo "$lang: $stats"
  echo "$stats" | grep -qE 'untranslated|fuzzy' && fail "$lang is incomplete: $stats"
done < po/LINGUAS
echo "check-translations: ok"

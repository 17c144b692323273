#!/usr/bin/env python3
"""The AppStream metainfo: `appstreamcli validate --no-net --pedantic` finds
nothing but the two issues we know, and what Flathub asks for is there (a
developer with an id, releases newest first with dates, light and dark brand
colours, content rating, homepage and bug tracker)."""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

path = sys.argv[1]
fails = []

# Known and accepted: the app id has capitals (it is the reverse DNS name the
# project was published under), and AppStream 0.16 (Debian 12) predates the
# <developer> tag of AppStream 1.0 that Flathub reads.
KNOWN = {'cid-contains-uppercase-letter', 'unknown-tag developer'}
r = subprocess.run(['appstreamcli', 'validate', '--no-net', '--pedantic', path], capture_output=True, text=True)
if r.returncode != 0:
    fails.append('appstreamcli validate failed:\n' + r.stdout + r.stderr)
for line in r.stdout.splitlines():
    m = re.match(r'^([EWIP]): [^:]+:(?:\d+:)? (\S+(?: \S+)?)', line)
    if m and not any(m.group(2).startswith(k) for k in KNOWN):
        fails.append('appstreamcli: ' + line)

root = ET.parse(path).getroot()
dev = root.find('developer')
if dev is None or dev.get('id') != 'io.github.airyoptics' or not (dev.findtext('name') or '').strip():
    fails.append('no <developer id="io.github.airyoptics"> with a <name>')
releases = root.findall('releases/release')
versions = [r.get('version') for r in releases]
if '0.1.0' not in versions:
    fails.append('no release 0.1.0: %s' % versions)
if len(releases) < 2:
    fails.append('the upcoming version is not listed: %s' % versions)
if any(not re.match(r'^\d{4}-\d{2}-\d{2}$', r.get('date') or '') for r in releases):
    fails.append('every release needs a date')
dates = [r.get('date') for r in releases]
if dates != sorted(dates, reverse=True):
    fails.append('releases are not newest first: %s' % dates)
colours = {c.get('scheme_preference'): c.text for c in root.findall('branding/color') if c.get('type') == 'primary'}
for scheme in ('light', 'dark'):
    if not re.match(r'^#[0-9a-fA-F]{6}$', colours.get(scheme) or ''):
        fails.append('no %s primary brand colour' % scheme)
if colours.get('light') == colours.get('dark'):
    fails.append('the light and dark brand colours are the same')
if root.find('content_rating') is None:
    fails.append('no content rating')
urls = {u.get('type') for u in root.findall('url')}
for want in ('homepage', 'bugtracker', 'vcs-browser'):
    if want not in urls:
        fails.append('no %s url' % want)
types = {m.text for m in root.findall('provides/mediatype')}
if 'application/x-airy-system+json' not in types:
    fails.append('the Airy system type is not among the provided media types')

for f in fails:
    print('check-metainfo: ' + f, file=sys.stderr)
print('check-metainfo: %s' % ('ok' if not fails else '%d problem(s)' % len(fails)))
sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""What can be checked of the Flatpak manifest offline: flatpak-builder parses
it with fatal warnings, every source is pinned, and the app id, command and
files agree with what `meson install` puts in place.

The runtime is GNOME 51 (September 2026): GNOME ships a runtime every six
months and each is supported until soon after the release two versions on
(47 ended 2025-10-15, 48 on 2026-03-24), so on 2026-12-01 that is 50 and 51.
Moving on is a change of RUNTIME below, on purpose, not a silent pass."""
import json
import os
import subprocess
import sys
import tempfile

src, build = sys.argv[1], sys.argv[2]
path = os.path.abspath(os.path.join(src, 'flatpak', 'io.github.airyoptics.Airy.json'))
fails = []
RUNTIME = '51'
FINISH_ARGS = ['--share=ipc', '--socket=fallback-x11', '--socket=wayland', '--device=dri']

env = dict(os.environ, G_DEBUG='fatal-warnings')
# in a scratch directory: flatpak-builder leaves its .flatpak-builder state behind
with tempfile.TemporaryDirectory() as scratch:
    r = subprocess.run(['flatpak-builder', '--show-manifest', path], env=env, capture_output=True, text=True,
                       cwd=scratch)
if r.returncode != 0:
    fails.append('flatpak-builder --show-manifest failed: ' + r.stderr.strip())

m = json.load(open(path))
app_id = 'io.github.airyoptics.Airy'
if m.get('id') != app_id:
    fails.append('id is %r, not %s' % (m.get('id'), app_id))
if m.get('command') != 'airy':
    fails.append('command is %r, not airy' % m.get('command'))
if not (m.get('runtime') == 'org.gnome.Platform' and m.get('sdk') == 'org.gnome.Sdk'):
    fails.append('runtime and sdk must be org.gnome.Platform and org.gnome.Sdk')
if m.get('runtime-version') != RUNTIME:
    fails.append('runtime-version is %r, not the supported GNOME %s' % (m.get('runtime-version'), RUNTIME))
args = m.get('finish-args', [])
if sorted(args) != sorted(FINISH_ARGS):
    fails.append('finish-args are %s, not the minimal set %s' % (args, FINISH_ARGS))
if any(a.startswith(('--filesystem', '--talk-name', '--socket=x11', '--device=all')) for a in args):
    fails.append('no host filesystem, no bus names, no bare X11: files go through portals')

names = []
for mod in m['modules']:
    names.append(mod['name'])
    for s in mod.get('sources', []):
        kind = s.get('type')
        if kind in ('archive', 'file') and not s.get('sha256'):
            fails.append('%s: %s source without sha256' % (mod['name'], kind))
        elif kind == 'git' and not s.get('commit'):
            fails.append('%s: git source without commit' % mod['name'])
        elif kind not in ('archive', 'file', 'git', 'dir', 'patch'):
            fails.append('%s: unexpected source type %s' % (mod['name'], kind))
airy = [mod for mod in m['modules'] if mod['name'] == 'airy']
if not airy or '-Dcuda=disabled' not in airy[0].get('config-opts', []):
    fails.append('airy must be built with -Dcuda=disabled')
fftw = [mod for mod in m['modules'] if mod['name'].startswith('fftw')]
if not fftw or not {'--enable-float', '--enable-threads'} <= set(fftw[0].get('config-opts', [])):
    fails.append('FFTW must be built single precision with threads')
if names[-1] != 'airy':
    fails.append('airy must be the last module')

# the files the manifest's app id names are the ones meson installs
r = subprocess.run(['meson', 'introspect', build, '--installed'], capture_output=True, text=True)
installed = list(json.loads(r.stdout).values()) if r.returncode == 0 else []
for want in ('/share/applications/%s.desktop' % app_id, '/share/metainfo/%s.metainfo.xml' % app_id,
             '/share/glib-2.0/schemas/%s.gschema.xml' % app_id, '/share/mime/packages/%s.xml' % app_id,
             '/bin/airy', '/bin/airy-sim'):
    if not any(p.endswith(want) for p in installed):
        fails.append('meson does not install %s' % want)
# the programs link libairy.so.0: it stays in the app, its headers and .pc go
if not any(p.endswith('/libairy.so.0') for p in installed):
    fails.append('meson does not install libairy.so.0')
cleanup = m.get('cleanup', [])
for keep in ('/lib/libairy.so.0', '/lib/airy/backends'):
    for c in cleanup:
        if keep.startswith(c.rstrip('/') + '/') or keep == c or (c.startswith('*') and keep.endswith(c[1:])):
            fails.append('cleanup %s removes %s, which the app needs' % (c, keep))
for dev in ('/include', '/lib/pkgconfig'):
    if dev not in cleanup:
        fails.append('cleanup does not remove %s (libairy\'s headers and airy.pc)' % dev)
desktop = os.path.join(build, 'resources', app_id + '.desktop')
if os.path.exists(desktop):
    text = open(desktop).read()
    if 'Exec=airy %U' not in text or 'Icon=%s' % app_id not in text:
        fails.append('the desktop file does not run airy %U with the app icon')

for f in fails:
    print('check-flatpak: ' + f, file=sys.stderr)
print('check-flatpak: %s' % ('ok' if not fails else '%d problem(s)' % len(fails)))
sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""What can be checked of the Flatpak manifest offline: flatpak-builder parses
it with fatal warnings, every source is pinned, and the app id, command and
files agree with what `meson install` puts in place."""
import json
import os
import subprocess
import sys

src, build = sys.argv[1], sys.argv[2]
path = os.path.join(src, 'flatpak', 'io.github.airyoptics.Airy.json')
fails = []

env = dict(os.environ, G_DEBUG='fatal-warnings')
r = subprocess.run(['flatpak-builder', '--show-manifest', path], env=env, capture_output=True, text=True)
if r.returncode != 0:
    fails.append('flatpak-builder --show-manifest failed: ' + r.stderr.strip())

m = json.load(open(path))
app_id = 'io.github.airyoptics.Airy'
if m.get('id') != app_id:
    fails.append('id is %r, not %s' % (m.get('id'), app_id))
if m.get('command') != 'airy':
    fails.append('command is %r, not airy' % m.get('command'))
if not (m.get('runtime') == 'org.gnome.Platform' and m.get('sdk') == 'org.gnome.Sdk' and m.get('runtime-version')):
    fails.append('runtime and sdk must be the GNOME ones with a pinned version')
args = set(m.get('finish-args', []))
if args != {'--share=ipc', '--socket=fallback-x11', '--socket=wayland', '--device=dri'}:
    fails.append('finish-args are not the minimal set: %s' % sorted(args))
if any(a.startswith('--filesystem') for a in args):
    fails.append('no host filesystem: files go through portals')

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
             '/share/glib-2.0/schemas/%s.gschema.xml' % app_id, '/bin/airy'):
    if not any(p.endswith(want) for p in installed):
        fails.append('meson does not install %s' % want)
desktop = os.path.join(build, 'resources', app_id + '.desktop')
if os.path.exists(desktop):
    text = open(desktop).read()
    if 'Exec=airy' not in text or 'Icon=%s' % app_id not in text:
        fails.append('the desktop file does not run airy with the app icon')

for f in fails:
    print('check-flatpak: ' + f, file=sys.stderr)
print('check-flatpak: %s' % ('ok' if not fails else '%d problem(s)' % len(fails)))
sys.exit(1 if fails else 0)

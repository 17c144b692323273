#!/usr/bin/python3
"""libairy through GObject-Introspection (Airy-0.typelib, PyGObject), as a
binding sees it: the classes and boxed types the typelib lists, then the
widefield preset's in-focus plane computed through it, with its peak on the
axis (pixel N/2), the Airy peak pi·NA²/λ² and Σ I·du² = 1 (DESIGN §3).
Run against the build tree: GI_TYPELIB_PATH and LD_LIBRARY_PATH name
build/engine (tests/meson.build)."""
import math
import os
import sys

try:
    import gi
except ImportError:
    print('airy-gi: SKIP: PyGObject (python3-gi) is not installed for %s' % sys.executable)
    sys.exit(77)
gi.require_version('Airy', '0')
from gi.repository import Airy, GLib, GObject  # noqa: E402

fails = []


def check(ok, what):
    print('%s: %s' % ('ok' if ok else 'FAILED', what))
    if not ok:
        fails.append(what)


infos = gi.Repository.get_default().get_infos('Airy')
classes = sorted(i.get_name() for i in infos if isinstance(i, gi._gi.ObjectInfo))
boxed = sorted(i.get_name() for i in infos
               if isinstance(i, gi._gi.StructInfo) and i.get_g_type() != GObject.TYPE_NONE)
print('classes:', ' '.join(classes))
print('boxed types:', ' '.join(boxed))
check({'Element', 'System'} <= set(classes), 'the classes System and Element')
check({'Result', 'RunOptions', 'Spectrum', 'Stack'} <= set(boxed),
      'the boxed types Result, RunOptions, Spectrum, Stack')
check(GObject.type_is_a(Airy.Stack.__gtype__, GObject.TYPE_BOXED), 'AiryStack is a GBoxed')

Airy.init()
check('widefield' in Airy.presets_list(), 'the presets listed')
module_dir = os.environ.get('AIRY_GI_MODULE_DIR')
if module_dir:
    # run on an install: the modules beside the library are found, whatever the program
    check(module_dir in Airy.modules_path(), 'the modules folder beside libairy.so.0 (%s) on the path: %s'
          % (module_dir, Airy.modules_path()))
try:
    Airy.System.new_from_preset('no-such-preset')
    check(False, 'an unknown preset raises')
except GLib.Error as e:
    check('no-such-preset' in e.message, 'an unknown preset raises GLib.Error naming it: ' + e.message)

system = Airy.System.new_from_preset('widefield')
system.set_z_values([0.0])
check(list(system.get_z()) == [0.0], 'one plane at z = 0')
options = Airy.RunOptions.new()
options.threads = 1
options.set_backend('cpu')
options.set_devices([0])
copy = options.copy()
check(copy.backend == 'cpu' and copy.n_devices == 1 and copy.threads == 1,
      'a copy of the run options keeps backend, devices and threads')

result = Airy.run(system, copy, None, None)
stack = result.stack
h, w = stack.height, stack.width
values = stack.get_plane_data(0)
peak = max(values)
at = values.index(peak)
na, wavelength = 0.8, 0.532
want = math.pi * na * na / (wavelength * wavelength)
energy = math.fsum(values) * stack.dx * stack.dy
print('stack %u × %u × %u, du %.6g µm, peak %.6g at (%u, %u), want %.6g; Σ I·du² = %.6f'
      % (stack.depth, h, w, stack.dx, peak, at // w, at % w, want, energy))
check(stack.depth == 1 and (h, w) == tuple(system.get_shape()) == (512, 512), 'the stack is 1 × 512 × 512')
check(len(values) == h * w, 'get_plane_data gives height × width values')
check(at == (h // 2) * w + w // 2, 'the in-focus peak is at pixel N/2')
check(abs(peak / want - 1) < 1e-3, 'the peak is pi·NA²/λ² to 1e-3')
check(abs(energy - 1) < 1e-3, 'the plane sums to power/du² to 1e-3')
lo, hi = stack.min_max()
check(hi == peak and lo >= 0, 'min_max gives the out parameters (max = the peak)')
check(result.backend == 'cpu' and result.threads == 1, 'the result says backend cpu on 1 thread')
Airy.shutdown()

if fails:
    print('airy-gi: %d checks failed: %s' % (len(fails), '; '.join(fails)))
    sys.exit(1)
print('airy-gi: ok')

"""Airy in-process: systems, runs and stacks of the engine (libairy).

    import airy
    system = airy.System.preset("seed-widefield")
    result = system.run(threads=2)
    psf = result.intensity          # numpy float32 (z, y, x), no copy
    fitted, report = airy.fit(counts, system, zernike=15)   # the PSF fit

Runs release the GIL; Ctrl-C cancels a run; the engine's errors are
exceptions carrying its message (ValueError, TypeError, FileNotFoundError,
MemoryError), in the locale's language (LANGUAGE, LANG).
"""

import json as _json
import os as _os

import numpy as _np

from . import _airy

__version__ = _airy.version


def _locale_dir():
    """Where the engine's translations are: AIRY_LOCALEDIR, the package's
    locale/ (a wheel's), the Meson build tree's po/ when the package is
    imported from a build folder, else the install's locale folder."""
    import sys
    here = _os.path.dirname(_os.path.abspath(__file__))
    build = _os.path.normpath(_os.path.join(here, "..", "..", ".."))
    candidates = [_os.environ.get("AIRY_LOCALEDIR") or None, _os.path.join(here, "locale")]
    if _os.path.isdir(_os.path.join(build, "meson-private")):
        candidates.append(_os.path.join(build, "po"))
    candidates += [_airy.localedir, _os.path.join(sys.prefix, "share", "locale")]
    for d in candidates:
        if d and _os.path.isdir(d) and any(
                _os.path.isfile(_os.path.join(d, lang, "LC_MESSAGES", _airy.gettext_domain + ".mo"))
                for lang in _os.listdir(d)):
            return d
    return _airy.localedir


_airy.bind_locale(_locale_dir())

__all__ = ["System", "Result", "read", "backends", "presets", "grad", "optimize", "fit", "OpticalSystem",
           "ObjectivePointSource", "PhaseMask", "FFLens", "Propagate",
           "CircularPupil", "BasicSensor", "Element", "__version__"]


def _array(stack):
    """The stack's pixels as a numpy array over the engine's memory."""
    return _np.asarray(stack)


class Result:
    """A run's stack: .intensity (float32, (z, y, x)), .spacing, .z,
    .channels (one array per wavelength with channels=True), .warnings."""

    def __init__(self, stack, channels=(), warnings=()):
        self._stack = stack
        self.intensity = _array(stack)
        self.channels = [_array(c) for c in channels]
        self.warnings = list(warnings)

    @property
    def spacing(self):
        """(dz, dy, dx) in µm."""
        return self._stack.spacing

    @property
    def z(self):
        """z of each plane (µm), a numpy float64 array."""
        return _np.asarray(self._stack.z, dtype=_np.float64)

    @property
    def seconds(self):
        """The engine's own time for the run (None for a stack read from a file)."""
        return self._stack.seconds

    @property
    def system_json(self):
        return self._stack.system_json

    def save(self, path):
        """Writes the stack in the format the name says (.tif, .ome.tif, .png …)."""
        self._stack.save(_os.fspath(path))

    def _repr_png_(self):
        return self._stack.png(self.intensity.shape[0] // 2)

    def __repr__(self):
        d, h, w = self.intensity.shape
        return "<airy.Result %d×%d×%d, spacing %s µm>" % (d, h, w, self.spacing)


class System:
    """An optical system of the engine (a system file's contents)."""

    def __init__(self, native):
        if not isinstance(native, _airy.System):
            raise TypeError("System(): use System.from_file, System.preset, "
                            "System.from_json or airy.OpticalSystem")
        self._native = native

    @classmethod
    def from_file(cls, path):
        if not isinstance(path, (str, bytes, _os.PathLike)):
            raise TypeError("path: must be a str or os.PathLike, got %s"
                            % type(path).__name__)
        return cls(_airy.from_file(path))

    @classmethod
    def preset(cls, name):
        if not isinstance(name, str):
            raise TypeError("name: must be a str, got %s" % type(name).__name__)
        return cls(_airy.preset(name))

    @classmethod
    def from_json(cls, text, base_dir=None):
        if isinstance(text, dict):
            text = _json.dumps(text)
        if not isinstance(text, str):
            raise TypeError("text: must be JSON text (str) or a dict, got %s"
                            % type(text).__name__)
        return cls(_airy.from_json(text, base_dir))

    def to_json(self):
        return self._native.to_json()

    def to_dict(self):
        return _json.loads(self.to_json())

    def validate(self):
        self._native.validate()

    def __repr__(self):
        return self.to_json()

    def run(self, z=None, backend="auto", devices=None, threads=0, progress=None, channels=False):
        """Runs the system (at the planes z, µm, when given) and returns a Result.

        backend: "auto", "cpu", "cuda" (airy.backends() lists them); devices:
        None (the backend's default), a count n (devices 0 … n − 1) or a list
        of device indices; threads: host threads, 0 for all cores. A value
        out of its range is a ValueError that names it and the range."""
        if not isinstance(backend, str):
            raise TypeError("backend: must be a str, got %s" % type(backend).__name__)
        if isinstance(threads, bool) or not isinstance(threads, int):
            raise TypeError("threads: must be an int, got %s" % type(threads).__name__)
        native = self._native
        if z is not None:
            zz = _np.atleast_1d(_np.asarray(z))
            if zz.ndim != 1:
                raise ValueError("z: must be a number or a 1-D sequence, got shape %s"
                                 % (zz.shape,))
            if not _np.issubdtype(zz.dtype, _np.number):
                raise TypeError("z: must hold numbers (µm), got dtype %s" % zz.dtype)
            native = native.with_z([float(v) for v in zz])
        stack, chans, warnings = native.run(backend=backend, threads=threads, devices=devices,
                                            progress=progress, channels=bool(channels))
        return Result(stack, chans, warnings)

    def __call__(self, z=None, **kwargs):
        return self.run(z, **kwargs)


def _loss_spec(loss):
    if not isinstance(loss, str):
        raise TypeError("loss: must be a str like 'l2:TARGET.tif' or 'crlb:-3:3:5000:10', got %s"
                        % type(loss).__name__)
    return loss


def _paths(vary):
    if vary is None:
        return None
    if isinstance(vary, str):
        vary = [vary]
    vary = list(vary)
    for p in vary:
        if not isinstance(p, str):
            raise TypeError("vary: must hold paths (str), got %s" % type(p).__name__)
    return vary


def grad(system, loss, vary=None, threads=0):
    """The loss of the system's result and its gradient (the engine's reverse pass).

    loss is airy-sim's --loss ("l2:TARGET.tif", "poisson:COUNTS.tif",
    "region:MASK.tif", "crlb:ZMIN:ZMAX:PHOTONS:BACKGROUND[:AXES]"); vary the
    paths of the variables ("elements[1].zernike-coefficients" is every
    entry; "elements[1].pixels" a mask's pixels), every differentiable
    number when None. Returns (loss, {path: gradient}), a pixel variable's
    gradient a float32 array (y, x)."""
    if not isinstance(system, System):
        raise TypeError("system: must be an airy.System, got %s" % type(system).__name__)
    value, grads = _airy.grad(system.to_json(), system._native.base_dir(), _loss_spec(loss),
                              _paths(vary), int(threads))
    return value, {k: (_np.asarray(v)[0] if isinstance(v, _airy.Stack) else v)
                   for k, v in grads.items()}


def optimize(system, loss, vary, optimizer="lbfgs", steps=50, lr=0.01, bounds=None, threads=0,
             pixel_dir=None):
    """Moves the variables to minimise the loss, as airy-sim optimize does.

    optimizer is "adam" or "lbfgs"; lr Adam's step or L-BFGS's first, in the
    variables' units; bounds {path: (a, b)} inside the parameters' ranges.
    A pixel variable's best phase is written as a TIFF into pixel_dir (a new
    temporary folder when None), which the returned system reads. Ctrl-C
    stops between steps and returns the best point so far. Returns
    (System, report): the report is airy-sim's --report as a dict."""
    import tempfile
    if not isinstance(system, System):
        raise TypeError("system: must be an airy.System, got %s" % type(system).__name__)
    if optimizer not in ("adam", "lbfgs"):
        raise ValueError('optimizer: must be one of adam, lbfgs, got "%s"' % optimizer)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 1000000:
        raise ValueError("steps: must be an int in [1, 1000000], got %r" % (steps,))
    if not (isinstance(lr, (int, float)) and lr > 0):
        raise ValueError("lr: must be a number > 0, got %r" % (lr,))
    paths = _paths(vary)
    if not paths:
        raise ValueError("vary: give the variables' paths")
    bounds = None if bounds is None else {str(k): (float(a), float(b)) for k, (a, b) in bounds.items()}
    if pixel_dir is None:
        pixel_dir = tempfile.mkdtemp(prefix="airy-optimize-")
    best, report = _airy.optimize(system.to_json(), system._native.base_dir(), _loss_spec(loss), paths,
                                  optimizer, steps, float(lr), bounds, int(threads),
                                  _os.fspath(pixel_dir))
    return System.from_json(best, system._native.base_dir()), _json.loads(report)


def _fit_stack(stack, spacing):
    """The bead stack for _airy.fit: a path, or a float32 (z, y, x) array
    with its voxel size (dz, dy, dx; 0: the system's) and bit depth."""
    if isinstance(stack, (str, bytes, _os.PathLike)):
        return stack, 0.0, 0.0, 0.0, 0
    if isinstance(stack, Result):
        if spacing is None:
            spacing = stack.spacing
        stack = stack.intensity
    a = _np.asarray(stack)
    if a.dtype == object or not (_np.issubdtype(a.dtype, _np.integer)
                                 or _np.issubdtype(a.dtype, _np.floating)):
        raise TypeError("stack: must be a path or a numeric array, got dtype %s" % a.dtype)
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3:
        raise ValueError("stack: must be 2-D (y, x) or 3-D (z, y, x), got shape %s" % (a.shape,))
    # integer counts (8, 16 bit) are fitted as photons (Poisson), as a TIFF's are
    bits = 8 if a.dtype.itemsize == 1 and _np.issubdtype(a.dtype, _np.integer) else \
        16 if _np.issubdtype(a.dtype, _np.integer) else 32
    if spacing is None:
        dz = dy = dx = 0.0
    elif isinstance(spacing, (int, float)) and not isinstance(spacing, bool):
        dz, dy, dx = 0.0, float(spacing), float(spacing)
    else:
        try:
            dz, dy, dx = (float(v) for v in spacing)
        except (TypeError, ValueError):
            raise TypeError("spacing: must be None, a pixel size or (dz, dy, dx) in µm, got %r"
                            % (spacing,)) from None
    for name, v in (("dz", dz), ("dy", dy), ("dx", dx)):
        if not (_np.isfinite(v) and v >= 0):
            raise ValueError("spacing: %s must be a number ≥ 0 (µm; 0: the system's), got %r" % (name, v))
    return _np.ascontiguousarray(a, dtype=_np.float32), dx, dy, dz, bits


def fit(stack, system, zernike=14, spacing=None, crop=0, crop_at=None, objective="auto",
        gain=None, offset=None, restarts=0, max_iterations=0, seed=0, threads=0,
        backend="auto", device=0, progress=None):
    """Fits a measured bead stack with the system's PSF, as airy-sim fit does.

    stack is a TIFF (any format Airy reads) path, an airy.Result or a numpy
    array (z, y, x) or (y, x): integer arrays are counts (Poisson, photons =
    (ADU − offset)/gain), float arrays least squares unless objective says
    otherwise; spacing (dz, dy, dx) µm, or one pixel size, for an array
    (None: the system's, with a warning). The fitted terms are ANSI 3 …
    zernike without 4, in waves. progress(start, iteration, loss) is called
    from the calling thread; Ctrl-C cancels. Returns (System, report): the
    system with the fitted phase mask, and airy-sim fit's --report as a dict
    with "model" and "residual" (float32 arrays of the fitted window) and
    "warnings" added."""
    if not isinstance(system, System):
        raise TypeError("system: must be an airy.System, got %s" % type(system).__name__)
    for name, v in (("zernike", zernike), ("crop", crop), ("restarts", restarts),
                    ("max_iterations", max_iterations), ("seed", seed), ("threads", threads),
                    ("device", device)):
        if isinstance(v, bool) or not isinstance(v, (int, _np.integer)):
            raise TypeError("%s: must be an int, got %s" % (name, type(v).__name__))
    if not isinstance(objective, str):
        raise TypeError("objective: must be a str, got %s" % type(objective).__name__)
    if not isinstance(backend, str):
        raise TypeError("backend: must be a str, got %s" % type(backend).__name__)
    for name, v in (("gain", gain), ("offset", offset)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise TypeError("%s: must be a number or None, got %s" % (name, type(v).__name__))
    data, dx, dy, dz, bits = _fit_stack(stack, spacing)
    native, report, model, residual, warnings = _airy.fit(
        system._native, data, dx, dy, dz, bits, zernike=int(zernike), crop=int(crop), crop_at=crop_at,
        objective=objective, gain=0.0 if gain is None else float(gain),
        offset=float("nan") if offset is None else float(offset), restarts=int(restarts),
        max_iterations=int(max_iterations), seed=int(seed), threads=int(threads), backend=backend,
        device=int(device), progress=progress)
    report = _json.loads(report)
    report["model"] = _np.asarray(model)
    report["residual"] = _np.asarray(residual)
    report["warnings"] = list(warnings)
    return System(native), report


def read(path):
    """A stack from a file of any format Airy reads, as a Result."""
    if not isinstance(path, (str, bytes, _os.PathLike)):
        raise TypeError("path: must be a str or os.PathLike, got %s" % type(path).__name__)
    return Result(_airy.read(path))


def backends():
    """The registered backends: dicts of name, description, available, devices."""
    return _airy.backends()


def presets():
    return _airy.presets()


from .elements import (OpticalSystem, Element, ObjectivePointSource, PhaseMask,  # noqa: E402
                       FFLens, Propagate, CircularPupil, BasicSensor)

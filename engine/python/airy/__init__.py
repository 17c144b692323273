"""Airy in-process: systems, runs and stacks of the engine (libairy).

    import airy
    system = airy.System.preset("seed-widefield")
    result = system.run(threads=2)
    psf = result.intensity          # numpy float32 (z, y, x), no copy

Runs release the GIL; Ctrl-C cancels a run; the engine's errors are
exceptions carrying its message (ValueError, TypeError, FileNotFoundError,
MemoryError).
"""

import json as _json
import os as _os

import numpy as _np

from . import _airy

__version__ = _airy.version

__all__ = ["System", "Result", "read", "backends", "presets", "OpticalSystem",
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

    def run(self, z=None, backend="auto", threads=0, progress=None, channels=False):
        """Runs the system (at the planes z, µm, when given) and returns a Result."""
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
        stack, chans, warnings = native.run(backend=backend, threads=threads,
                                            progress=progress, channels=bool(channels))
        return Result(stack, chans, warnings)

    def __call__(self, z=None, **kwargs):
        return self.run(z, **kwargs)


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

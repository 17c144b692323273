"""Building systems in code, with chromatix's element names and Airy's own.

    system = airy.OpticalSystem([
        airy.ObjectivePointSource(shape, spacing, spectrum, f, n, NA),
        airy.PhaseMask(1.0),
        airy.FFLens(f, n),
    ])
    psf = system(z).intensity

Each element becomes one entry of the system file's "elements" (its JSON
type and keys); Element("gibson-lanni", ...) gives any element type by the
name the JSON uses (keyword underscores become dashes).
"""

import json as _json
import os as _os
import tempfile as _tempfile

import numpy as _np

from . import _airy

_GRID_KEYS = ("shape", "spacing", "spectrum")


def _number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, _np.number)):
        raise TypeError("%s: must be a number, got %s" % (name, type(value).__name__))
    return float(value)


class Element:
    """An element by its JSON type: Element("propagate", z=10, n=1.33)."""

    def __init__(self, type, **params):
        if not isinstance(type, str):
            raise TypeError("type: must be the element's JSON type name (str)")
        self.type = type
        self.params = {k.replace("_", "-"): v for k, v in params.items()}

    def to_dict(self):
        d = {"type": self.type}
        d.update(self.params)
        return d

    def __repr__(self):
        return "airy.Element(%s)" % _json.dumps(self.to_dict())


class ObjectivePointSource(Element):
    """A point source imaged by an objective (chromatix's names): the grid
    (shape, spacing in µm), the spectrum (a wavelength in µm, or
    (wavelengths, weights)), the focal length f (µm), the index n and NA."""

    def __init__(self, shape, spacing, spectrum, f, n, NA, power=1.0):
        shape = tuple(int(s) for s in _np.atleast_1d(shape))
        if len(shape) == 1:
            shape = shape * 2
        if len(shape) != 2:
            raise ValueError("shape: must be (height, width), got %r" % (shape,))
        self.shape = shape
        self.spacing = _number("spacing", _np.atleast_1d(spacing)[0])
        if isinstance(spectrum, (tuple, list)) and len(spectrum) == 2 \
                and _np.ndim(spectrum[0]) == 1:
            w = [float(v) for v in spectrum[0]]
            weights = [float(v) for v in spectrum[1]]
        else:
            w = [_number("spectrum", v) for v in _np.atleast_1d(spectrum)]
            weights = [1.0 / len(w)] * len(w)
        self.spectrum = {"wavelengths": w, "weights": weights}
        super().__init__("objective-point-source", f=_number("f", f), n=_number("n", n),
                         na=_number("NA", NA), power=_number("power", power))


class PhaseMask(Element):
    """A phase (rad): a number, or a 2-D numpy array stretched over the grid."""

    def __init__(self, phase, **params):
        if isinstance(phase, (int, float, _np.number)) and not isinstance(phase, bool):
            super().__init__("phase-mask", source="constant", value=float(phase), **params)
            self._file = None
            return
        arr = _np.asarray(phase)
        if arr.ndim != 2:
            raise ValueError("phase: must be a number or a 2-D array, got shape %s"
                             % (arr.shape,))
        if not _np.issubdtype(arr.dtype, _np.floating) and not _np.issubdtype(arr.dtype, _np.integer):
            raise TypeError("phase: must be a real array, got dtype %s" % arr.dtype)
        lo, hi = float(arr.min()), float(arr.max())
        if lo == hi:
            super().__init__("phase-mask", source="constant", value=lo, **params)
            self._file = None
            return
        fd, path = _tempfile.mkstemp(suffix=".tif", prefix="airy-phase-")
        _os.close(fd)
        self._file = path
        img = _np.ascontiguousarray(arr[None, :, :], dtype=_np.float32)
        _airy.write(path, img, 1.0)
        super().__init__("phase-mask", source="image", file=path,
                         phase_min=lo, phase_max=hi, **params)

    def __del__(self):
        if getattr(self, "_file", None):
            try:
                _os.unlink(self._file)
            except OSError:
                pass


class FFLens(Element):
    """A lens one focal length f (µm) from both planes, in a medium of index n."""

    def __init__(self, f, n, **params):
        super().__init__("ff-lens", f=_number("f", f), n=_number("n", n), **params)


class Propagate(Element):
    """Free-space propagation over z (µm) in a medium of index n."""

    def __init__(self, z, n, **params):
        super().__init__("propagate", z=_number("z", z), n=_number("n", n), **params)


class CircularPupil(Element):
    """A circular aperture: CircularPupil(diameter) or CircularPupil(na=, f=, n=)."""

    def __init__(self, diameter=None, **params):
        if diameter is not None:
            params["diameter"] = _number("diameter", diameter)
        super().__init__("circular-pupil", **params)


class BasicSensor(Element):
    """The sensor: intensity |u|² (reduce="sum" sums a stack over z)."""

    def __init__(self, **params):
        super().__init__("sensor", **params)


def OpticalSystem(elements, z=None, name="python"):
    """A System from a list of elements; the first one with a grid (an
    ObjectivePointSource) gives shape, spacing and spectrum."""
    from . import System
    if isinstance(elements, Element) or not hasattr(elements, "__iter__"):
        raise TypeError("elements: must be a list of airy elements")
    elements = list(elements)
    for i, e in enumerate(elements):
        if not isinstance(e, Element):
            raise TypeError("elements[%d]: must be an airy element, got %s"
                            % (i, type(e).__name__))
    grid = next((e for e in elements if hasattr(e, "shape")), None)
    if grid is None:
        raise ValueError("elements: need a source with a grid (ObjectivePointSource)")
    doc = {
        "airy": 1,
        "name": name,
        "grid": {"shape": list(grid.shape), "spacing": grid.spacing},
        "spectrum": grid.spectrum,
        "z": {"start": 0.0, "stop": 0.0, "count": 1},
        "elements": [e.to_dict() for e in elements],
    }
    system = System.from_json(_json.dumps(doc))
    system._elements = elements   # keeps the phase files of PhaseMask arrays
    if z is not None:
        system._native = system._native.with_z([float(v) for v in _np.atleast_1d(z)])
    return system

"""One widefield PSF in chromatix and in airy, in one Python process (the
peer venv: JAX, chromatix from the shared peers folder, airy from the build
tree), by the same lines with only the module changed, as a chromatix user
ports a script. Prints JSON: the largest difference relative to
chromatix's peak, the peaks, the shapes and the times.

usage: chromatix_widefield.py [N] [PLANES]   (run by test_chromatix.py)"""
import json
import sys
import time

import jax.numpy as jnp
import numpy as np
import chromatix.elements
import chromatix.systems

import airy


def widefield(cx, xp, shape, z):
    # the seed's optics (chromatix's parallelism document): λ 0.532 µm, f 100 µm,
    # n 1.33, NA 0.8, a constant 1 rad phase mask, on a smaller grid
    spacing, spectrum, f, n, NA = 0.3, 0.532, 100.0, 1.33, 0.8
    model = cx.OpticalSystem([
        cx.ObjectivePointSource(shape, spacing, spectrum, f, n, NA),
        cx.PhaseMask(xp.ones(shape)),
        cx.FFLens(f, n),
    ])
    return model(z).intensity


class Chromatix:
    OpticalSystem = chromatix.systems.OpticalSystem
    ObjectivePointSource = chromatix.elements.ObjectivePointSource
    PhaseMask = chromatix.elements.PhaseMask
    FFLens = chromatix.elements.FFLens


def main():
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    planes = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    t = time.perf_counter()
    ref = np.asarray(widefield(Chromatix, jnp, (N, N), jnp.linspace(-4, 4, num=planes)))
    t_chromatix = time.perf_counter() - t
    t = time.perf_counter()
    got = widefield(airy, np, (N, N), np.linspace(-4, 4, num=planes))
    t_airy = time.perf_counter() - t
    ref = ref.reshape(planes, N, N)            # chromatix's (z, y, x, 1) for one wavelength
    peak = float(ref.max())
    print(json.dumps({"max_rel": float(np.abs(got - ref).max()) / peak, "peak_chromatix": peak,
                      "peak_airy": float(got.max()), "shape_airy": list(got.shape),
                      "shape_chromatix": list(ref.shape), "dtype_airy": str(got.dtype),
                      "chromatix_s": t_chromatix, "airy_s": t_airy}))


if __name__ == "__main__":
    main()

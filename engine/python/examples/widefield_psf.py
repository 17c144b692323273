"""The seed widefield PSF, as chromatix's parallelism document writes it,
ported by changing the imports (jax.numpy → numpy, chromatix → airy).

    python3 engine/python/examples/widefield_psf.py [threads]
"""
import sys
import time

import numpy as np          # was: import jax.numpy as jnp
import airy as cx           # was: import chromatix.functional as cx ...

shape = (1536, 1536)        # number of pixels in simulated field
spacing = 0.3               # spacing of pixels for the final PSF, microns
spectrum = 0.532            # microns
f = 100.0                   # focal length, microns
n = 1.33                    # refractive index
NA = 0.8                    # numerical aperture of objective
z = np.linspace(-4, 4, num=128)   # planes to compute PSF at, microns

optical_model = cx.OpticalSystem([
    cx.ObjectivePointSource(shape, spacing, spectrum, f, n, NA),
    cx.PhaseMask(np.ones(shape)),   # a constant 1 rad phase, as in the document
    cx.FFLens(f, n),
])

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 0
t0 = time.perf_counter()
widefield_psf = optical_model(z, threads=threads).intensity
print("PSF %s %s, peak %.6g, %.2f s" % (widefield_psf.shape, widefield_psf.dtype,
                                        widefield_psf.max(), time.perf_counter() - t0))

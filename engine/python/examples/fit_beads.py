"""A bead stack with known aberrations, simulated, given Poisson noise and
fitted back (airy.fit, the engine's PSF and aberration fit).

    python3 engine/python/examples/fit_beads.py [threads]
"""
import sys

import numpy as np
import airy

optics = {
    "airy": 1,
    "grid": {"shape": [64, 64], "spacing": 6.25},          # PSF pixel λf/(n·N·dx) = 0.1 µm
    "spectrum": {"wavelengths": [0.532], "weights": [1.0]},
    "z": {"start": -2.0, "stop": 2.0, "count": 16},
    "elements": [
        {"type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8},
        {"type": "ff-lens", "f": 100.0, "n": 1.33},
    ],
}
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 0

# the truth: astigmatism and coma in a Zernike phase mask (ANSI, waves)
truth = airy.System.from_json(optics).to_dict()
truth["elements"].insert(1, {"type": "phase-mask", "source": "zernike", "zernike-indices": [5, 6, 7],
                             "zernike-coefficients": [0.08, -0.12, 0.05]})
psf = airy.System.from_json(truth).run(threads=threads)
counts = np.random.default_rng(1).poisson(1e4 * psf.intensity / psf.intensity.max() + 10).astype(np.uint16)

fitted, report = airy.fit(counts, airy.System.from_json(optics), zernike=9, spacing=psf.spacing,
                          threads=threads)
z = report["zernike"]
for j, c, s in zip(z["indices"], z["coefficients"], z["uncertainties"]):
    print("Z%-2d %+.5f ± %.1e waves" % (j, c, s))
print("%s, %d iterations in %.2f s; background %.3f; residual RMS %.3g"
      % (report["objective"], report["iterations"], report["seconds"], report["background"],
         float(np.sqrt(np.mean(report["residual"] ** 2)))))

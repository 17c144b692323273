#!/usr/bin/python3
"""Writes psf-engineering-3d-pixels.airy.json and its start phase beside
this script: psf-engineering-3d.airy.json with its 45-term Zernike mask
replaced by a phase image on the grid holding the same start, 1.0 wave
of unit-RMS astigmatism (ANSI 5: √6·ρ²·cos 2θ over ρ = r / (f·NA/n)).
Needs numpy and tifffile; then (README, "Optimizing"):

  airy-sim optimize resources/examples/psf-engineering-3d-pixels.airy.json \
    --vary 'elements[1].pixels' --loss crlb:-3:3:5000:10 --optimizer lbfgs \
    --steps 30 --lr 0.3 -o resources/examples/psf-engineering-3d-pixels.optimized.airy.json
"""
import json
import os

import numpy as np
import tifffile

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "psf-engineering-3d.airy.json")) as f:
    system = json.load(f)
n = system["grid"]["shape"][0]
dx = system["grid"]["spacing"]
source = system["elements"][0]
radius = source["f"] * source["na"] / source["n"]
j = (np.arange(n) - n // 2) * dx
x, y = np.meshgrid(j, j)
rho, theta = np.hypot(x, y) / radius, np.arctan2(y, x)
phase = (2 * np.pi * np.sqrt(6) * rho ** 2 * np.cos(2 * theta)).astype(np.float32)
phase[rho > 1] = 0
tifffile.imwrite(os.path.join(here, "psf-engineering-3d-pixels-start.tif"), phase)
system["name"] = "psf-engineering-3d-pixels"
system["description"] = ("PSF engineering for 3-D localization (issue #28), the pupil's pixels: "
                         "psf-engineering-3d with its start (1.0 wave of ANSI 5) as a phase image; "
                         "made by psf-engineering-3d-pixels.py")
system["elements"][1] = {"type": "phase-mask", "source": "image", "file": "psf-engineering-3d-pixels-start.tif",
                         "phase-min": float(phase.min()), "phase-max": float(phase.max())}
with open(os.path.join(here, "psf-engineering-3d-pixels.airy.json"), "w") as f:
    json.dump(system, f, indent=2)
    f.write("\n")

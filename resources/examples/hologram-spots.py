#!/usr/bin/python3
"""Writes the hologram-spots problem of airy-sim optimize (issue #28) beside
this script: an 8-bit SLM (a random start phase) lit by a plane wave in
front of an FF lens, and its target, 16 spots and a letter F in the focal
plane holding 1.7 x the light (l2 to it weighs the efficiency against the
uniformity). Needs numpy and tifffile; then (README, "Optimizing"):

  airy-sim optimize resources/examples/hologram-spots.airy.json \
    --vary 'elements[1].pixels' --loss l2:resources/examples/hologram-spots-target.tif \
    --optimizer lbfgs --steps 200 --lr 0.5 \
    -o resources/examples/hologram-spots.optimized.airy.json

The pattern is tests/test-optimize-examples.c's, on N x N pixels."""
import json
import os
import sys

import numpy as np
import tifffile

N = int(sys.argv[1]) if len(sys.argv) > 1 else 64
here = os.path.dirname(os.path.abspath(__file__))


def pattern(n):
    mask = np.zeros((n, n), np.float32)
    c, s, h = n // 2, n // 16, n // 4
    x0, y0 = c - 6 * s, c + 2 * s
    for i in range(4):
        for j in range(4):
            mask[c - 6 * s + i * s, c + 2 * s + j * s] = 1
    mask[y0:y0 + h, x0] = 1
    mask[y0, x0:x0 + h // 2 + 1] = 1
    mask[y0 + h // 2, x0:x0 + h // 3 + 1] = 1
    return mask


mask = pattern(N)
phase = np.random.default_rng(1).uniform(0, 2 * np.pi, (N, N)).astype(np.float32)
tifffile.imwrite(os.path.join(here, "hologram-spots-start.tif"), phase)
tifffile.imwrite(os.path.join(here, "hologram-spots-region.tif"), mask)
system = {
    "airy": 1,
    "name": "hologram-spots",
    "description": "An 8-bit SLM phase that forms 16 spots and an F in the focal plane of an FF lens "
                   "(issue #28's computer-generated holography; made by hologram-spots.py)",
    "grid": {"shape": [N, N], "spacing": 8.0},
    "spectrum": {"wavelengths": [0.532], "weights": [1.0]},
    "z": {"start": 0.0, "stop": 0.0, "count": 1},
    "elements": [
        {"type": "plane-wave", "power": 1.0},
        {"type": "phase-mask", "source": "image", "file": "hologram-spots-start.tif",
         "phase-min": float(phase.min()), "phase-max": float(phase.max()), "wrap": True, "bits": 8},
        {"type": "ff-lens", "f": 100000.0},
    ],
}
with open(os.path.join(here, "hologram-spots.airy.json"), "w") as f:
    json.dump(system, f, indent=2)
    f.write("\n")
# the FF lens conserves the light: the focal plane sums to power / du²,
# du = f·λ/(N·dx), whatever the phase
du = 100000.0 * 0.532 / (N * 8.0)
total = 1.0 / (du * du)
tifffile.imwrite(os.path.join(here, "hologram-spots-target.tif"),
                 (mask * 1.7 * total / mask.sum()).astype(np.float32))

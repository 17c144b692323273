#!/usr/bin/env python3
"""Gohlke's psf package beside Airy's scanning modalities (tests/peers/README.md).

    psf-cases.py OUT_DIR

For each case it writes psf's PSF (<case>.npy: float32, shape (nz, 1, nr),
the (z, r) half plane psf computes, normalised to its value at the origin)
and the same microscope as an Airy system file (<case>.json), and lists the
cases in OUT_DIR/cases.txt ("name columns": the r samples to compare).

psf's conventions, mapped here:
- Its ISOTROPIC model is Richards and Wolf's for unpolarised light in the
  sample medium: the excitation apodisation √cos θ, the defocus phase
  k·n·z·cos θ. Airy's match is its vectorial, unpolarised objective point
  source with the aplanatic apodisation and the non-paraxial defocus.
- Its samples are z_i = i·dims_z/(nz − 1) and r_j = j·dims_r/(nr − 1), µm;
  Airy's pixel ⌊N/2⌋ is the axis, so psf's r_j is Airy's x = N/2 + j on
  the row y = N/2, with Airy's pixel du = dims_r/(nr − 1).
- Its EMISSION PSF at magnification 1 has the apodisation 1 (the √cos θ of
  the objective and 1/√cos θ of the image side cancel), Airy's detection the
  aplanatic √cos θ of its source: the confocal case therefore combines
  psf's own excitation-type PSF at λ_em with psf's own pinhole integration
  (_psf.obsvol), which is what psf.PSF(CONFOCAL) does with its emission PSF.
- Its pinhole kernel's radius in pixels is radius_um·nr/dims_r (its
  Dimensions scale by nr, its samples are dims_r/(nr − 1) apart): the radius
  given to it is Airy's radius·dims_r/(nr·du) so that both integrate the
  same disk.
- Two-photon: psf's ISOTROPIC|TWOPHOTON is its excitation PSF squared.
"""
import json
import math
import os
import sys

import numpy
import psf
from psf import _psf
from scipy.special import jv

NA, N_MEDIUM, F = 1.2, 1.33, 100.0
DU, NR = 0.025, 61            # psf: dims_r = (NR − 1)·DU
NZ, DZ = 5, 0.25              # z = 0, 0.25, …, 1 µm
GRID = 2048


def airy_system(modality, lambda_em, parts):
    """Airy's microscope: pupil spacing f·λ_em/(n·N·du) gives the pixel du."""
    source = {"type": "objective-point-source", "f": F, "n": N_MEDIUM, "na": NA,
              "defocus-model": "nonparaxial", "apodisation": "aplanatic",
              "field": "vectorial", "polarization": "unpolarized"}
    return {
        "airy": 1, "modality": modality,
        "grid": {"shape": [GRID, GRID], "spacing": F * lambda_em / (N_MEDIUM * GRID * DU)},
        "spectrum": {"wavelengths": [lambda_em]},
        "z": {"values": [i * DZ for i in range(NZ)]},
        "elements": [source, {"type": "ff-lens", "f": F, "n": N_MEDIUM}] + parts,
    }


def psf_of(wavelength, underfilling):
    """psf's ISOTROPIC|EXCITATION PSF, less its doubled longitudinal term."""
    p = psf.PSF(psf.ISOTROPIC | psf.EXCITATION, shape=(NZ, NR), dims=((NZ - 1) * DZ, (NR - 1) * DU),
                ex_wavelen=wavelength * 1e3, num_aperture=NA, refr_index=N_MEDIUM, underfilling=underfilling)
    return p.data - longitudinal(wavelength, underfilling)


def longitudinal(wavelength, underfilling):
    """2|I1|² on psf's grid, relative to |I0|² at the origin (Richards–Wolf
    with psf's apodisation √cos θ·exp(−β² sin²θ/sin²α)): psf sums |I0|² +
    4|I1|² + |I2|², the longitudinal field along the polarisation, where the
    azimuthal average of unpolarised (or circular) light is |I0|² + 2|I1|² +
    |I2|²; this is the difference."""
    sa = NA / N_MEDIUM
    t = numpy.linspace(0.0, math.asin(sa), 8001)
    k = 2.0 * math.pi / wavelength
    ap = numpy.sqrt(numpy.cos(t)) * numpy.exp(-underfilling ** 2 * numpy.sin(t) ** 2 / sa ** 2)
    i00 = numpy.trapezoid(ap * numpy.sin(t) * (1.0 + numpy.cos(t)), t)
    out = numpy.zeros((NZ, NR))
    for i in range(NZ):
        phase = numpy.exp(1j * k * N_MEDIUM * i * DZ * numpy.cos(t))
        for j in range(NR):
            i1 = numpy.trapezoid(ap * numpy.sin(t) ** 2 * jv(1, k * N_MEDIUM * j * DU * numpy.sin(t)) * phase, t)
            out[i, j] = 2.0 * abs(i1) ** 2 / i00 ** 2
    return out


def own_error(wavelength, underfilling):
    """psf's excitation PSF against the exact Richards–Wolf integrals (its
    Bessel functions come from a table of step 0.1, linearly interpolated)."""
    sa = NA / N_MEDIUM
    t = numpy.linspace(0.0, math.asin(sa), 8001)
    k = 2.0 * math.pi / wavelength
    ap = numpy.sqrt(numpy.cos(t)) * numpy.exp(-underfilling ** 2 * numpy.sin(t) ** 2 / sa ** 2)
    p = psf.PSF(psf.ISOTROPIC | psf.EXCITATION, shape=(NZ, NR), dims=((NZ - 1) * DZ, (NR - 1) * DU),
                ex_wavelen=wavelength * 1e3, num_aperture=NA, refr_index=N_MEDIUM, underfilling=underfilling)
    exact = numpy.zeros((NZ, NR))
    for i in range(NZ):
        phase = numpy.exp(1j * k * N_MEDIUM * i * DZ * numpy.cos(t))
        for j in range(NR):
            v = k * N_MEDIUM * j * DU * numpy.sin(t)
            terms = [numpy.trapezoid(ap * numpy.sin(t) * f * jv(m, v) * phase, t)
                     for m, f in ((0, 1.0 + numpy.cos(t)), (1, 2.0 * numpy.sin(t)), (2, 1.0 - numpy.cos(t)))]
            exact[i, j] = sum(abs(x) ** 2 for x in terms)
    return numpy.abs(exact / exact[0, 0] - p.data).max()


def write(out, name, data, system, columns, cases, tolerance):
    data = numpy.asarray(data, dtype=numpy.float64)
    data = (data / data[0, 0]).astype(numpy.float32).reshape(NZ, 1, NR)
    numpy.save(os.path.join(out, name + ".npy"), data)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(system, f, indent=1)
    cases.append(f"{name} {columns} {tolerance}")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = []
    lex, lem, l2p = 0.488, 0.52, 0.92

    # psf's default underfilling 1: a Gaussian laser whose 1/e² radius is
    # the pupil's, Airy's "fill": 1; psf's emission side is uniform
    # (underfilling → 0), as Airy's detection is
    big = {"type": "pinhole", "diameter": 1000}
    # psf's own accuracy sets the tolerances: its excitation PSF is within
    # about 8e-4 of the exact integrals (printed), its square within twice
    # that, and the confocal product of two of them with its pinhole kernel
    # (a linear ramp over the edge pixel) and its r → xy interpolation
    # within about three times that
    print(f"psf's excitation PSF against the exact integrals: {own_error(lex, 1.0):.3g} of the peak")
    ex = psf_of(lex, 1.0)
    write(out, "excitation", ex,
          airy_system("confocal", lem, [{"type": "excitation", "wavelength": lex, "fill": 1.0}, big]), NR, cases,
          1e-3)

    # psf's TWOPHOTON is its excitation PSF squared
    two = psf_of(l2p, 1.0)
    write(out, "two-photon", two * two,
          airy_system("two-photon", lem, [{"type": "excitation", "wavelength": l2p, "fill": 1.0}]), NR, cases,
          2e-3)

    # confocal, 1 AU (1.22·λ_em/NA across), through psf's pinhole integration
    em = psf_of(lem, 1e-9)
    radius = 1.22 * lem / NA / 2.0
    dims_r = (NR - 1) * DU
    pinhole = psf.Pinhole(radius * dims_r / (NR * DU), {"px": NR, "um": dims_r}, "round")
    kernel = pinhole.kernel()
    conf = _psf.obsvol(ex, em, kernel)
    # psf integrates the pinhole over its r range only: the columns whose
    # disk lies inside it
    write(out, "confocal", conf,
          airy_system("confocal", lem, [{"type": "excitation", "wavelength": lex, "fill": 1.0},
                                        {"type": "pinhole", "diameter": 1.0}]),
          NR - kernel.shape[0], cases, 3e-3)

    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    print(f"psf {psf.__version__}: {len(cases)} cases in {out}")


if __name__ == "__main__":
    main()

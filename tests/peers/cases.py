#!/usr/bin/env python3
"""chromatix's side of the peer tests (tests/test-peers.c is Airy's side).

usage: cases.py OUTDIR [CASE...]

For every case it writes OUTDIR/<case>.npy (chromatix's intensity, float32,
planes × height × width) and OUTDIR/<case>.json (the same system as an Airy
system file), and lists the cases in OUTDIR/cases.txt, one a line:
`name dy dx tolerance` where (dy, dx) maps Airy's pixel onto chromatix's:
Airy's I[y][x] is compared with chromatix's I[y+dy][x+dx] (the 4f imaging's
"same" crop, DESIGN.md §3), and the largest difference may be tolerance of
chromatix's peak (1e-4, or a case's own in TOLERANCE: @strict, 1e-5).
chromatix itself (../shared/peers/chromatix, MIT) is imported from
PYTHONPATH, never copied into Airy. Even grids only: there both
put the optical axis at pixel N/2 (for odd N chromatix's grid is j − N/2,
Airy's j − ⌊N/2⌋)."""
import json, os, sys

import jax
jax.config.update("jax_platform_name", "cpu")
import jax.numpy as jnp
import numpy as np
import chromatix.functional as cf
from chromatix.elements import AmplitudeMask, BasicSensor, ScaleAndBias
from chromatix.ops.filters import high_pass_filter
from chromatix.ops.ops import fourier_convolution
from chromatix.utils import gaussian_kernel
from chromatix.ops.quantization import binarize
from chromatix.ops.resample import init_plane_resample
from chromatix.systems import Microscope, Optical4FSystemPSF
from chromatix.utils.czt import zoomed_fft
from chromatix.utils.initializers import circular_phase, potato_chip
from chromatix.utils.initializers import seidel_aberrations, sinusoid_phase, zernike_aberrations
from chromatix.utils.initializers import hexagonal_microlens_array_amplitude_and_phase as mla_hex
from chromatix.utils.initializers import microlens_array_amplitude_and_phase as mla_any
from chromatix.utils.initializers import rectangular_microlens_array_amplitude_and_phase as mla_rect

CASES = {}
TOLERANCE = {}


def case(fn):
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


def strict(fn):
    # the case is held to 1e-5 of the peak (cases.txt's fourth column)
    TOLERANCE[fn.__name__.replace("_", "-")] = 1e-5
    return fn


def system(shape, dx, lam, elements, z=None, **extra):
    s = {"airy": 1, "grid": {"shape": list(shape), "spacing": dx},
         "spectrum": {"wavelengths": [lam]}, "elements": elements}
    if z is not None:
        s["z"] = {"values": [float(v) for v in z]}
    s.update(extra)
    return s


def src(f, n, na):
    return {"type": "objective-point-source", "f": f, "n": n, "na": na}


# --- sources -----------------------------------------------------------------
def objective_source(N, dx, lam, f, n, na, z):
    field = cf.objective_point_source((N, N), dx, lam, jnp.asarray(z), f, n, na)
    return field.intensity, system((N, N), dx, lam, [src(f, n, na)], z)


@case
def objective_source_a():
    return objective_source(128, 1.0, 0.532, 100.0, 1.33, 0.8, [-1.0, 0.0, 2.0])


@case
def objective_source_b():
    return objective_source(64, 2.0, 0.6, 50.0, 1.0, 0.5, [0.5, 3.0])


def plane_wave(N, dx, lam, n, ax, ay, pupil_d, f):
    k = 2 * np.pi * n / lam
    field = cf.plane_wave((N, N), dx, lam, kykx=(k * np.sin(ay), k * np.sin(ax)))
    field = cf.circular_pupil(field, pupil_d)
    field = cf.ff_lens(field, f, n)
    el = [{"type": "plane-wave", "n": n, "angle-x": ax, "angle-y": ay},
          {"type": "circular-pupil", "diameter": pupil_d},
          {"type": "ff-lens", "f": f, "n": n}]
    return field.intensity, system((N, N), dx, lam, el)


@case
def plane_wave_a():
    return plane_wave(128, 0.5, 0.532, 1.0, 0.01, -0.02, 40.0, 1000.0)


@case
def plane_wave_b():
    return plane_wave(64, 1.0, 0.6, 1.33, 0.03, 0.0, 50.0, 2000.0)


# --- pupils (a plane wave through the pupil, then an FF lens) ------------------
def pupil(N, dx, lam, fn, airy, f=1000.0):
    field = cf.plane_wave((N, N), dx, lam)
    field = cf.ff_lens(fn(field), f, 1.0)
    el = [{"type": "plane-wave", "n": 1.0}, airy, {"type": "ff-lens", "f": f, "n": 1.0}]
    return field.intensity, system((N, N), dx, lam, el)


@case
def circular_pupil_a():
    return pupil(128, 0.5, 0.532, lambda u: cf.circular_pupil(u, 30.0), {"type": "circular-pupil", "diameter": 30.0})


@case
def circular_pupil_b():
    return pupil(64, 1.0, 0.6, lambda u: cf.circular_pupil(u, 41.0), {"type": "circular-pupil", "diameter": 41.0})


@case
def square_pupil_a():
    return pupil(128, 0.5, 0.532, lambda u: cf.square_pupil(u, 30.0), {"type": "square-pupil", "width": 30.0})


@case
def square_pupil_b():
    return pupil(64, 1.0, 0.6, lambda u: cf.square_pupil(u, 21.0), {"type": "square-pupil", "width": 21.0})


# (no rectangular-pupil case: chromatix's rectangular_pupil indexes its (h, w, 2) grid as
# (2, h, w) at 51c10db and fails with a broadcasting error)


@case
def gaussian_pupil_a():
    return pupil(128, 0.5, 0.532, lambda u: cf.gaussian_pupil(u, 10.0), {"type": "gaussian-pupil", "waist": 10.0})


@case
def gaussian_pupil_b():
    return pupil(64, 1.0, 0.6, lambda u: cf.gaussian_pupil(u, 7.5), {"type": "gaussian-pupil", "waist": 7.5})


@case
@strict
def super_gaussian_pupil_a():
    return pupil(128, 0.5, 0.532, lambda u: cf.super_gaussian_pupil(u, 20.0, 16),
                 {"type": "super-gaussian-pupil", "width": 20.0, "order": 16})


@case
@strict
def super_gaussian_pupil_b():
    return pupil(64, 1.0, 0.6, lambda u: cf.super_gaussian_pupil(u, 15.0, 4.5),
                 {"type": "super-gaussian-pupil", "width": 15.0, "order": 4.5})


@case
@strict
def tukey_pupil_a():
    return pupil(128, 0.5, 0.532, lambda u: cf.tukey_pupil(u, 40.0), {"type": "tukey-pupil", "width": 40.0})


@case
@strict
def tukey_pupil_b():
    return pupil(64, 1.0, 0.6, lambda u: cf.tukey_pupil(u, 16.0), {"type": "tukey-pupil", "width": 16.0})


# --- phase masks and the widefield PSF (source → mask → FF lens) ----------------
def psf(N, dx, lam, f, n, na, z, phase=None, mask=None):
    field = cf.objective_point_source((N, N), dx, lam, jnp.asarray(z), f, n, na)
    el = [src(f, n, na)]
    if phase is not None:
        field = cf.phase_change(field, phase)
        el.append(mask)
    field = cf.ff_lens(field, f, n)
    el.append({"type": "ff-lens", "f": f, "n": n})
    return field.intensity, system((N, N), dx, lam, el, z)


@case
def widefield_psf_a():
    # the seed's optics (λ 0.532, f 100, n 1.33, NA 0.8, its constant phase 1) on 256²
    return psf(256, 1.0, 0.532, 100.0, 1.33, 0.8, np.linspace(-4, 4, 5), jnp.full((256, 256), 1.0),
               {"type": "phase-mask", "source": "constant", "value": 1.0})


@case
def widefield_psf_b():
    return psf(128, 1.0, 0.64, 200.0, 1.0, 0.25, [-10.0, 0.0, 7.0])


@case
def phase_constant_a():
    return psf(128, 1.0, 0.532, 100.0, 1.33, 0.8, [0.0, 1.5], jnp.full((128, 128), 2.5),
               {"type": "phase-mask", "source": "constant", "value": 2.5})


@case
def phase_constant_b():
    return psf(64, 2.0, 0.6, 50.0, 1.0, 0.5, [-1.0], jnp.full((64, 64), -0.7),
               {"type": "phase-mask", "source": "constant", "value": -0.7})


def zernike(N, dx, lam, f, n, na, z, indices, coefficients, normalise):
    # chromatix's initializers sample j − N/2 + ½; on N + 1 pixels that is
    # j − N/2, the field grid (Airy's), so crop the last row and column
    # chromatix sums R_nm's terms up to (n − m)/2 with m signed: for m < 0 the extra
    # terms are 0·ρ^(negative), NaN on the axis pixel, where Z_nm (m ≠ 0) is 0; so
    # each mode on its own, its NaN set to 0, then the sum
    phase = sum(jnp.nan_to_num(zernike_aberrations((N + 1, N + 1), dx, lam, n, f, na, [j], [c],
                                                   normalize=normalise)[:N, :N], nan=0.0)
                for j, c in zip(indices, coefficients))
    mask = {"type": "phase-mask", "source": "zernike", "zernike-indexing": "ansi",
            "zernike-indices": indices, "zernike-coefficients": coefficients,
            "zernike-unit": "um", "zernike-normalised": normalise}
    return psf(N, dx, lam, f, n, na, z, phase, mask)


@case
def zernike_a():
    return zernike(128, 1.0, 0.532, 100.0, 1.33, 0.8, [0.0, 1.0], [4, 7, 11], [0.1, -0.05, 0.03], True)


@case
def zernike_b():
    return zernike(64, 2.0, 0.6, 50.0, 1.0, 0.5, [-0.5], [3, 5, 8], [0.2, 0.15, -0.1], False)


def seidel(N, dx, lam, f, n, na, z, w, u, v):
    # on N + 1 pixels and cropped, as the Zernike cases (chromatix's j − N/2 + ½)
    phase = seidel_aberrations((N + 1, N + 1), dx, lam, n, f, na, w, u, v)[:N, :N]
    mask = {"type": "phase-mask", "source": "seidel", "seidel-coefficients": w, "field-u": u, "field-v": v}
    return psf(N, dx, lam, f, n, na, z, phase, mask)


@case
@strict
def seidel_a():
    # spherical and defocus-like field curvature on axis (h = 0: only W040 acts)
    return seidel(128, 1.0, 0.532, 100.0, 1.33, 0.8, [0.0, 1.0], [0.3, 0.2, 0.1, 0.15, 0.05], 0.0, 0.0)


@case
@strict
def seidel_b():
    # every term off axis: the field point at (0.6, −0.4)
    return seidel(64, 2.0, 0.6, 50.0, 1.0, 0.5, [-0.5], [0.1, -0.25, 0.2, 0.1, 0.3], 0.6, -0.4)


def circular(N, dx, lam, f, n, na, z, shift, w):
    # chromatix's shift·r² inside r ≤ w/2: Airy's named "circular" on the unit pupil of radius
    # w/2 with strength shift·(w/2)² (rad at the rim); on N + 1 pixels and cropped, as Zernike's
    phase = circular_phase((N + 1, N + 1), dx, shift, w)[:N, :N]
    mask = {"type": "phase-mask", "source": "named", "named": "circular", "strength": shift * (w / 2) ** 2,
            "pupil-radius": w / 2}
    return psf(N, dx, lam, f, n, na, z, phase, mask)


@case
@strict
def circular_phase_a():
    # 2 rad at the rim of a 50 µm disc inside the 60 µm pupil
    return circular(128, 1.0, 0.532, 100.0, 1.33, 0.8, [0.0, 1.0], 2.0 / 25.0 ** 2, 50.0)


@case
@strict
def circular_phase_b():
    return circular(64, 2.0, 0.6, 50.0, 1.0, 0.5, [-0.5], -3.0 / 12.0 ** 2, 24.0)


def chip(N, dx, lam, f, n, na, z, d, c0):
    # chromatix's potato_chip on the objective's unit pupil f·NA/n, k = n/λ
    phase = potato_chip((N + 1, N + 1), dx, lam, n, f, na, d, c0)[:N, :N]
    mask = {"type": "phase-mask", "source": "named", "named": "potato-chip", "chip-depth": d, "chip-c0": c0}
    return psf(N, dx, lam, f, n, na, z, phase, mask)


@case
@strict
def potato_chip_a():
    # chromatix's defaults d = 50 µm, C0 = −146.7
    return chip(128, 1.0, 0.532, 100.0, 1.33, 0.8, [0.0, 2.0], 50.0, -146.7)


@case
@strict
def potato_chip_b():
    return chip(64, 2.0, 0.6, 50.0, 1.0, 0.5, [-1.0], 20.0, -30.0)


def sinusoid(N, dx, lam, n_grating, period, thickness, f=1000.0):
    # chromatix's sinusoid_grating: sin(2π (x − x_min)/period) over the sampled maximum, on its
    # j − N/2 + ½ grid; made on N + 1 pixels and cropped, x_min = −N/2·dx is a whole number of
    # periods and a sample falls on a crest (period a multiple of 4·dx), which makes it Airy's
    # sine about the axis with the amplitude 2π Δn·t/λ
    phase = sinusoid_phase((N + 1, N + 1), dx, lam, n_grating, period, thickness)[:N, :N]
    field = cf.ff_lens(cf.phase_change(cf.plane_wave((N, N), dx, lam), phase), f, 1.0)
    el = [{"type": "plane-wave", "n": 1.0},
          {"type": "phase-mask", "source": "named", "named": "sinusoid", "period": period,
           "strength": 2 * np.pi * (n_grating - 1.0) * thickness / lam},
          {"type": "ff-lens", "f": f, "n": 1.0}]
    return field.intensity, system((N, N), dx, lam, el)


@case
@strict
def sinusoid_grating_a():
    return sinusoid(128, 0.5, 0.532, 1.5, 8.0, 0.6)


@case
@strict
def sinusoid_grating_b():
    return sinusoid(64, 1.0, 0.6, 1.46, 16.0, 2.1)


# --- lenses and free-space propagation (a Gaussian-apodised plane wave) -----------
def beam(N, dx, lam, w):
    field = cf.gaussian_pupil(cf.plane_wave((N, N), dx, lam), w)
    return field, [{"type": "plane-wave", "n": 1.0}, {"type": "gaussian-pupil", "waist": w}]


@case
def thin_lens_a():
    field, el = beam(128, 0.5, 0.532, 12.0)
    field = cf.transfer_propagate(cf.thin_lens(field, 400.0, 1.0), 300.0, 1.0, 64, mode="same")
    el += [{"type": "thin-lens", "f": 400.0, "n": 1.0},
           {"type": "propagate", "z": 300.0, "n": 1.0, "method": "transfer", "pad": 64}]
    return field.intensity, system((128, 128), 0.5, 0.532, el)


@case
def thin_lens_b():
    field, el = beam(64, 1.0, 0.6, 10.0)
    field = cf.transfer_propagate(cf.thin_lens(field, 800.0, 1.0), 500.0, 1.0, 32, mode="same")
    el += [{"type": "thin-lens", "f": 800.0, "n": 1.0},
           {"type": "propagate", "z": 500.0, "n": 1.0, "method": "transfer", "pad": 32}]
    return field.intensity, system((64, 64), 1.0, 0.6, el)


@case
def df_lens_a():
    field, el = beam(128, 0.5, 0.532, 8.0)
    field = cf.df_lens(field, 300.0, 1000.0, 1.0)
    el.append({"type": "df-lens", "d": 300.0, "f": 1000.0, "n": 1.0})
    return field.intensity, system((128, 128), 0.5, 0.532, el)


@case
def df_lens_b():
    field, el = beam(64, 1.0, 0.6, 9.0)
    field = cf.df_lens(field, 2500.0, 1500.0, 1.0)
    el.append({"type": "df-lens", "d": 2500.0, "f": 1500.0, "n": 1.0})
    return field.intensity, system((64, 64), 1.0, 0.6, el)


def propagate(N, dx, lam, w, z, pad, method, **kw):
    field, el = beam(N, dx, lam, w)
    if method == "transfer":
        field = cf.transfer_propagate(field, z, 1.0, pad, mode="same")
    elif method == "angular-spectrum":
        field = cf.asm_propagate(field, z, 1.0, pad, mode="same", bandlimit=kw.get("band-limit", False),
                                 remove_evanescent=kw.get("remove-evanescent", False))
    else:
        field = cf.transform_propagate(field, z, 1.0, pad)
    el.append({"type": "propagate", "z": z, "n": 1.0, "method": method, "pad": pad, **kw})
    return field.intensity, system((N, N), dx, lam, el)


@case
def transfer_a():
    return propagate(128, 0.5, 0.532, 6.0, 200.0, 64, "transfer")


@case
def transfer_b():
    return propagate(64, 1.0, 0.6, 8.0, 700.0, 32, "transfer")


@case
def asm_a():
    return propagate(128, 0.5, 0.532, 6.0, 150.0, 64, "angular-spectrum")


@case
def asm_b():
    return propagate(64, 0.4, 0.6, 3.0, 60.0, 32, "angular-spectrum", **{"band-limit": True})


@case
def single_fft_a():
    return propagate(128, 0.5, 0.532, 6.0, 2000.0, 0, "single-fft")


@case
def single_fft_b():
    return propagate(64, 1.0, 0.6, 5.0, 5000.0, 16, "single-fft")


# --- sensor: the PSF summed over z, block sums --------------------------------------
def sensor(N, dx, lam, f, n, na, z, factor):
    field = cf.ff_lens(cf.objective_point_source((N, N), dx, lam, jnp.asarray(z), f, n, na), f, n)
    du = float(field.dx[0, 0]) if np.ndim(field.dx) == 2 else float(np.ravel(field.dx)[0])
    resampler = init_plane_resample((N // factor, N // factor), du * factor, "pool")
    image = cf.basic_sensor(field, resampler=resampler, reduce_axis=0)
    el = [src(f, n, na), {"type": "ff-lens", "f": f, "n": n},
          {"type": "sensor", "reduce": "sum", "resample": "block-sum", "factor": factor}]
    return image, system((N, N), dx, lam, el, z)


@case
def sensor_a():
    return sensor(128, 1.0, 0.532, 100.0, 1.33, 0.8, [-1.0, 0.0, 1.0], 2)


@case
def sensor_b():
    return sensor(128, 1.0, 0.64, 200.0, 1.0, 0.25, [0.0, 4.0], 4)


# --- 4f imaging: Microscope(Optical4FSystemPSF, BasicSensor) -----------------------
def imaging(N, pixel, lam, f, n, na, z, value):
    micro = Microscope(system_psf=Optical4FSystemPSF(shape=(N, N), spacing=pixel, f_tube=f, phase=jnp.zeros((N, N))),
                       sensor=BasicSensor(shape=(N, N), spacing=pixel, resampling_method=None, reduce_axis=0),
                       f=f, n=n, NA=na, spectrum=lam)
    z = jnp.asarray(z)
    image = micro(jnp.full((z.size, N, N), value), z)
    s = {"airy": 1, "grid": {"shape": [N, N], "spacing": pixel}, "spectrum": {"wavelengths": [lam]},
         "z": {"values": [float(v) for v in z]},
         "microscope": {"f": f, "n": n, "na": na, "f-tube": f},
         "elements": [{"type": "phase-mask", "source": "constant", "value": 0.0}],
         "sensor": {"reduce": "sum"}, "sample": {"constant": value}}
    return image, s, (1, 1)


@case
def imaging_4f_a():
    return imaging(128, 0.3, 0.532, 100.0, 1.33, 0.8, np.linspace(-2, 2, 5), 1.0)


@case
def imaging_4f_b():
    return imaging(64, 0.2, 0.6, 200.0, 1.0, 0.5, [-1.0, 0.5], 0.25)


# --- amplitude masks: an 8-bit PNG of the grid's shape (values / 255) ----------------
def write_png(path, img):
    import struct, zlib
    h, w = img.shape
    raw = b"".join(b"\0" + bytes(row) for row in img.astype(np.uint8))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    with open(path, "wb") as fp:
        fp.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                 + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def amplitude(N, dx, lam, seed, invert):
    rng = np.random.default_rng(seed)
    img = np.zeros((N, N), np.uint8)
    img[N // 4:3 * N // 4, N // 4:3 * N // 4] = rng.integers(0, 256, (N // 2, N // 2))
    name = f"amplitude-{seed}.png"
    write_png(os.path.join(OUT, name), img)
    a = img.astype(np.float64) / 255.0
    a = 1.0 - a if invert else a
    field = cf.ff_lens(cf.amplitude_change(cf.plane_wave((N, N), dx, lam), jnp.asarray(a, jnp.float32)), 1000.0, 1.0)
    el = [{"type": "plane-wave", "n": 1.0}, {"type": "amplitude-mask", "file": name, "invert": invert},
          {"type": "ff-lens", "f": 1000.0, "n": 1.0}]
    return field.intensity, system((N, N), dx, lam, el)


@case
def amplitude_mask_a():
    return amplitude(64, 0.5, 0.532, 1, False)


@case
def amplitude_mask_b():
    return amplitude(128, 1.0, 0.6, 2, True)


def binary_amplitude(N, dx, lam, seed, invert, threshold):
    # chromatix's AmplitudeMask(is_binary=True) (ops.binarize at 0.5), or binarize at another
    # threshold through amplitude_change
    rng = np.random.default_rng(seed)
    img = np.zeros((N, N), np.uint8)
    img[N // 4:3 * N // 4, N // 4:3 * N // 4] = rng.integers(0, 256, (N // 2, N // 2))
    name = f"binary-{seed}.png"
    write_png(os.path.join(OUT, name), img)
    a = img.astype(np.float64) / 255.0
    a = jnp.asarray(1.0 - a if invert else a, jnp.float32)
    field = cf.plane_wave((N, N), dx, lam)
    if threshold == 0.5:
        field = AmplitudeMask(a, is_binary=True)(field)
    else:
        field = cf.amplitude_change(field, binarize(a, threshold))
    field = cf.ff_lens(field, 1000.0, 1.0)
    el = [{"type": "plane-wave", "n": 1.0},
          {"type": "amplitude-mask", "file": name, "invert": invert, "binarize": True, "threshold": threshold},
          {"type": "ff-lens", "f": 1000.0, "n": 1.0}]
    return field.intensity, system((N, N), dx, lam, el)


@case
@strict
def binary_amplitude_mask_a():
    return binary_amplitude(64, 0.5, 0.532, 3, False, 0.5)


@case
@strict
def binary_amplitude_mask_b():
    return binary_amplitude(128, 1.0, 0.6, 4, True, 0.3)


def field_filter(N, dx, lam, pupil_d, sigma, high):
    # chromatix's ops.gaussian_filter / high_pass_filter (axes y, x of the bare field) on a
    # plane wave through a square pupil: the field itself, no lens
    field = cf.square_pupil(cf.plane_wave((N, N), dx, lam), pupil_d)
    # (chromatix's gaussian_filter hands _broadcast_2d_to_spatial an int and fails; its own
    # body, gaussian_kernel through fourier_convolution, is what runs here)
    if high:
        u = high_pass_filter(field.u, (sigma, sigma), axes=(0, 1))
    else:
        u = fourier_convolution(field.u, gaussian_kernel((sigma, sigma)), axes=(0, 1))
    field = field.replace(u=u)
    el = [{"type": "plane-wave", "n": 1.0}, {"type": "square-pupil", "width": pupil_d},
          {"type": "field-filter", "sigma": sigma, "high-pass": high}]
    return field.intensity, system((N, N), dx, lam, el)


@case
@strict
def gaussian_filter_a():
    return field_filter(64, 0.5, 0.532, 16.0, 1.5, False)


@case
@strict
def high_pass_filter_b():
    return field_filter(96, 1.0, 0.6, 40.0, 2.3, True)


def scale_bias(N, dx, lam, pupil_d, scale, bias, f=1000.0):
    # chromatix's ScaleAndBias, (u + bias)·scale, between a square pupil and an FF lens
    field = cf.square_pupil(cf.plane_wave((N, N), dx, lam), pupil_d)
    field = cf.ff_lens(ScaleAndBias(bias=bias, scale=scale)(field), f, 1.0)
    el = [{"type": "plane-wave", "n": 1.0}, {"type": "square-pupil", "width": pupil_d},
          {"type": "scale-and-bias", "scale": scale, "bias": bias}, {"type": "ff-lens", "f": f, "n": 1.0}]
    return field.intensity, system((N, N), dx, lam, el)


@case
@strict
def scale_and_bias_a():
    return scale_bias(64, 0.5, 0.532, 16.0, 2.0, 0.01)


@case
@strict
def scale_and_bias_b():
    return scale_bias(96, 1.0, 0.6, 40.0, -0.7, -0.004)


# --- polarisation: a vectorial plane wave (Jones vector (cos θ, sin θ·e^{iβ}); chromatix's
# amplitude is [Ez, Ey, Ex]) → circular pupil → element → linear analyser → FF lens. The
# analyser turns the element's phases into intensity. chromatix divides each Jones matrix by
# its Frobenius norm (over the whole array: for jones_sample over every pixel too), Airy does
# not: chromatix's intensity is multiplied by each norm² (the product over the elements).
def frobenius(j):
    return float(jnp.sum(jnp.abs(jnp.asarray(j)) ** 2))


def polarised(N, dx, lam, theta, beta, fn, airy, analyser, scale=1.0, f=1000.0, d=None):
    d = d if d is not None else N * dx / 2
    amp = jnp.array([0, np.sin(theta) * np.exp(1j * beta), np.cos(theta)], dtype=jnp.complex64)
    field = cf.plane_wave((N, N), dx, lam, amplitude=amp, scalar=False)
    field = cf.circular_pupil(field, d)
    field = cf.linear_polarizer(fn(field), analyser)
    field = cf.ff_lens(field, f, 1.0)
    el = [{"type": "plane-wave", "n": 1.0, "field": "vectorial", "jones-angle": theta, "jones-phase": beta},
          {"type": "circular-pupil", "diameter": d}, *airy,
          {"type": "linear-polarizer", "angle": analyser}, {"type": "ff-lens", "f": f, "n": 1.0}]
    return field.intensity * scale, system((N, N), dx, lam, el)


def retarder_norm2(theta, eta, phi):
    s, c, e = np.sin(theta), np.cos(theta), np.exp(1j * eta)
    return frobenius([c * c + e * s * s, s * s + e * c * c, (1 - e) * s * c, (1 - e) * s * c])


@case
def linear_polarizer_a():
    return polarised(64, 1.0, 0.532, 0.3, 0.7, lambda u: cf.linear_polarizer(u, 1.1),
                     [{"type": "linear-polarizer", "angle": 1.1}], 0.2)


@case
def linear_polarizer_b():
    return polarised(128, 0.5, 0.6, 1.2, -0.4, lambda u: cf.linear_polarizer(u, -0.5),
                     [{"type": "linear-polarizer", "angle": -0.5}], 2.0)


@case
def circular_polarizer_left():
    return polarised(64, 1.0, 0.532, 0.4, 1.0, cf.left_circular_polarizer,
                     [{"type": "circular-polarizer", "handedness": "left"}], 0.3)


@case
def circular_polarizer_right():
    return polarised(128, 0.5, 0.6, 0.9, -0.6, cf.right_circular_polarizer,
                     [{"type": "circular-polarizer", "handedness": "right"}], 1.3)


def retarder(N, dx, lam, theta, beta, fn, airy, analyser, angle, eta, phi):
    return polarised(N, dx, lam, theta, beta, fn, airy, analyser, scale=retarder_norm2(angle, eta, phi))


@case
def quarter_wave_a():
    return retarder(64, 1.0, 0.532, 0.0, 0.0, lambda u: cf.quarterwave_plate(u, 0.4),
                    [{"type": "quarter-wave-plate", "angle": 0.4}], 1.0, 0.4, np.pi / 2, 0.0)


@case
def quarter_wave_b():
    return retarder(128, 0.5, 0.6, 0.7, 0.5, lambda u: cf.quarterwave_plate(u, -1.0),
                    [{"type": "quarter-wave-plate", "angle": -1.0}], -0.3, -1.0, np.pi / 2, 0.0)


@case
def half_wave_a():
    return retarder(64, 1.0, 0.532, 0.2, 0.0, lambda u: cf.halfwave_plate(u, 0.5),
                    [{"type": "half-wave-plate", "angle": 0.5}], 0.9, 0.5, np.pi, 0.0)


@case
def half_wave_b():
    return retarder(128, 0.5, 0.6, 1.0, 0.8, lambda u: cf.halfwave_plate(u, 2.0),
                    [{"type": "half-wave-plate", "angle": 2.0}], 0.1, 2.0, np.pi, 0.0)


@case
def phase_retarder_a():
    return retarder(64, 1.0, 0.532, 0.3, 0.2, lambda u: cf.phase_retarder(u, 0.6, 1.3, 0.4),
                    [{"type": "phase-retarder", "angle": 0.6, "retardance": 1.3, "circularity": 0.4}],
                    1.2, 0.6, 1.3, 0.4)


@case
def phase_retarder_b():
    return retarder(128, 0.5, 0.6, 1.1, -0.7, lambda u: cf.phase_retarder(u, -0.8, 2.5, -1.1),
                    [{"type": "phase-retarder", "angle": -0.8, "retardance": 2.5, "circularity": -1.1}],
                    0.4, -0.8, 2.5, -1.1)


def compensator(N, dx, lam, theta, beta, r45, r0, analyser):
    scale = retarder_norm2(-np.pi / 4, r45, 0.0) * retarder_norm2(0.0, r0, 0.0)
    return polarised(N, dx, lam, theta, beta, lambda u: cf.universal_compensator(u, r45, r0),
                     [{"type": "universal-compensator", "retardance-45": r45, "retardance-0": r0}],
                     analyser, scale=scale)


@case
def universal_compensator_a():
    return compensator(64, 1.0, 0.532, 0.3, 0.0, 1.2, 0.7, 0.8)


@case
def universal_compensator_b():
    return compensator(128, 0.5, 0.6, 1.0, 0.5, -0.6, 2.2, -0.4)


def jones_sample(N, dx, lam, theta, beta, dn, ab, t, analyser):
    # chromatix's jones_sample fails at 51c10db: its rearrange pattern "m m h w -> …" names m
    # twice (einops: duplicate dimension). What it does after that is its documented
    # exp(i·2π(dn + i·absorption)·t/λ) per component, then polarizer(): done here with the
    # components as scalars (polarizer() cannot take per-pixel arrays either: its matrix mixes
    # the scalar 0s with them and jnp.array fails), so the norm is the 2 × 2 one
    sample = np.exp(1j * 2 * np.pi * (np.asarray(dn) + 1j * np.asarray(ab)) * t / lam).reshape(2, 2)
    j = [complex(sample[a, b]) for a in (0, 1) for b in (0, 1)]
    scale = frobenius(sample)
    return polarised(N, dx, lam, theta, beta, lambda u: cf.polarizer(u, *j),
                     [{"type": "jones-sample", "pattern": "components", "dn": list(dn), "absorption": list(ab),
                       "thickness": t}], analyser, scale=scale)


@case
def jones_sample_a():
    return jones_sample(64, 1.0, 0.532, 0.3, 0.2, [0.01, 0.002, -0.003, 0.02], [0.001, 0.0, 0.002, 0.0], 5.0, 0.7)


@case
def jones_sample_b():
    return jones_sample(128, 0.5, 0.6, 1.0, -0.5, [-0.02, 0.005, 0.004, 0.03], [0.0, 0.003, 0.001, 0.004], 8.0, -0.3)


# --- thick samples: thin_sample and multislice_thick_sample on a plane wave (to 1e-5) --
def smooth_map(rng, shape, lo, hi):
    # a random map, smoothed (a box filter of 5 pixels) so that it scatters into the grid
    a = rng.uniform(lo, hi, shape)
    k = np.ones(5) / 5
    for axis in range(a.ndim - 2, a.ndim):
        a = np.apply_along_axis(lambda v: np.convolve(v, k, mode="same"), axis, a)
    return a.astype(np.float32)


def thin_sample(N, dx, lam, seed, t, f=1000.0):
    rng = np.random.default_rng(seed)
    dn = smooth_map(rng, (N, N), -0.05, 0.1)
    ab = smooth_map(rng, (N, N), 0.0, 0.02)
    field = cf.thin_sample(cf.plane_wave((N, N), dx, lam), jnp.asarray(ab), jnp.asarray(dn), t)
    field = cf.ff_lens(field, f, 1.0)
    el = [{"type": "plane-wave", "n": 1.0},
          {"type": "thin-sample", "source": "map", "dn-map": [float(v) for v in dn.ravel()],
           "absorption-map": [float(v) for v in ab.ravel()], "thickness": t},
          {"type": "ff-lens", "f": f, "n": 1.0}]
    return field.intensity, system((N, N), dx, lam, el)


@case
@strict
def thin_sample_a():
    return thin_sample(64, 0.5, 0.532, 3, 2.0)


@case
@strict
def thin_sample_b():
    return thin_sample(128, 0.25, 0.6, 4, 5.0)


def bead_volume(N, dx, D, dz, r, dn):
    # Airy's bead: voxel (k, y, x) at ((k + ½ − D/2)·dz, (y − N/2)·dx, (x − N/2)·dx), inside when
    # its centre is within r
    z = (np.arange(D) + 0.5 - D / 2) * dz
    y = (np.arange(N) - N // 2) * dx
    r2 = z[:, None, None] ** 2 + y[None, :, None] ** 2 + y[None, None, :] ** 2
    return np.where(r2 <= r * r, dn, 0.0).astype(np.float32)


def multislice(N, dx, lam, n, dn, ab, dz, pad, na, focus, airy_volume):
    field = cf.plane_wave((N, N), dx, lam)
    D = dn.shape[0]
    field = cf.multislice_thick_sample(field, jnp.asarray(ab), jnp.asarray(dn), n, dz, pad,
                                       NA=na if na > 0 else None,
                                       reverse_propagate_distance=D * dz / 2 - focus)
    el = [{"type": "plane-wave", "n": 1.0},
          {"type": "multislice", "n": n, "spacing": dz, "pad": pad, "na": na, "focus": focus, **airy_volume}]
    return field.intensity, system((N, N), dx, lam, el)


@case
@strict
def multislice_bead():
    # a bead of radius 5.3 µm, Δn 0.05 in water, imaged at NA 0.8 (brightfield)
    N, dx, D, dz = 64, 0.4, 30, 0.4
    dn = bead_volume(N, dx, D, dz, 5.3, 0.05)
    return multislice(N, dx, 0.532, 1.33, dn, np.zeros_like(dn), dz, 16, 0.8, 0.0,
                      {"volume": "bead", "radius": 5.3, "dn": 0.05, "slices": D})


@case
@strict
def multislice_map():
    # a random absorbing and phase volume on a grid fine enough for evanescent waves, refocused
    # 1.5 µm past the middle, no pupil
    N, dx, D, dz = 64, 0.2, 12, 0.5
    rng = np.random.default_rng(5)
    dn = smooth_map(rng, (D, N, N), -0.03, 0.06)
    ab = smooth_map(rng, (D, N, N), 0.0, 0.01)
    return multislice(N, dx, 0.6, 1.0, dn, ab, dz, 8, 0.0, 1.5,
                      {"volume": "map", "slices": D, "dn-map": [float(v) for v in dn.ravel()],
                       "absorption-map": [float(v) for v in ab.ravel()]})


# --- microlens arrays: a plane wave through the array, then to the lenses' focus -----
# chromatix's initializers sample j − N/2 + ½; on N + 1 pixels that is the field grid
# (as for the Zernike cases), so the masks are made on N + 1 and cropped
def microlens(N, dx, lam, f, radius, pitch, layout, block, z, pad):
    shape = (N + 1, N + 1)
    if layout["layout"] == "hexagonal":
        amp, phase = mla_hex(shape, dx, lam, 1.0, f, layout["lenses"], radius, pitch)
    elif layout["layout"] == "custom":
        c = np.asarray(layout["centers"], np.float64).reshape(-1, 2).T
        amp, phase = mla_any(shape, dx, lam, 1.0, jnp.full(c.shape[1], f), jnp.asarray(c),
                             jnp.full(c.shape[1], radius))
    else:
        my = layout.get("lenses-y", layout.get("lenses"))
        mx = layout.get("lenses-x", layout.get("lenses"))
        amp, phase = mla_rect(shape, dx, lam, 1.0, f, my, mx, radius, pitch)
    field = cf.phase_change(cf.plane_wave((N, N), dx, lam), phase[:N, :N])
    if block:
        field = cf.amplitude_change(field, amp[:N, :N])
    field = cf.transfer_propagate(field, z, 1.0, pad, mode="same")
    el = [{"type": "plane-wave", "n": 1.0},
          {"type": "microlens-array", "f": f, "n": 1.0, "radius": radius, "pitch": pitch,
           "block-between": block, **layout},
          {"type": "propagate", "z": z, "n": 1.0, "method": "transfer", "pad": pad}]
    return field.intensity, system((N, N), dx, lam, el)


@case
@strict
def microlens_square():
    return microlens(128, 1.0, 0.532, 800.0, 20.3, 40.0, {"layout": "square", "lenses": 3}, False, 800.0, 64)


@case
@strict
def microlens_rectangular():
    # an even count: lens ⌊m/2⌋ on the axis
    return microlens(128, 1.0, 0.6, 600.0, 15.2, 32.0,
                     {"layout": "rectangular", "lenses-y": 2, "lenses-x": 3}, True, 600.0, 64)


@case
@strict
def microlens_hexagonal_a():
    return microlens(128, 1.0, 0.532, 700.0, 17.1, 36.0, {"layout": "hexagonal", "lenses": 2}, True, 700.0, 64)


@case
@strict
def microlens_hexagonal_b():
    # 19 lenses that overlap (radius above half the pitch: their phases add)
    return microlens(128, 1.0, 0.6, 500.0, 14.7, 24.0, {"layout": "hexagonal", "lenses": 3}, False, 500.0, 32)


@case
@strict
def microlens_custom():
    return microlens(96, 1.0, 0.532, 400.0, 12.3, 30.0,
                     {"layout": "custom", "centers": [0.0, 0.0, 17.5, -20.25, -22.0, 9.0]}, True, 400.0, 48)


def auto_pad(N, dx, lam, w, z, method):
    # chromatix's padding rules chosen per method; Airy's "auto-pad"
    rule = {"transfer": cf.compute_padding_transfer, "angular-spectrum": cf.compute_padding_exact,
            "single-fft": cf.compute_padding_transform}[method]
    pad = int(rule(N, lam, dx, z))
    image, s = propagate(N, dx, lam, w, z, pad, method)
    s["elements"][-1]["pad"] = 0
    s["elements"][-1]["auto-pad"] = True
    return image, s


@case
def auto_pad_transfer():
    return auto_pad(64, 1.0, 0.5, 6.0, 400.0, "transfer")


@case
def auto_pad_exact():
    return auto_pad(64, 0.5, 0.6, 4.0, 150.0, "angular-spectrum")


def kernel(N, dx, lam, w, z, name, tilt):
    # chromatix's kernel_propagate of its own Fresnel kernel (tilted by kykx), no padding; Airy reads
    # the kernel fftshift-ed (f = 0 at pixel N/2) as a 2-plane float TIFF (real, imaginary)
    import tifffile
    field, el = beam(N, dx, lam, w)
    k = cf.compute_transfer_propagator(field, z, 1.0, kykx=tilt)
    h = np.fft.fftshift(np.asarray(k).reshape(N, N))
    tifffile.imwrite(os.path.join(OUT, name), np.stack([h.real, h.imag]).astype(np.float32))
    field = cf.kernel_propagate(field, k)
    el.append({"type": "kernel-propagate", "file": name})
    return field.intensity, system((N, N), dx, lam, el)


@case
def kernel_propagate_a():
    return kernel(64, 1.0, 0.5, 6.0, 200.0, "kernel-a.tif", (0.0, 0.0))


@case
def kernel_propagate_b():
    return kernel(128, 0.5, 0.6, 5.0, 80.0, "kernel-b.tif", (0.4, -0.3))


def sas(N, dx, lam, w, z):
    # chromatix's transform_propagate_sas (pads N/2 a side, precompensation, one-FFT Fresnel, crops);
    # kz·(√(1 − s²) − (1 − s²/2)) cancels in chromatix's float32 (~6e-8·kz rad): kz kept near 2500
    field, el = beam(N, dx, lam, w)
    field = cf.transform_propagate_sas(field, z, 1.0)
    el.append({"type": "propagate", "z": z, "n": 1.0, "method": "sas"})
    return field.intensity, system((N, N), dx, lam, el)


@case
def sas_a():
    return sas(128, 1.0, 0.5, 1.5, 200.0)


@case
def sas_b():
    return sas(64, 0.5, 0.6, 1.0, -120.0)


def thick(N, dx, lam, w, ff, f, radius, t, n_lens, n, na, inverse, z):
    # chromatix's ray_transfer of the lens's ABCD matrix (Collins), then a transfer propagation
    field, el = beam(N, dx, lam, w)
    fn = cf.thick_plano_convex_ff_lens if ff else cf.thick_plano_convex_lens
    field = fn(field, f, radius, t, n_lens, n, NA=na, inverse=inverse)
    el.append({"type": "thick-plano-convex-ff-lens" if ff else "thick-plano-convex-lens", "f": f,
               "radius": radius, "thickness": t, "n-lens": n_lens, "n": n, "na": na or 0.0, "inverse": inverse})
    if z:
        field = cf.transfer_propagate(field, z, n, N // 2, mode="same")
        el.append({"type": "propagate", "z": z, "n": n, "method": "transfer", "pad": N // 2})
    return field.intensity, system((N, N), dx, lam, el)


@case
def thick_lens_a():
    return thick(128, 0.5, 0.532, 12.0, False, 200.0, 100.0, 4.0, 1.5, 1.0, None, False, 190.0)


@case
def thick_lens_b():
    return thick(64, 1.0, 0.6, 10.0, True, 600.0, 250.0, 10.0, 1.6, 1.33, 0.02, True, 0.0)


def dispersive(N, dx, modulate, seed, f=1000.0):
    # two wavelengths (weights 0.3, 0.7): a plane wave, a phase from an 8-bit PNG mapped to
    # [0, 3] rad at the first wavelength, an FF lens; chromatix's phase_change scales the phase
    # by λ_c/λ (spectrally_modulate) or not. A plane wave and no pupil: chromatix's chromatic
    # objective source has an amplitude ∝ 1/λ under one power for all wavelengths (Airy: each
    # wavelength its power) and its pupils scale their size by λ_c/λ.
    lam, weights = [0.5, 0.6], [0.3, 0.7]
    rng = np.random.default_rng(seed)
    img = np.clip(smooth_map(rng, (N, N), 0, 255), 0, 255).astype(np.uint8)
    name = f"dispersive-{seed}.png"
    write_png(os.path.join(OUT, name), img)
    phase = jnp.asarray(img.astype(np.float64) / 255.0 * 3.0, jnp.float32)
    field = cf.plane_wave((N, N), dx, (jnp.asarray(lam), jnp.asarray(weights)))
    field = cf.ff_lens(cf.phase_change(field, phase, spectrally_modulate=modulate), f, 1.0)
    el = [{"type": "plane-wave", "n": 1.0},
          {"type": "phase-mask", "source": "image", "file": name, "phase-min": 0.0, "phase-max": 3.0,
           "spectral-modulation": modulate},
          {"type": "ff-lens", "f": f, "n": 1.0}]
    s = system((N, N), dx, lam[0], el)
    s["spectrum"] = {"wavelengths": lam, "weights": weights}
    return field.intensity, s


@case
@strict
def spectral_modulation_on():
    return dispersive(64, 1.0, True, 6)


@case
@strict
def spectral_modulation_off():
    return dispersive(64, 1.0, False, 6)


def zoomed_lens(N, dx, lam, n, pupil_d, f, m, spacing, cx, cy):
    # an FF lens's output region by chromatix's chirp-z zoomed_fft, one axis at a time: output
    # p_k = c + (k − ⌊m/2⌋)·spacing is the input index's phase θ_k = 2π n dx p_k/(λf), and
    # zoomed_fft sums x_j e^{+i j θ}, so it runs from −θ_0 to −θ_{m−1} (the phase that counting j
    # from the corner instead of the axis adds per output pixel leaves |u|² alone)
    # chromatix's transform in double (its czt warns of complex64's accuracy: 4e-4 of the peak
    # here, where Airy's double chirps and the direct sum agree to 4e-7)
    field = cf.circular_pupil(cf.plane_wave((N, N), dx, lam), pupil_d)
    with jax.enable_x64(True):
        u = jnp.asarray(np.asarray(field.u), jnp.complex128)
        for axis, c in ((int(field.spatial_dims[0]), cy), (int(field.spatial_dims[1]), cx)):
            p = c + (np.arange(m) - m // 2) * spacing
            theta = 2 * np.pi * n * dx * p / (lam * f)
            u = zoomed_fft(u, -theta[0], -theta[-1], (m,), axes=(axis,), include_end=True)
        u = u * (dx * dx * n / (lam * f))
        intensity = np.abs(np.asarray(u)) ** 2  # a scalar field of one wavelength: height × width
    el = [{"type": "plane-wave", "n": n}, {"type": "circular-pupil", "diameter": pupil_d},
          {"type": "ff-lens", "f": f, "n": n, "output-shape": m, "output-spacing": spacing,
           "output-center-x": cx, "output-center-y": cy}]
    return intensity, system((N, N), dx, lam, el)


@case
@strict
def zoomed_ff_lens_a():
    # a 30 µm disk at f = 1 mm (the FFT's spacing 8.3 µm): 64² at 1 µm, off the axis in x
    return zoomed_lens(128, 0.5, 0.532, 1.0, 30.0, 1000.0, 64, 1.0, 15.0, 0.0)


@case
@strict
def zoomed_ff_lens_b():
    return zoomed_lens(96, 0.6, 0.6, 1.33, 40.0, 1500.0, 40, 0.7, 6.0, -12.0)


def main():
    global OUT
    out = OUT = sys.argv[1]
    names = sys.argv[2:] or list(CASES)
    os.makedirs(out, exist_ok=True)
    lines = []
    for name in names:
        result = CASES[name]()
        image, airy_system = result[0], result[1]
        dy, dx = result[2] if len(result) > 2 else (0, 0)
        image = np.asarray(image, dtype=np.float32)
        if image.ndim == 2:
            image = image[None]
        np.save(os.path.join(out, name + ".npy"), image)
        with open(os.path.join(out, name + ".json"), "w") as fp:
            json.dump(airy_system, fp, indent=1)
        lines.append(f"{name} {dy} {dx} {TOLERANCE.get(name, 1e-4):g}\n")
        print(f"{name}: {image.shape}, peak {image.max():.6g}", flush=True)
    with open(os.path.join(out, "cases.txt"), "w") as fp:
        fp.writelines(lines)


if __name__ == "__main__":
    main()

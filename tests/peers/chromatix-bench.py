#!/usr/bin/env python3
"""The seed's two workloads in chromatix (JAX): the widefield PSF (objective point source,
constant 1 rad phase mask, FF lens over z planes) and 4f imaging of a volume of ones (a
Microscope summing over z), each jitted, timed after compilation; prints JSON.

usage: chromatix-bench.py [--planes N] [--size N] [--repeat N]
Needs the folder that holds chromatix on PYTHONPATH (tests/peers/bench sets it)."""
import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np
from chromatix.elements import BasicSensor, FFLens, ObjectivePointSource, PhaseMask
from chromatix.systems import Microscope, Optical4FSystemPSF, OpticalSystem


def timed(fn, *args, repeat):
    t = time.perf_counter()
    fn(*args).block_until_ready()
    first = time.perf_counter() - t
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - t)
    return first, float(np.median(times))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--planes", type=int, default=32)
    p.add_argument("--size", type=int, default=512)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    # the seed presets' optics (airy-sim preset seed-widefield / seed-imaging)
    shape, spacing, lam, f, n, na = (a.size, a.size), 0.3, 0.532, 100.0, 1.33, 0.8
    z = jnp.linspace(-4, 4, num=a.planes)

    psf_model = OpticalSystem([ObjectivePointSource(shape, spacing, lam, f, n, na),
                               PhaseMask(jnp.ones(shape)), FFLens(f, n)])
    psf_fn = jax.jit(lambda z: psf_model(z).intensity)
    psf_first, psf_s = timed(psf_fn, z, repeat=a.repeat)

    micro = Microscope(
        system_psf=Optical4FSystemPSF(shape=shape, spacing=spacing, f_tube=f,
                                      phase=jnp.zeros(shape)),
        sensor=BasicSensor(shape=shape, spacing=spacing, resampling_method=None, reduce_axis=0),
        f=f, n=n, NA=na, spectrum=lam)
    vol = jnp.ones((a.planes, *shape))
    img_fn = jax.jit(lambda m, v, z: m(v, z))
    img_first, img_s = timed(img_fn, micro, vol, z, repeat=a.repeat)
    print(json.dumps({"device": str(jax.devices()[0]), "jax": jax.__version__,
                      "planes": a.planes, "size": a.size,
                      "psf_first_s": psf_first, "psf_median_s": psf_s,
                      "imaging_first_s": img_first, "imaging_median_s": img_s}))


if __name__ == "__main__":
    main()

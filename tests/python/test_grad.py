"""airy.grad and airy.optimize: the engine's gradient and optimizer from Python."""
import math

import numpy as np
import pytest

import airy


def psf(c5, z=0.0):
    return {
        "airy": 1,
        "grid": {"shape": [32, 32], "spacing": 4.5},
        "spectrum": {"wavelengths": [0.6], "weights": [1.0]},
        "z": {"start": -1.0, "stop": 1.0, "count": 3},
        "elements": [
            {"type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8, "power": 1.5, "z": z},
            {"type": "phase-mask", "source": "zernike", "zernike-indices": [4, 5],
             "zernike-coefficients": [0.1, c5]},
            {"type": "ff-lens", "f": 100.0, "n": 1.33},
        ],
    }


@pytest.fixture
def target(tmp_path):
    path = tmp_path / "target.tif"
    airy.System.from_json(psf(0.15, 0.3)).run(threads=1).save(path)
    return "l2:%s" % path


def l2(system, target):
    t = airy.read(target.split(":", 1)[1]).intensity.astype(np.float64)
    i = system.run(threads=1).intensity.astype(np.float64)
    return float(np.mean((i - t) ** 2))


def test_grad_against_differences(target):
    value, g = airy.grad(airy.System.from_json(psf(0.05)), target,
                         vary=["elements[1].zernike-coefficients[1]"], threads=1)
    h = 2e-3
    fd = (l2(airy.System.from_json(psf(0.05 + h)), target)
          - l2(airy.System.from_json(psf(0.05 - h)), target)) / (2 * h)
    assert math.isclose(value, l2(airy.System.from_json(psf(0.05)), target), rel_tol=1e-4)
    assert math.isclose(g["elements[1].zernike-coefficients[1]"], fd, rel_tol=2e-3)


def test_grad_array_path_and_pixels(target, tmp_path):
    value, g = airy.grad(airy.System.from_json(psf(0.05)), target,
                         vary="elements[1].zernike-coefficients", threads=1)
    assert sorted(g) == ["elements[1].zernike-coefficients[0]", "elements[1].zernike-coefficients[1]"]
    flat = tmp_path / "flat.tif"
    airy._airy.write(str(flat), np.zeros((1, 32, 32), np.float32), 4.5)
    s = psf(0.0)
    s["elements"][1] = {"type": "phase-mask", "source": "image", "file": str(flat)}
    value, g = airy.grad(airy.System.from_json(s), target, vary=["elements[1].pixels"], threads=1)
    px = g["elements[1].pixels"]
    assert px.shape == (32, 32) and px.dtype == np.float32 and np.abs(px).max() > 0


def test_optimize_recovers(target):
    system, report = airy.optimize(airy.System.from_json(psf(0.0)), target,
                                   vary=["elements[1].zernike-coefficients[1]", "elements[0].z"],
                                   optimizer="lbfgs", steps=40, lr=0.05, threads=1)
    p = report["parameters"]
    assert abs(p["elements[0].z"]["after"] - 0.3) < 1e-4
    assert abs(p["elements[1].zernike-coefficients[1]"]["after"] - 0.15) < 1e-4
    assert report["loss-after"] < 1e-4 * report["loss-before"]
    d = system.to_dict()
    assert abs(d["elements"][0]["z"] - 0.3) < 1e-4
    assert math.isclose(l2(system, target), report["loss-after"], rel_tol=1e-2, abs_tol=1e-9)


def test_optimize_bad_input(target):
    s = airy.System.from_json(psf(0.0))
    with pytest.raises(ValueError, match="elements\\[0\\].nope: objective-point-source has no parameter nope"):
        airy.optimize(s, target, vary=["elements[0].nope"])
    with pytest.raises(ValueError, match="must lie in elements\\[0\\].na's range \\[0.001, 4\\]"):
        airy.optimize(s, target, vary=["elements[0].na"], bounds={"elements[0].na": (0.5, 9)})
    with pytest.raises(ValueError, match="optimizer: must be one of adam, lbfgs"):
        airy.optimize(s, target, vary=["elements[0].z"], optimizer="sgd")
    with pytest.raises(ValueError, match="--loss crlb:1:-1:5:0: must be"):
        airy.grad(s, "crlb:1:-1:5:0", vary=["elements[0].z"])

"""airy.fit: the engine's PSF and aberration fit from Python, a synthetic
bead stack with known Zernike terms recovered from a numpy array and from a
TIFF path."""
import json

import numpy as np
import pytest

import airy

# the fit's optics: 64² pupil samples of 6.25 µm (PSF pixel λf/(n·N·dx) = 0.1 µm), 16 planes
OPTICS = {
    "airy": 1,
    "grid": {"shape": [64, 64], "spacing": 6.25},
    "spectrum": {"wavelengths": [0.532], "weights": [1.0]},
    "z": {"start": -2.0, "stop": 2.0, "count": 16},
    "elements": [
        {"type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8},
        {"type": "ff-lens", "f": 100.0, "n": 1.33},
    ],
}
TRUE_INDICES = [5, 6, 7]
TRUE_COEFFICIENTS = [0.08, -0.12, 0.05]


def truth_stack():
    d = json.loads(json.dumps(OPTICS))
    d["elements"].insert(1, {"type": "phase-mask", "source": "zernike",
                             "zernike-indices": TRUE_INDICES,
                             "zernike-coefficients": TRUE_COEFFICIENTS})
    return airy.System.from_json(d).run(threads=2)


def coefficient(report, index):
    z = report["zernike"]
    return z["coefficients"][z["indices"].index(index)], z["uncertainties"][z["indices"].index(index)]


def test_fit_recovers_zernike_from_counts():
    truth = truth_stack()
    psf = truth.intensity
    assert np.allclose(truth.spacing, (4 / 15, 0.1, 0.1))
    rng = np.random.default_rng(7)
    counts = rng.poisson(1e4 * psf / psf.max() + 10).astype(np.uint16)
    system = airy.System.from_json(OPTICS)
    seen = []
    fitted, report = airy.fit(counts, system, zernike=9, spacing=(4 / 15, 0.1, 0.1),
                              threads=2, progress=lambda s, i, loss: seen.append((s, i, loss)))
    assert report["objective"] == "poisson"        # uint16: counts
    for j, c in zip(TRUE_INDICES, TRUE_COEFFICIENTS):
        got, sigma = coefficient(report, j)
        assert abs(got - c) < 2e-3, (j, got, c, sigma)
        assert 0 < sigma < 2e-3
    for j in (3, 8, 9):                            # not in the truth
        assert abs(coefficient(report, j)[0]) < 2e-3
    assert abs(report["background"] - 10) < 0.5
    assert report["model"].dtype == np.float32 and report["model"].shape == counts.shape
    assert np.allclose(report["residual"], counts - report["model"], atol=1e-2)
    assert seen and all(np.isfinite(loss) for _, _, loss in seen)
    # the fitted system carries the terms in a phase mask, ready to run
    mask = [e for e in fitted.to_dict()["elements"] if e["type"] == "phase-mask"][0]
    got = dict(zip(mask["zernike-indices"], mask["zernike-coefficients"]))
    assert abs(got[6] - (-0.12)) < 2e-3
    again = fitted.run(threads=2).intensity
    assert np.abs(again / again.max() - psf / psf.max()).max() < 0.02


def test_fit_from_a_tiff_path(tmp_path):
    result = truth_stack()
    path = tmp_path / "beads.tif"
    result.save(path)                               # float32 with its voxel size: least squares
    fitted, report = airy.fit(path, airy.System.from_json(OPTICS), zernike=7, threads=2)
    assert report["objective"] == "least-squares"
    for j, c in zip(TRUE_INDICES, TRUE_COEFFICIENTS):
        assert abs(coefficient(report, j)[0] - c) < 1e-3
    assert not any("pixel size" in w for w in report["warnings"])


def test_fit_from_a_result_keeps_its_spacing():
    fitted, report = airy.fit(truth_stack(), airy.System.from_json(OPTICS), zernike=7, threads=2)
    assert abs(coefficient(report, 6)[0] - (-0.12)) < 1e-3
    assert not report["warnings"], report["warnings"]


@pytest.mark.parametrize("kwargs, exc, words", [
    ({"zernike": 2}, ValueError, "zernike: must be in [3, 65], got 2"),
    ({"zernike": 99}, ValueError, "zernike: must be in [3, 65], got 99"),
    ({"restarts": -1}, ValueError, "restarts"),
    ({"threads": 5000}, ValueError, "threads: must be in [0, 4096], got 5000"),
    ({"objective": "l1"}, ValueError, 'objective: must be one of auto, poisson, least-squares, got "l1"'),
    ({"gain": -2.0}, ValueError, "gain: must be a number > 0 (ADU per photon), got -2"),
    ({"offset": float("inf")}, ValueError, "offset: must be a finite number (ADU), got inf"),
    ({"backend": "warp"}, ValueError, "warp"),
    ({"crop_at": "middle"}, TypeError, "crop_at"),
    ({"zernike": "9"}, TypeError, "zernike"),
    ({"spacing": (1, 2)}, TypeError, "spacing"),
    ({"spacing": -0.1}, ValueError, "spacing"),
    ({"progress": 3}, TypeError, "progress"),
])
def test_fit_bad_options(kwargs, exc, words):
    stack = np.ones((16, 32, 32), np.float32)
    with pytest.raises(exc) as info:
        airy.fit(stack, airy.System.from_json(OPTICS), **kwargs)
    assert words in str(info.value)


def test_fit_bad_stacks(tmp_path):
    system = airy.System.from_json(OPTICS)
    with pytest.raises(FileNotFoundError, match="absent.tif"):
        airy.fit(tmp_path / "absent.tif", system)
    with pytest.raises(ValueError, match="shape"):
        airy.fit(np.ones((2, 2, 2, 2)), system)
    with pytest.raises(TypeError, match="dtype"):
        airy.fit(np.array([["a"]]), system)
    with pytest.raises(TypeError, match="system"):
        airy.fit(np.ones((16, 8, 8)), OPTICS)
    with pytest.raises(ValueError, match="one plane"):   # the engine's own check
        airy.fit(np.ones((8, 8), np.float32), system)


def test_fit_progress_exception_cancels_it():
    def stop(start, iteration, loss):
        raise RuntimeError("enough at %d" % iteration)

    with pytest.raises(RuntimeError, match="enough at"):
        airy.fit(truth_stack(), airy.System.from_json(OPTICS), zernike=7, threads=2, progress=stop)


def test_keyboard_interrupt_cancels_the_fit():
    import _thread
    import threading
    # a model with the wrong NA never fits to the noise: all 100 starts run (≈ 24 s here)
    psf = truth_stack().intensity
    counts = np.random.default_rng(7).poisson(1e4 * psf / psf.max() + 10).astype(np.uint16)
    optics = json.loads(json.dumps(OPTICS))
    optics["elements"][0]["na"] = 0.7
    seen = []
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        airy.fit(counts, airy.System.from_json(optics), zernike=15, spacing=(4 / 15, 0.1, 0.1),
                 restarts=100, threads=1, progress=lambda s, i, loss: seen.append(s))
    timer.join()
    assert seen and seen[-1] < 99           # stopped before its last start

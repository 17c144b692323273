"""airy's API: systems, runs without a copy, files, agreement with airy-sim."""
import gc
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import airy

from conftest import SMALL


def test_version_and_backends():
    assert airy.__version__.count(".") == 2
    names = [b["name"] for b in airy.backends()]
    assert "cpu" in names
    assert "seed-widefield" in airy.presets()


def test_intensity_is_the_engines_memory_without_a_copy(small):
    r = small.run(threads=1)
    a = r.intensity
    assert a.dtype == np.float32 and a.shape == (4, 64, 64)
    assert a.ctypes.data == r._stack.address          # the engine's pixels, not a copy
    assert a.base is not None and not a.flags.owndata
    assert a.flags.c_contiguous and a.flags.writeable


def test_array_outlives_system_and_result(small_json):
    s = airy.System.from_json(small_json)
    a = s(threads=1).intensity
    expect = a.copy()
    del s
    gc.collect()
    junk = [np.ones(64 * 64 * 4, np.float32) for _ in range(50)]  # reuse freed memory
    assert np.array_equal(a, expect)
    assert float(a.max()) > 0
    del junk


def test_json_round_trip_and_repr(small):
    d = json.loads(small.to_json())
    assert d["grid"]["shape"] == [64, 64]
    assert repr(small) == small.to_json()
    again = airy.System.from_json(small.to_json())
    assert np.array_equal(again(threads=1).intensity, small(threads=1).intensity)


def test_z_argument_and_spacing(small):
    r = small.run(z=[-0.5, 0.0, 0.5], threads=1)
    assert r.intensity.shape == (3, 64, 64)
    assert np.allclose(r.z, [-0.5, 0.0, 0.5])
    # the FF lens's output plane: dx' = λ f / (n N dx)
    assert r.spacing[2] == pytest.approx(0.532 * 100.0 / (1.33 * 64 * 0.3))
    one = small(0.0, threads=1)
    assert np.array_equal(one.intensity[0], r.intensity[1])
    # the system itself is unchanged
    assert small.run(threads=1).intensity.shape[0] == 4


def test_preset_and_file(tmp_path, small_json):
    p = tmp_path / "s.json"
    p.write_text(small_json)
    a = airy.System.from_file(p)(threads=1).intensity
    b = airy.System.from_file(str(p))(threads=1).intensity
    assert np.array_equal(a, b)
    assert "objective-point-source" in airy.System.preset("seed-widefield").to_json()


def test_save_and_read_round_trip(tmp_path, small):
    r = small(threads=1)
    path = tmp_path / "psf.tif"
    r.save(path)
    back = airy.read(path)
    assert np.array_equal(back.intensity, r.intensity)
    assert back.spacing == pytest.approx(r.spacing)


def test_repr_png_is_the_middle_plane(small):
    png = small(threads=1)._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 100


def test_progress_callback():
    # 8 planes of 1536²: the 50 ms poll sees the planes being done
    s = airy.System.preset("seed-widefield")
    seen = []
    s.run(z=np.linspace(-1, 1, 8), threads=1, progress=lambda d, t: seen.append((d, t)))
    assert seen, "progress never called"
    assert all(t == 8 and 0 <= d <= 8 for d, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_progress_exception_cancels_and_propagates():
    s = airy.System.preset("seed-widefield")

    def stop(done, total):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        s.run(threads=1, progress=stop)


def test_matches_airy_sim_bit_for_bit(tmp_path, small_json):
    sim = os.environ.get("AIRY_SIM")
    if not sim:
        pytest.skip("AIRY_SIM not set (run through meson test)")
    js = tmp_path / "s.json"
    js.write_text(small_json)
    out = tmp_path / "sim.tif"
    subprocess.run([sim, "run", str(js), "-o", str(out), "--threads", "2", "-q"], check=True)
    ours = airy.System.from_json(small_json).run(threads=2).intensity
    theirs = airy.read(out).intensity
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)


def test_two_threads_equal_sequential(small_json):
    s1 = airy.System.from_json(small_json)
    d = dict(SMALL, z={"start": -2.0, "stop": 0.5, "count": 5})
    s2 = airy.System.from_json(json.dumps(d))
    seq = [s1(threads=1).intensity, s2(threads=1).intensity]
    out = [None, None]

    def go(i, s):
        out[i] = s(threads=1).intensity
    ts = [threading.Thread(target=go, args=(i, s)) for i, s in enumerate((s1, s2))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert np.array_equal(out[0], seq[0]) and np.array_equal(out[1], seq[1])


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_thousand_runs_do_not_grow(small_json):
    d = dict(SMALL, grid={"shape": [32, 32], "spacing": 0.3}, z={"start": 0, "stop": 0, "count": 1})
    s = airy.System.from_json(json.dumps(d))
    for _ in range(100):
        s(threads=1).intensity.sum()
    before = _rss_kb()
    for _ in range(1000):
        s(threads=1).intensity.sum()
    after = _rss_kb()
    assert after <= before * 1.05, (before, after)


def test_airy_disk_fwhm_at_focus():
    # 4f focus of a uniform pupil: FWHM = 0.5145 λ / NA (scalar Airy disk)
    lam, na, n = 0.532, 0.5, 1.0
    # the pupil (radius f·NA/n = 50 µm) well inside a 1024 µm grid: 0.052 µm pixels at focus
    src = airy.ObjectivePointSource((2048, 2048), 0.5, lam, f=100.0, n=n, NA=na)
    s = airy.OpticalSystem([src, airy.FFLens(100.0, n)])
    r = s(0.0, threads=1)
    img = r.intensity[0].astype(np.float64)
    dx = r.spacing[2]
    assert dx == pytest.approx(lam * 100.0 / (n * 2048 * 0.5))
    cy, cx = np.unravel_index(np.argmax(img), img.shape)
    row = img[cy] / img[cy, cx]
    # the half-maximum crossings, linearly interpolated
    right = cx + np.argmax(row[cx:] < 0.5)
    left = cx - np.argmax(row[cx::-1] < 0.5)
    xr = right - 1 + (row[right - 1] - 0.5) / (row[right - 1] - row[right])
    xl = left + 1 - (row[left + 1] - 0.5) / (row[left + 1] - row[left])
    fwhm = (xr - xl) * dx
    assert fwhm == pytest.approx(0.5145 * lam / na, rel=0.03)


def test_optical_system_equals_the_json(small_json):
    src = airy.ObjectivePointSource((64, 64), 0.3, 0.532, f=100.0, n=1.33, NA=0.8)
    s = airy.OpticalSystem([src, airy.PhaseMask(1.0), airy.FFLens(100.0, 1.33)])
    z = np.linspace(-1.0, 1.0, 4)
    a = s(z, threads=1).intensity
    b = airy.System.from_json(small_json)(threads=1).intensity
    assert np.array_equal(a, b)


def test_own_elements_by_json_name():
    # the pupil (radius f·NA/n ≈ 60 µm) inside the grid (±77 µm)
    src = airy.ObjectivePointSource((256, 256), 0.6, 0.532, f=100.0, n=1.33, NA=0.8)
    s = airy.OpticalSystem([src, airy.Element("phase-mask", source="constant", value=0.0),
                            airy.CircularPupil(na=0.4, f=100.0, n=1.33),
                            airy.FFLens(100.0, 1.33)])
    wide = airy.OpticalSystem([src, airy.FFLens(100.0, 1.33)])
    a = s(0.0, threads=1).intensity[0]
    b = wide(0.0, threads=1).intensity[0]
    # the half-NA pupil passes a quarter of the light
    assert a.sum() == pytest.approx(b.sum() / 4, rel=0.05)


def test_phase_mask_array_tilt_moves_the_focus():
    # a linear phase of m cycles over the grid moves the FF lens's focus by m pixels (shift theorem)
    N, m = 128, 5
    src = airy.ObjectivePointSource((N, N), 1.0, 0.532, f=100.0, n=1.0, NA=0.3)
    tilt = np.tile(2 * np.pi * m * np.arange(N) / N, (N, 1))
    flat = airy.OpticalSystem([src, airy.FFLens(100.0, 1.0)])(0.0, threads=1).intensity[0]
    moved = airy.OpticalSystem([src, airy.PhaseMask(tilt), airy.FFLens(100.0, 1.0)])(0.0, threads=1).intensity[0]
    (y0, x0), (y1, x1) = (np.unravel_index(np.argmax(a), a.shape) for a in (flat, moved))
    assert y1 == y0 and abs(x1 - x0) == m
    assert moved.sum() == pytest.approx(flat.sum(), rel=1e-3)

"""system.run(backend=, devices=, threads=): the values a run takes, and a
ValueError naming the value and the allowed range for the others."""
import numpy as np
import pytest

import airy


def test_devices_of_the_cpu_backend(small, monkeypatch):
    # the CPU backend's virtual devices (AIRY_CPU_DEVICES): the planes split over them
    monkeypatch.setenv("AIRY_CPU_DEVICES", "2")
    one = small.run(threads=2).intensity
    assert np.array_equal(small.run(devices=2, threads=2).intensity, one)
    assert np.array_equal(small.run(devices=[1, 0], threads=2).intensity, one)
    assert np.array_equal(small.run(devices=(1,), backend="cpu", threads=1).intensity, one)


@pytest.mark.parametrize("threads", [0, 1, 3])
def test_threads_give_the_same_result(small, threads):
    assert np.allclose(small.run(threads=threads).intensity, small.run(threads=2).intensity,
                       rtol=0, atol=1e-7)


@pytest.mark.parametrize("kwargs, exc, message", [
    ({"threads": 5000}, ValueError, "threads: must be in [0, 4096], got 5000"),
    ({"threads": -1}, ValueError, "threads: must be in [0, 4096], got -1"),
    ({"threads": 2.5}, TypeError, "threads: must be an int"),
    ({"devices": 0}, ValueError, "devices: must be in [1, 1024], got 0"),
    ({"devices": 2000}, ValueError, "devices: must be in [1, 1024], got 2000"),
    ({"devices": [-1]}, ValueError, "devices[0]: must be in [0, 1023], got -1"),
    ({"devices": [0, 1024]}, ValueError, "devices[1]: must be in [0, 1023], got 1024"),
    ({"devices": []}, ValueError, "devices: give at least one device index"),
    ({"devices": [5]}, ValueError, "device 5 does not exist; the cpu backend has 1 (0 … 0)"),
    ({"devices": [0, 0]}, ValueError, "device 0 is listed twice"),
    ({"devices": "0"}, TypeError, "devices: must be None, a count or a list of device indices, got str"),
    ({"devices": [True]}, TypeError, "devices[0]: must be a device index (int), got bool"),
    ({"devices": 1.0}, TypeError, "devices: must be None, a count or a list"),
    ({"backend": "warp"}, ValueError, 'backend: must be one of cpu, '),
    ({"backend": None}, TypeError, "backend: must be a str"),
])
def test_bad_run_options(small, kwargs, exc, message, monkeypatch):
    monkeypatch.delenv("AIRY_CPU_DEVICES", raising=False)
    with pytest.raises(exc) as info:
        small.run(**kwargs)
    assert message in str(info.value)
    if kwargs.get("backend") == "warp":
        assert 'auto, got "warp"' in str(info.value)


def test_an_unavailable_backend_says_why(small):
    names = {b["name"]: b for b in airy.backends()}
    if "cuda" in names and names["cuda"]["available"]:
        pytest.skip("this machine has a usable CUDA backend")
    with pytest.raises(RuntimeError, match="CUDA"):
        small.run(backend="cuda")

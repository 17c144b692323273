"""Shared systems for the Python package's tests (tests/python)."""
import json

import pytest

import airy

# A small widefield PSF: the seed's elements on a 64² grid, 4 planes.
SMALL = {
    "airy": 1,
    "name": "small",
    "grid": {"shape": [64, 64], "spacing": 0.3},
    "spectrum": {"wavelengths": [0.532], "weights": [1.0]},
    "z": {"start": -1.0, "stop": 1.0, "count": 4},
    "elements": [
        {"type": "objective-point-source", "f": 100.0, "n": 1.33, "na": 0.8, "power": 1.0},
        {"type": "phase-mask", "source": "constant", "value": 1.0},
        {"type": "ff-lens", "f": 100.0, "n": 1.33},
    ],
}


@pytest.fixture
def small_json():
    return json.dumps(SMALL)


@pytest.fixture
def small(small_json):
    return airy.System.from_json(small_json)

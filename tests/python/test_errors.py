"""Twenty wrong calls: each raises the right exception with a message that
names what was wrong, and none crashes the interpreter."""
import json

import numpy as np
import pytest

import airy

from conftest import SMALL


def with_(path, value):
    d = json.loads(json.dumps(SMALL))
    node = d
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return json.dumps(d)


def closed_file_path(tmp_path):
    f = open(tmp_path / "x.json", "w")
    f.close()
    return f


CASES = [
    # (callable, exception, words the message must hold)
    (lambda t: airy.System.from_file(t / "missing.json"), FileNotFoundError, "missing.json"),
    (lambda t: airy.System.from_file(42), TypeError, "path"),
    (lambda t: airy.System.from_file(closed_file_path(t)), TypeError, "path"),
    (lambda t: airy.System.preset("no-such-preset"), ValueError, "no-such-preset"),
    (lambda t: airy.System.preset(None), TypeError, "name"),
    (lambda t: airy.System.from_json("{not json"), ValueError, ""),
    (lambda t: airy.System.from_json(3.5), TypeError, "text"),
    (lambda t: airy.System.from_json(with_(["elements", 0, "na"], -0.5)), ValueError, "na"),
    (lambda t: airy.System.from_json(with_(["elements", 0, "bogus"], 1)), ValueError, "bogus"),
    (lambda t: airy.System.from_json(with_(["elements", 1, "type"], "warp-drive")), ValueError, "warp-drive"),
    (lambda t: airy.System.from_json(with_(["grid", "spacing"], "wide")), TypeError, "spacing"),
    (lambda t: airy.System.from_json(json.dumps(SMALL)).run(threads=-1), ValueError, "threads"),
    (lambda t: airy.System.from_json(json.dumps(SMALL)).run(threads="2"), TypeError, "threads"),
    (lambda t: airy.System.from_json(json.dumps(SMALL)).run(backend=3), TypeError, "backend"),
    (lambda t: airy.System.from_json(json.dumps(SMALL)).run(backend="warp"), ValueError, "warp"),
    (lambda t: airy.System.from_json(json.dumps(SMALL)).run(progress=5), TypeError, "progress"),
    (lambda t: airy.System.from_json(json.dumps(SMALL)).run(z=np.zeros((2, 2))), ValueError, "z"),
    (lambda t: airy.System.from_json(json.dumps(SMALL)).run(z=["a"]), TypeError, "z"),
    (lambda t: airy.read(t / "absent.tif"), FileNotFoundError, "absent.tif"),
    (lambda t: airy.PhaseMask(np.zeros((2, 2, 2))), ValueError, "phase"),
    (lambda t: airy.ObjectivePointSource((64, 64), 0.3, 0.532, f="x", n=1.33, NA=0.8), TypeError, "f"),
    (lambda t: airy.OpticalSystem([airy.FFLens(100.0, 1.33), "lens"]), TypeError, "elements[1]"),
    (lambda t: airy.System("json"), TypeError, "System"),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_wrong_call_raises(i, tmp_path):
    call, exc, words = CASES[i]
    with pytest.raises(exc) as info:
        call(tmp_path)
    msg = str(info.value)
    assert msg, "no message"
    assert words.lower() in msg.lower(), msg


def test_over_the_budget_is_memory_error(monkeypatch):
    monkeypatch.setenv("AIRY_MEMORY_BUDGET", "1M")
    s = airy.System.preset("seed-widefield")
    with pytest.raises(MemoryError) as info:
        s.run(threads=1)
    assert str(info.value)


def test_bad_file_content_is_value_or_os_error(tmp_path):
    p = tmp_path / "bad.tif"
    p.write_bytes(b"II*\x00garbage")
    with pytest.raises(OSError) as info:
        airy.read(p)
    assert "bad.tif" in str(info.value)

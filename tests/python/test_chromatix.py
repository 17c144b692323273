"""chromatix itself beside airy from Python: one widefield PSF (the seed's
optics on 256² × 5 planes) computed by chromatix and by airy in the peer
venv (tests/peers/venv.sh makes BUILD/peers-venv with JAX; chromatix comes
from the shared peers folder), by the same lines with the module changed,
equal to 1e-5 of chromatix's peak. Skips with the reason when chromatix or
the venv is not there."""
import json
import os
import subprocess

import pytest

import airy

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("AIRY_SOURCE_ROOT") or os.path.normpath(os.path.join(HERE, "..", ".."))


def build_root():
    root = os.environ.get("AIRY_BUILD_ROOT")
    if root:
        return root
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(airy.__file__)))   # BUILD/engine/python
    root = os.path.normpath(os.path.join(pkg, "..", ".."))
    if not os.path.isdir(os.path.join(root, "meson-private")):
        pytest.skip("airy is not imported from a Meson build folder (%s); set AIRY_BUILD_ROOT" % pkg)
    return root


def peer_python():
    peers = os.environ.get("AIRY_PEERS_DIR") or os.path.join(SOURCE, "..", "shared", "peers")
    if not os.path.isfile(os.path.join(peers, "chromatix", "__init__.py")):
        pytest.skip("no chromatix at %s/chromatix (the project's shared/peers)" % peers)
    venv = os.path.join(build_root(), "peers-venv")
    made = subprocess.run(["bash", os.path.join(SOURCE, "tests", "peers", "venv.sh"), venv],
                          capture_output=True, text=True, timeout=1800)
    if made.returncode == 77:
        pytest.skip("no virtual environment for chromatix: %s" % made.stderr.strip().splitlines()[-1])
    assert made.returncode == 0, made.stderr
    return made.stdout.strip().splitlines()[-1], os.path.abspath(peers)


def test_widefield_psf_equals_chromatix():
    python, peers = peer_python()
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(airy.__file__)))
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join([peers, pkg]))
    out = subprocess.run([python, os.path.join(HERE, "chromatix_widefield.py"), "256", "5"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(r)
    assert r["shape_airy"] == r["shape_chromatix"] == [5, 256, 256]
    assert r["dtype_airy"] == "float32"
    assert r["peak_chromatix"] > 0
    assert r["max_rel"] <= 1e-5, r

"""The engine's messages in German from Python when the locale asks for it
(LANGUAGE=de): airy binds the engine's gettext domain to the build's or the
install's locale folder at import."""
import os
import subprocess
import sys

import pytest

import airy

BAD = """
import json, airy
from conftest import SMALL
d = json.loads(json.dumps(SMALL)); d["elements"][0]["na"] = -0.5
for call in (lambda: airy.System.from_json(d),
             lambda: airy.System.from_json(SMALL).run(threads=5000),
             lambda: airy.System.from_json(SMALL).run(devices=[]),
             lambda: airy.fit([[[1.0]]], airy.System.from_json(SMALL), gain=-2.0)):
    try:
        call()
    except ValueError as e:
        print(e)
"""


def run_bad(**env):
    e = {k: v for k, v in os.environ.items() if k not in ("LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    e.update(env)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__), e.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", BAD], env=e, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def german_catalogue():
    mo = os.path.join(airy._locale_dir(), "de", "LC_MESSAGES", "airy.mo")
    if not os.path.isfile(mo):
        pytest.skip("this build has no German translations compiled (%s is missing)" % mo)


def test_messages_in_german_with_language_de():
    german_catalogue()
    assert run_bad(LANGUAGE="de") == [
        "elements[0].na: muss in [0.001, 4] liegen, ist aber -0.5",
        "threads: muss in [0, 4096] liegen, ist aber 5000",
        "devices: mindestens einen Geräteindex angeben, die Liste ist aber leer",
        "gain: muss eine Zahl > 0 sein (ADU pro Photon), ist aber -2",
    ]


def test_messages_in_german_with_lang_de():
    german_catalogue()
    if subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.find("de_DE.utf8") < 0:
        pytest.skip("the de_DE.UTF-8 locale is not installed")
    assert run_bad(LANG="de_DE.UTF-8")[0] == "elements[0].na: muss in [0.001, 4] liegen, ist aber -0.5"


def test_messages_in_english_without_a_language():
    assert run_bad(LANG="C") == [
        "elements[0].na: must be in [0.001, 4], got -0.5",
        "threads: must be in [0, 4096], got 5000",
        "devices: give at least one device index, got an empty list",
        "gain: must be a number > 0 (ADU per photon), got -2",
    ]

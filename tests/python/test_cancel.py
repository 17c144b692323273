"""Ctrl-C cancels a run; runs release the GIL."""
import _thread
import threading
import time

import pytest

import airy


def test_keyboard_interrupt_cancels_the_run():
    s = airy.System.preset("seed-widefield")     # 128 planes of 1536²: many seconds
    seen = []
    timer = threading.Timer(0.5, _thread.interrupt_main)
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        s.run(threads=1, progress=lambda d, t: seen.append((d, t)))
    elapsed = time.monotonic() - t0
    timer.join()
    print("cancelled after %.2f s (interrupt at 0.5 s)" % elapsed)
    # the run stopped before its last plane
    assert not seen or seen[-1][0] < seen[-1][1]


def test_run_releases_the_gil(small):
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)
    t = threading.Thread(target=count)
    s = airy.System.preset("seed-widefield")
    t.start()
    s.run(z=[0.0, 0.5, 1.0, 1.5], threads=1)
    stop.set()
    t.join()
    # a thread holding the GIL for the whole run would leave the counter at ~0
    assert len(ticks) > 10

"""The serving process' admission gate (retrieval/core/admission.py): at most ``slots`` requests run, the others
wait first come, first served, each told how many are ahead of it; a request that goes away gives up its place."""

from __future__ import annotations

import threading
import time

import pytest

from retrieval.core.admission import Admission


def test_two_run_the_others_wait_in_arrival_order_told_their_place() -> None:
    gate = Admission(2)
    release = threading.Event()
    order: list[str] = []
    told: dict[str, list[int]] = {}
    lock = threading.Lock()

    def request(name: str) -> None:
        def on_wait(ahead: int) -> None:
            with lock:
                told.setdefault(name, []).append(ahead)

        with gate.enter(on_wait):
            with lock:
                order.append(name)
            release.wait(10)

    threads = []
    for n, name in enumerate(["a", "b", "c", "d", "e"], 1):
        thread = threading.Thread(target=request, args=(name,))
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 10
        while gate.running + gate.waiting < n or (n > 2 and name not in told):  # arrival order a, b, c, d, e
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert order == ["a", "b"] and gate.running == 2 and gate.waiting == 3
    assert told == {"c": [0], "d": [1], "e": [2]}
    release.set()
    for thread in threads:
        thread.join(10)
    assert order == ["a", "b", "c", "d", "e"]
    # its place only moved up as the others were admitted, each place told once
    assert told["e"][0] == 2 and told["e"] == sorted(set(told["e"]), reverse=True)
    assert gate.running == 0 and gate.waiting == 0


def test_a_request_that_goes_away_while_waiting_gives_up_its_place() -> None:
    gate = Admission(1)
    hold = threading.Event()
    admitted: list[str] = []

    def holder() -> None:
        with gate.enter():
            hold.wait(10)

    class Gone(Exception):
        pass

    def leaver() -> None:
        def on_wait(ahead: int) -> None:
            raise Gone()   # Streamlit stops a script that is rerun while it waits

        with pytest.raises(Gone):
            with gate.enter(on_wait):
                admitted.append("leaver")

    def patient() -> None:
        with gate.enter():
            admitted.append("patient")

    first = threading.Thread(target=holder)
    first.start()
    time.sleep(0.1)
    leaving = threading.Thread(target=leaver)
    leaving.start()
    leaving.join(5)
    waiting = threading.Thread(target=patient)
    waiting.start()
    time.sleep(0.2)
    assert gate.waiting == 1   # the leaver's ticket is gone: only the patient one waits
    hold.set()
    first.join(5)
    waiting.join(5)
    assert admitted == ["patient"] and gate.running == 0 and gate.waiting == 0


def test_zero_slots_means_the_cores() -> None:
    import os

    assert Admission(0).slots == max(1, os.cpu_count() or 1)

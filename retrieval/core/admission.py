"""How many questions one serving process works on at once, and the queue of the others, in the order they came.

A worker that starts every request the moment it arrives shares its cores among all of them: eight requests on two
cores each take four times as long, and a burst of a hundred leaves every user waiting half a minute with nothing
on the page. The :class:`Admission` gate lets ``slots`` requests run (by default the machine's cores: with one
torch thread per forward pass, :mod:`.threads`, a request uses about one core) and queues the others first come,
first served; a waiting request is told, at each look, how many requests are ahead of it, so the page can say so.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

#: Seconds between two looks of a waiting request (each tells it its place).
POLL_S = 0.25


def default_slots() -> int:
    """The machine's cores (at least 1): the requests that run at once when the setting says 0."""
    return max(1, os.cpu_count() or 1)


class Admission:
    """At most ``slots`` holders at once; the others wait in arrival order (a ticket each).

    Args:
        slots: requests run at once (``0``: :func:`default_slots`).
    """

    def __init__(self, slots: int = 0) -> None:
        self.slots = int(slots) or default_slots()
        self._tickets = itertools.count()
        self._running = 0
        self._waiting: list[int] = []
        self._cond = threading.Condition()

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextmanager
    def enter(self, on_wait: Callable[[int], None] | None = None) -> Iterator[float]:
        """Held while the request runs; yields the seconds it waited. While it waits, ``on_wait(ahead)`` is called
        at each look with the number of requests before it (those waiting with an earlier ticket)."""
        started = time.perf_counter()
        with self._cond:
            ticket = next(self._tickets)
            self._waiting.append(ticket)
            told = -1
            try:
                while not (self._running < self.slots and self._waiting[0] == ticket):
                    ahead = self._waiting.index(ticket)
                    if on_wait is not None and ahead != told:
                        told = ahead
                        self._cond.release()
                        try:
                            on_wait(ahead)
                        finally:
                            self._cond.acquire()
                        continue
                    self._cond.wait(POLL_S)
            except BaseException:  # the page went away (a rerun stops its script): its place is given up
                self._waiting.remove(ticket)
                self._cond.notify_all()
                raise
            self._waiting.pop(0)
            self._running += 1
            self._cond.notify_all()  # the next in line looks again now
        try:
            yield time.perf_counter() - started
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

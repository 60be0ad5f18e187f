"""Values loaded once per key and shared by every request of a process (models, their derived views).

A loaded key is read without any lock. A key not loaded yet is loaded by its first caller under that key's own
lock (double-checked), so only the callers of the same key wait for the load: a request that needs another
model, or none, never waits behind one being loaded (nor behind a re-index, which holds the workbench's lock).
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
_MISSING = object()


class LoadOnce(Generic[K, V]):
    """A dict of loaded values, each loaded once.

    Args:
        limit: keep at most this many values (the oldest is dropped first); ``None`` keeps every one.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._values: dict[K, V] = {}
        self._locks: dict[K, threading.Lock] = {}
        self._guard = threading.Lock()  # held only to look up or add a key's lock, or to store a value
        self._limit = limit

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def get(self, key: K, load: Callable[[], V]) -> V:
        """The value of ``key``, calling ``load()`` the first time (an exception is raised to that caller and
        nothing is kept, so the next caller loads again)."""
        value = self._values.get(key, _MISSING)  # one dict read: atomic, no lock
        if value is not _MISSING:
            return value  # type: ignore[return-value]
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            value = self._values.get(key, _MISSING)
            if value is _MISSING:
                value = load()
                with self._guard:
                    while self._limit is not None and len(self._values) >= self._limit:
                        old = next(iter(self._values))
                        self._values.pop(old)
                        self._locks.pop(old, None)
                    self._values[key] = value  # type: ignore[assignment]
            return value  # type: ignore[return-value]

"""A small LRU cache of generator lists, so configurations that differ only after the generators (fusion
method, rrf_k, rerank, top_k cut, dedup, gate) reuse the same BM25 and dense windows.

The key names everything a generator's output depends on: the index (its id names the chunks and the
embedding model), the side, the query text, the filters and the window. The cached value is the frozen
:class:`~retrieval.core.types.RankedList`, shared read-only. The cache measures what it saved: each entry keeps
the milliseconds its first computation took, and a hit adds them to ``saved_ms``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable, TypedDict


class CacheStats(TypedDict):
    """:meth:`ListCache.stats`: the hits and misses so far, and the milliseconds the hits saved."""

    hits: int
    misses: int
    saved_ms: float


class ListCache:
    """LRU of ``key → (value, ms)`` with hit / miss / saved-time counters.

    Args:
        max_entries: entries kept (the least recently used is dropped first).
    """

    def __init__(self, max_entries: int = 20_000) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be ≥ 1")
        self.max_entries = max_entries
        self._data: OrderedDict[Hashable, tuple[Any, float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.saved_ms = 0.0

    def get_or_run(self, key: Hashable, run: Callable[[], Any]) -> Any:
        """The cached value of ``key``, or ``run()``'s (timed and stored)."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                value, ms = self._data[key]
                self.hits += 1
                self.saved_ms += ms
                return value
        started = time.perf_counter()
        value = run()
        ms = (time.perf_counter() - started) * 1000
        with self._lock:
            self.misses += 1
            self._data[key] = (value, ms)
            if len(self._data) > self.max_entries:
                self._data.popitem(last=False)
        return value

    def stats(self) -> CacheStats:
        """``{"hits", "misses", "saved_ms"}`` so far."""
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "saved_ms": round(self.saved_ms, 1)}

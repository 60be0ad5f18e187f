"""The generators: for one query text, the BM25 window and the dense window (filters inside both).

:class:`QueryEncoder` embeds query texts through a small LRU cache (an A/B or a re-run of the same
question re-embeds nothing; whether the vector came from the cache is reported). :func:`generate` runs
both sides for one text; a side the tier skips, or whose search fails, comes back with ``skipped`` set.
An optional :class:`~retrieval.core.listcache.ListCache` is passed in per call (the evaluation shares lists
between configurations that differ only after the generators); it is never stored on a shared object.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..backends.embedders import Embedder
from ..backends.state import IndexState
from ..backends.reads import StoreRead, read_window
from ..core.filters import Filters
from ..core.listcache import ListCache
from ..core.reasons import Reason, declare
from ..core.timing import StageTimer
from ..core.types import RankedList
from .tiers import Tier

HYDE_DENSE_ONLY = declare("generate.hyde_dense_only", en="HyDE is dense only", pt="o HyDE é só denso")


class QueryEncoder:
    """Query (and HyDE passage) vectors from one embedder, with an LRU cache of query vectors.

    The lock guards the cache only: the embedding itself runs outside it, so several requests embed at once
    (an embedder whose engine is not re-entrant serialises its own calls: :class:`~retrieval.backends.embedders.FunctionEmbedder`).
    Two requests missing the same text at once both embed it; both get the same vector.

    Args:
        embedder: the loaded embedder.
        cache_size: query vectors kept.
    """

    #: Where the vectors come from (a key of the shared list cache: two sources never share a dense list).
    source = "embedder"

    def __init__(self, embedder: Embedder, cache_size: int = 256) -> None:
        self.embedder = embedder
        self.cache_size = cache_size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def query(self, text: str) -> tuple[np.ndarray, bool]:
        """``(unit vector, came from the cache)``."""
        with self._lock:
            if text in self._vectors:
                self._vectors.move_to_end(text)
                return self._vectors[text], True
        vector = self.embedder.embed_queries([text])[0]  # outside the lock
        with self._lock:
            self._vectors[text] = vector
            self._vectors.move_to_end(text)
            if len(self._vectors) > self.cache_size:
                self._vectors.popitem(last=False)
        return vector, False

    def passage(self, text: str) -> np.ndarray:
        """A passage vector (HyDE's hypothetical answer is embedded as a passage); not cached."""
        return self.embedder.embed_passages([text])[0]

    def source_of(self, text: str) -> str:
        """Where :meth:`query`'s vector of ``text`` comes from."""
        return self.source

    def clear(self) -> None:
        """Forget the cached query vectors (so the next request pays its embedding)."""
        with self._lock:
            self._vectors.clear()


class SharedQuestionEncoder:
    """The question's vector from the reader's own pass over it: one encoding of the question serves the dense
    search and the reader (which reads the question's token states from the same pass).

    Only for an embedder the reader's encoder reproduces (e5-small: the reader is built from its weights; the
    vectors agree to a cosine of 0.9999 at the median). A question longer than the reader reads or that its
    vocabulary splits otherwise, and every HyDE passage, are embedded by the embedder as before.

    Args:
        vector_of: ``text → (unit vector or None, came from the cache)`` (the reader's ``question_vector``).
        fallback: the embedder's encoder.
    """

    source = "reader"

    def __init__(self, vector_of: Callable[[str], tuple[np.ndarray | None, bool]], fallback: QueryEncoder) -> None:
        self._vector_of, self.fallback = vector_of, fallback

    def query(self, text: str) -> tuple[np.ndarray, bool]:
        """``(unit vector, came from the cache)``."""
        vector, cached = self._vector_of(text)
        return (vector, cached) if vector is not None else self.fallback.query(text)

    def passage(self, text: str) -> np.ndarray:
        return self.fallback.passage(text)

    def source_of(self, text: str) -> str:
        """``"reader"``, or ``"embedder"`` for a text the reader's vector is not taken for."""
        return self.source if self._vector_of(text)[0] is not None else self.fallback.source

    def clear(self) -> None:
        self.fallback.clear()


@dataclass(frozen=True)
class Generated:
    """The two windows of one query text, and its query vector (``None`` when dense did not run)."""

    lexical: RankedList
    dense: RankedList
    vector: np.ndarray | None
    vector_cached: bool | None
    #: The dense search ran and failed (the request drops to ``lexical_only``): why.
    dense_error: Reason | None = None


class _FailedRead(Exception):
    """Carries a failed :class:`StoreRead` out of :meth:`ListCache.get_or_run`, so that it is not cached."""

    def __init__(self, read: StoreRead) -> None:
        super().__init__(read.reason.text() if read.reason else "")
        self.read = read


def _shared_read(lists: ListCache | None, key: tuple, read: Callable[[], StoreRead]) -> StoreRead:
    """``read()`` through the shared list cache when there is one; only a successful read is cached."""
    if lists is None:
        return read()

    def run() -> Any:
        got = read()
        if got.value is None:
            raise _FailedRead(got)
        return got.value

    try:
        return StoreRead(lists.get_or_run(key, run))
    except _FailedRead as failed:
        return failed.read


def generate(state: IndexState, encoder: QueryEncoder | SharedQuestionEncoder | None, text: str, flt: Filters,
             window: int, tier: Tier, reason: Reason, *, lists: ListCache | None = None,
             timer: StageTimer | None = None, hyde: bool = False) -> Generated:
    """The lexical and dense windows for one query text (filters applied inside both generators).

    Args:
        tier: the planned tier: a side it does not run is skipped (``reason`` says why).
        lists: a shared list cache, or ``None``.
        timer: times ``lexical``, ``embed_query`` and ``dense`` (the original query only).
        hyde: ``text`` is a hypothetical answer: dense only, embedded as a passage.
    """
    timed: Callable[[str], Any] = timer.stage if timer is not None else (lambda name: nullcontext())

    def shared(key: tuple, run: Callable[[], RankedList]) -> RankedList:
        return lists.get_or_run(key, run) if lists is not None else run()

    if not tier.lexical or hyde:
        lexical = RankedList("lexical", "bm25", (), skipped=reason if not hyde else HYDE_DENSE_ONLY())
        if timer is not None:
            timer.skip("lexical")
    else:
        with timed("lexical"):
            lexical = shared(("lexical", state.index_id, text, flt, window),
                             lambda: state.lexical.search(text, flt, window))
    vector, cached = None, None
    if not tier.dense:
        dense = RankedList("dense", "cosine", (), skipped=reason)
        if timer is not None:
            timer.skip("embed_query", "dense")
        return Generated(lexical, dense, None, None)
    store = state.store
    assert encoder is not None and store is not None  # a tier with the dense side is planned with both
    with timed("embed_query"):
        vector, cached = (encoder.passage(text), False) if hyde else encoder.query(text)
    with timed("dense"):  # guarded: a failed search is a reason, not a raise (and is never cached)
        read = _shared_read(lists, ("dense", state.index_id, text, hyde, encoder.source, flt, window),
                            lambda: read_window(store, vector, flt, window))
    if read.value is None:  # the request carries on one tier down, saying why
        why = read.reason
        return Generated(lexical, RankedList("dense", "cosine", (), skipped=why), None, cached, why)
    return Generated(lexical, read.value, vector, cached)

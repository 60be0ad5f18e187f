"""How a request reads a dense store, whichever backend holds it: the :class:`DenseStore` protocol (Chroma's
:class:`~retrieval.backends.chroma.VectorStore`, Milvus', the benchmark's in-memory store) and the guarded reads.

A request reads the store only through :func:`guarded` (:func:`read_vectors`, :func:`read_window`): a store
that fails comes back as a :class:`StoreRead` that says why, and the stage that read it drops with that reason.
A native library's panic is caught too; only :data:`INTERRUPTS` go on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Generic, Mapping, Protocol, Sequence, TypeVar

import numpy as np

from ..core.filters import Filters
from ..core.reasons import Declared, Reason, declare, raw
from ..core.types import RankedList

log = logging.getLogger(__name__)
T = TypeVar("T")


#: What a boundary that catches every failure of a native library re-raises: the user's interrupt and the
#: interpreter's own exits. Anything else (a Rust panic: ``pyo3_runtime.PanicException``) becomes a reason.
INTERRUPTS = (KeyboardInterrupt, SystemExit, GeneratorExit)


class DenseStore(Protocol):
    """What a request reads from a dense store (Chroma here; the benchmark's in-memory HNSW store, Milvus).

    ``query`` returns the cosine window (stage ``dense``, filters applied inside the search);
    ``vectors`` the stored unit vectors of the given chunks (absent ids are left out); ``drop`` removes the
    corpus' vectors (an uploaded collection emptied of its last document).
    """

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList: ...

    def vectors(self, chunk_ids: Sequence[str]) -> Mapping[str, np.ndarray]: ...

    def count(self) -> int: ...

    def drop(self) -> None: ...


@dataclass(frozen=True)
class StoreRead(Generic[T]):
    """What one guarded read of the vector store gave: its ``value``, or ``None`` and why (``reason``).

    The request-path stages read the store only through :func:`guarded` (:func:`read_vectors`,
    :func:`read_window`), so a store that fails drops the stage that read it, with this reason in the trace,
    instead of raising out of the request.
    """

    value: T | None
    reason: Reason | None = None

    @property
    def ok(self) -> bool:
        """The read succeeded (``value`` holds its result)."""
        return self.reason is None


#: The leads of a failed read's reason (``what``): the error follows.
VECTORS_UNAVAILABLE = declare("store.vectors_unavailable", en="stored vectors unavailable: {error}",
                              pt="vetores armazenados indisponíveis: {error}")
SEARCH_FAILED = declare("store.search_failed", en="dense search failed: {error}", pt="a busca densa falhou: {error}")
NO_STORE = declare("store.none", en="no vector store", pt="sem repositório de vetores")
STORE_EMPTY = declare("store.empty", en="the vector store is empty", pt="o repositório de vetores está vazio")


def guarded(read: Callable[[], T], what: Declared,
            damage: Callable[[BaseException], Reason | None] | None = None) -> StoreRead[T]:
    """Run one store read; any failure the store raises, a native library's panic included (any
    ``BaseException`` but :data:`INTERRUPTS`), comes back as ``StoreRead(None, reason)``.

    Args:
        read: the read, e.g. ``lambda: store.vectors(ids)``.
        what: the reason's declared lead (:data:`VECTORS_UNAVAILABLE`…, a field ``error``); the reason is
            ``"<what>: <ExceptionClass>: <message, first 200 characters>"`` (one line, logged once).
        damage: ``failure -> DAMAGED reason or None`` (the store's :meth:`VectorStore.damage`): a damaged store's
            reason is nested as the ``error``, so it names the rebuild.
    """
    try:
        return StoreRead(read())
    except BaseException as exc:  # noqa: BLE001 - the caller drops its stage with this reason
        if isinstance(exc, INTERRUPTS):
            raise
        found = None
        if damage is not None:
            try:
                found = damage(exc)
            except Exception:  # noqa: BLE001 - a diagnosis that fails proves nothing
                found = None
        reason = what(error=found or raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))
        log.warning(reason.text())
        return StoreRead(None, reason)


def read_vectors(store: DenseStore | None, chunk_ids: Sequence[str],
                 what: Declared = VECTORS_UNAVAILABLE) -> StoreRead[Mapping[str, np.ndarray]]:
    """The stored unit vectors of ``chunk_ids`` (absent ids left out), read through :func:`guarded`.

    No ids: an empty mapping without a read. No store: unavailable, reason ``"<what>: no vector store"``.
    """
    if not chunk_ids:
        return StoreRead({})
    if store is None:
        return StoreRead(None, what(error=NO_STORE()))
    ids = list(chunk_ids)
    return guarded(lambda: store.vectors(ids), what, getattr(store, "damage", None))


def read_window(store: DenseStore, vector: np.ndarray, filters: Filters, window: int,
                what: Declared = SEARCH_FAILED) -> StoreRead[RankedList]:
    """The store's cosine window (:meth:`DenseStore.query`), read through :func:`guarded`."""
    return guarded(lambda: store.query(vector, filters, window), what, getattr(store, "damage", None))

"""Exact cosine search over the stored vectors of a small corpus (:class:`ExactSearch`): the same dense list in
every process, where Chroma's HNSW is approximate and not reproducible between processes."""

from __future__ import annotations

import threading
from typing import Any, Mapping, Sequence

import numpy as np

from ...core.filters import Filters
from ...core.types import Chunk, RankedList, ScoredItem
from ..reads import STORE_EMPTY
from .rows import _pages


class ExactSearch:
    """Exact cosine search over the stored vectors of a corpus small enough to hold them in memory
    (``dense_exact_up_to``): every vector of the searched collections that the filters admit is compared, ties
    broken by chunk id, so a question gets the same dense list in every process.

    Why: Chroma's HNSW graph is approximate, and the embedded store rebuilds part of it when a process opens the
    collection (its recent writes are inserted again, by several threads), so the same query vector can get a
    different list in another process; ``hnsw_ef_search`` raises the approximate search's recall, not its
    reproducibility. Exact search costs memory (4 bytes × dimensions × chunks: 77 MB at 50,000 chunks of e5-small)
    and a matrix product per query (measured 2.1 ms at 12,000 chunks, 1.6 ms of product at 50,000, one core:
    docs/evaluation.md, "Numbers that repeat").

    The vectors are read from the collections (``page`` rows a request) on the first query after a sync; the
    filter masks of the last 64 filters are kept.

    Args:
        collections: the layout's collections (name → Chroma collection), as the sync left them.
        catalog: chunk id → chunk of what the sync stored (ids written since by another process are left out).
    """

    def __init__(self, collections: Mapping[str, Any], catalog: Mapping[str, Chunk], page: int = 5000,
                 masks: int = 64) -> None:
        self.collections, self.catalog, self.page, self.masks_kept = collections, catalog, page, masks
        self._lock = threading.Lock()
        self._loaded: dict[str, tuple[list[str], np.ndarray]] = {}
        self._masks: dict[tuple[str, Filters], np.ndarray] = {}

    def _matrix(self, name: str) -> tuple[list[str], np.ndarray]:
        """The collection's chunk ids (sorted) and their unit vectors, read once."""
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            found = {cid: vec for got in _pages(self.collections[name], ["embeddings"], self.page)
                     for cid, vec in zip(got["ids"], got["embeddings"]) if cid in self.catalog}
            ids = sorted(found)
            matrix: np.ndarray = (np.asarray([found[cid] for cid in ids], dtype=np.float32) if ids
                                  else np.zeros((0, 0), dtype=np.float32))
            if len(ids):
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                matrix = matrix / np.where(norms > 0, norms, 1.0)
            self._loaded[name] = (ids, matrix)
            return ids, matrix

    def _mask(self, name: str, ids: Sequence[str], filters: Filters) -> np.ndarray | None:
        """Which rows the filters admit (``None``: all, no filter)."""
        if not filters.clauses:
            return None
        key = (name, filters)
        with self._lock:
            if key in self._masks:
                return self._masks[key]
        mask = np.fromiter((filters.matches(self.catalog[cid].metadata) for cid in ids), dtype=bool, count=len(ids))
        with self._lock:
            if len(self._masks) >= self.masks_kept:
                self._masks.pop(next(iter(self._masks)))
            self._masks[key] = mask
        return mask

    def query(self, vector: np.ndarray, names: Sequence[str], filters: Filters, window: int) -> RankedList:
        """The ``window`` chunks of collections ``names`` nearest to ``vector`` among those ``filters`` admits
        (filters checked exactly in value and type, as :meth:`VectorStore.query` re-checks them)."""
        q = np.asarray(vector, dtype=np.float32).ravel()
        norm = float(np.linalg.norm(q))
        q = q / norm if norm > 0 else q
        rows: list[tuple[float, str]] = []
        stored = 0
        for name in names:
            ids, matrix = self._matrix(name)
            stored += len(ids)
            if not ids:
                continue
            mask = self._mask(name, ids, filters)
            at = np.arange(len(ids)) if mask is None else np.flatnonzero(mask)
            if not len(at):
                continue
            sims = matrix[at] @ q
            if len(at) > window:  # the window's worst similarity, then every row at least as similar (ties kept)
                cut = np.partition(sims, len(sims) - window)[len(sims) - window]
                keep = np.flatnonzero(sims >= cut)
            else:
                keep = np.arange(len(at))
            rows += [(float(sims[i]), ids[at[i]]) for i in keep]
        if not rows and names and stored == 0:
            return RankedList("dense", "cosine", (), note=STORE_EMPTY())
        rows.sort(key=lambda r: (-r[0], r[1]))
        catalog = self.catalog
        return RankedList("dense", "cosine", tuple(ScoredItem(cid, catalog[cid].parent_id, rank, sim)
                                                   for rank, (sim, cid) in enumerate(rows[:window], start=1)))

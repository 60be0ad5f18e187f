"""An in-memory HNSW store (Chroma's own hnswlib fork, Chroma's HNSW parameters) behind the pipeline's
dense-store protocol (:class:`retrieval.backends.reads.DenseStore`: ``query``, ``vectors``, ``count``): used above the size where Chroma's ingest is too
slow on this machine (hours for 1M subchunks)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .synthetic import SEED


class HnswMemoryStore:
    """Dense store for synthetic corpora too large for Chroma's ingest on this machine (about 110-400 chunks/s
    here: hours for 1M): Chroma's own fork of hnswlib in memory, with Chroma's default HNSW parameters (cosine,
    M = 16, ef_construction = 100, ef = 100). It times the HNSW search alone: no Chroma metadata store, no
    persistence. Same interface as :class:`retrieval.backends.chroma.VectorStore` for what a request uses."""

    name = "hnswlib in memory (Chroma's parameters)"

    def __init__(self, chunks: Sequence[Any], matrix: np.ndarray, threads: int = 2) -> None:
        import hnswlib

        self.chunks, self.matrix = chunks, matrix
        self.position = {c.chunk_id: i for i, c in enumerate(chunks)}
        self.index = hnswlib.Index(space="cosine", dim=matrix.shape[1])
        self.index.init_index(max_elements=len(chunks), M=16, ef_construction=100, random_seed=SEED)
        self.index.set_num_threads(threads)
        self.index.add_items(matrix, np.arange(len(chunks)))
        self.index.set_ef(100)
        self._masks: dict[Any, np.ndarray] = {}

    def set_ef_search(self, ef_search: int) -> None:
        self.index.set_ef(int(ef_search))

    def count(self) -> int:
        return len(self.chunks)

    def query(self, vector: np.ndarray, filters: Any, window: int) -> Any:
        from retrieval.core.types import RankedList, ScoredItem

        allowed = None
        if filters.clauses:
            allowed = np.ones(len(self.chunks), dtype=bool)
            for clause in filters.clauses:  # one mask per clause, built once (as a metadata index would be)
                mask = self._masks.get(clause)
                if mask is None:
                    key, values = clause
                    mask = self._masks[clause] = np.fromiter((c.metadata.get(key) in values for c in self.chunks),
                                                             bool, len(self.chunks))
                allowed &= mask
        k = min(window, len(self.chunks) if allowed is None else int(allowed.sum()))
        if k == 0:
            return RankedList("dense", "cosine", ())
        labels, dists = self.index.knn_query(np.asarray(vector, np.float32)[None, :], k=k,
                                             filter=None if allowed is None else (lambda i: bool(allowed[i])))
        items = tuple(ScoredItem(self.chunks[j].chunk_id, self.chunks[j].parent_id, rank, 1.0 - float(d))
                      for rank, (j, d) in enumerate(zip(labels[0].tolist(), dists[0].tolist()), start=1))
        return RankedList("dense", "cosine", items)

    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {cid: self.matrix[self.position[cid]] for cid in chunk_ids if cid in self.position}


def _passage_matrix(embedder: Any, chunks: Sequence[Any], batch: int = 4096) -> np.ndarray:
    """Passage vectors of every chunk, ``(len(chunks), dim)`` float32, embedded ``batch`` texts at a time."""
    return np.vstack([embedder.embed_passages([c.indexed_text for c in chunks[i : i + batch]])
                      for i in range(0, len(chunks), batch)])

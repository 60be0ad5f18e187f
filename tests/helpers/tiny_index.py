"""A tiny index for the tests of one stage: four documents of two tenants indexed without an embedder (BM25 only),
hand-built ranked lists, and a store whose cosines are fixed in advance."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import numpy as np

from retrieval.backends.base import OK as STORE_OK
from retrieval.core.filters import Filters
from retrieval.core.types import RankedList, ScoredItem
from retrieval.pipeline.index import build_index
from retrieval.settings import Settings

DOCS = [
    {"id": "a", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas após o pagamento.", "metadata": {"tenant": "t1"}},
    {"id": "b", "title": "Reembolso", "text": "O reembolso leva 7 dias. Veja também o PX-9.", "metadata": {"tenant": "t1"}},
    {"id": "c", "title": "PX-9", "text": "O PX-9 tem garantia de um ano.", "metadata": {"tenant": "t1"}},
    {"id": "d", "title": "Outro", "text": "Prazo de entrega do cofre.", "metadata": {"tenant": "t2"}},
]


def items(*ids: str) -> tuple[ScoredItem, ...]:
    """One item per parent id, in order: chunk ``<id>#0``, rank r, score 1/r."""
    return tuple(ScoredItem(f"{p}#0", p, r, 1.0 / r) for r, p in enumerate(ids, start=1))


def write_docs(path: Path, docs: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
    return path


def index_of(path: Path, settings: Settings | None = None):
    """The index state of the corpus at ``path``, built with no embedder (no vector store)."""
    return build_index(settings or Settings(_env_file=None), path, None, "no embedder in this test",
                       lambda: (None, "unused"), threading.RLock())


def tiny_state(folder: Path):
    """:data:`DOCS` written in ``folder`` and indexed (:func:`index_of`)."""
    return index_of(write_docs(folder / "corpus.jsonl", DOCS))


def with_store(state, store):
    """``state`` with ``store`` as its vector store, reported usable."""
    return dataclasses.replace(state, store=store, store_reason=STORE_OK())


class FakeStore:
    """Dense results fixed in advance (cosines), filtered by tenant like the real store; ``reads`` records every
    read of stored vectors."""

    def __init__(self, chunks, cosines: dict[str, float], fail: bool = False) -> None:
        self.chunks = {c.chunk_id: c for c in chunks}
        self.cosines, self.fail, self.reads = cosines, fail, []

    def query(self, vector, flt: Filters, window: int) -> RankedList:
        if self.fail:
            raise ConnectionError("store gone")
        tenants = flt.get("tenant")
        kept = [(cid, s) for cid, s in sorted(self.cosines.items(), key=lambda x: -x[1])
                if not tenants or self.chunks[cid].metadata.get("tenant") in tenants][:window]
        return RankedList("dense", "cosine", tuple(ScoredItem(cid, self.chunks[cid].parent_id, r, s)
                                                   for r, (cid, s) in enumerate(kept, start=1)))

    def vectors(self, ids):
        self.reads.append(list(ids))
        return {cid: np.array([0.5, 0.5]) for cid in ids}

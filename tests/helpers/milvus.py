"""What the Milvus tests share (the Lite file and the server): a small two-tenant corpus with a hostile filter value,
its Milvus store opened, a cheap 8-dimension embedder, and the check that a request gives the local backend's lists."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.fakes import HashEmbedder

from retrieval.backends.milvus import LITE, MilvusStore, open_client, tenant_stats
from retrieval.core.filters import field_types
from retrieval.ingest.corpus import chunk_documents, load_corpus

HOSTILE = 'manual" or 1==1 or tenant == "ventura\' \\ '
EMBEDDER = HashEmbedder(dim=8, name="fake-8")


def embed(texts: list[str]) -> np.ndarray:
    """8-dimension vectors of :data:`EMBEDDER` (the dense values do not matter here)."""
    return EMBEDDER.embed_passages(texts)


def ids(lst) -> list[str]:
    return [i.chunk_id for i in lst.items]


def assert_same_as_local(local, other, question, filters, label) -> None:
    """One request on the local backend and on ``other`` (a Milvus backend): the same tier and reason, the
    same lexical list (scores and per-term parts within 1e-5), dense list (cosines within 1e-5), fused list and
    final chunks."""
    a, b = local.ask(question, dict(filters)), other.ask(question, dict(filters))
    assert (b.tier, b.tier_reason) == (a.tier, a.tier_reason), label
    assert ids(b.lexical) == ids(a.lexical), label
    for x, y in zip(a.lexical.items, b.lexical.items):
        assert y.score == pytest.approx(x.score, rel=1e-5) and set(y.terms) == set(x.terms)
        assert all(y.terms[t] == pytest.approx(x.terms[t], rel=1e-5) for t in x.terms)
    assert ids(b.dense) == ids(a.dense), label
    assert [i.score for i in b.dense.items] == pytest.approx([i.score for i in a.dense.items], abs=1e-5)
    assert ids(b.fused) == ids(a.fused), label
    assert [f.chunk_id for f in b.final] == [f.chunk_id for f in a.final], label
    assert b.models["vector_store"] == "milvus"


def write_corpus(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return path


def small_docs(kind_a: str = HOSTILE) -> list[dict]:
    return [
        {"id": "a1", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas.", "metadata": {"tenant": "lumen", "doc_type": kind_a}},
        {"id": "a2", "title": "Garantia", "text": "A garantia do PX-7 é de um ano.", "metadata": {"tenant": "lumen", "doc_type": "manual"}},
        {"id": "b1", "title": "Ativação", "text": "O VX-2 é ativado em 48 horas.", "metadata": {"tenant": "ventura", "doc_type": "manual"}},
        {"id": "b2", "title": "Reembolso", "text": "O reembolso do VX-2 leva 7 dias.", "metadata": {"tenant": "ventura", "doc_type": "faq"}},
    ]


def open_store(tmp_path: Path, docs: list[dict], client=None, name: str = "c.jsonl", features=LITE):
    chunks = chunk_documents(load_corpus(write_corpus(tmp_path / name, docs)), 120, 30)
    client = client or open_client(tmp_path / "m.db")
    stats = tenant_stats(chunks, "tenant")
    store = MilvusStore(client, "corpus", "fake-8", "v", tenant_field="tenant", types=field_types(chunks),
                        features=features, server=features is not LITE)
    return client, chunks, stats, store

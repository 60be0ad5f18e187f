"""The benchmark's synthetic corpus, queries and vectors: reproducible, and structured like real data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench.run import DEFAULT_TIER, markdown
from bench.synthetic import SyntheticEmbedder, synthetic_corpus, synthetic_questions


class _Real:
    """Stands for the real query model: records that the forward pass was paid."""

    name = "e5-small"

    def __init__(self) -> None:
        self.calls = 0

    def embed_queries(self, texts):
        self.calls += 1
        return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("syn") / "syn.jsonl"
    return synthetic_corpus(path, 300)


def test_synthetic_corpus_is_reproducible_and_labelled_by_shape(corpus, tmp_path):
    again = synthetic_corpus(tmp_path / "again.jsonl", 300)
    assert corpus.read_bytes() == again.read_bytes()
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows[:3]] == ["syn-0", "syn-1", "syn-2"]
    assert all(r["text"].startswith("Produto PX-") for r in rows)
    assert {r["metadata"]["year"] for r in rows} == set(range(2020, 2026))


def test_synthetic_questions_use_words_of_their_document(corpus):
    questions = synthetic_questions(corpus, 300, n=20)
    texts = [json.loads(line)["text"].lower() for line in corpus.read_text(encoding="utf-8").splitlines()]
    assert len(questions) == 20 and questions == synthetic_questions(corpus, 300, n=20)
    for question, filters in questions:
        assert filters == {}
        words = question.lower().split()
        assert 3 <= len([w for w in words if not w.startswith("px-")]) <= 6
        assert any(all(w in text for w in words) for text in texts), question


def test_synthetic_vectors_are_normalized_and_near_for_shared_words():
    real = _Real()
    emb = SyntheticEmbedder(real)
    a, b, c = emb.embed_passages(["deila nodourivu tranho", "deila nodourivu ebei", "PX-375"])
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-5)
    unrelated = emb.embed_passages(["choribra ouceifei lhopri"])[0]
    assert float(a @ b) > float(a @ unrelated) + 0.2
    assert np.allclose(emb.embed_passages(["PX-375"])[0], c)  # codes get a fixed hashed vector
    before = real.calls
    q = emb.embed_queries(["deila nodourivu tranho"])[0]
    assert real.calls == before + 1  # the query still pays the real model's forward pass
    assert np.allclose(q, a)  # but searches with the synthetic vector


def test_markdown_row_per_corpus_and_failures_named():
    tier = {f"{s}_{p}": v for s in ("lexical", "embed_query", "dense", "total") for p, v in (("p50", 1.0), ("p95", 2.0))}
    ok = {"corpus": "lab", "chunks": 81, "tiers": {DEFAULT_TIER: {**tier, "non_model_share": 0.125}},
          "hnsw": {"recall_mean": 1.0, "filtered_p50_ms": 3.0}, "langchain": {"skipped": "off"},
          "build_to_raw_ratio": 0.9, "reindex_unchanged_s": 0.1, "reindex_reembedded": 0, "peak_rss_mb": 378.0}
    table = markdown({"corpora": [ok, {"corpus": "synthetic-100000", "error": "subprocess exited with 1"}]})
    lines = table.strip().splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| lab | 81 | 1.0/2.0 | 1.0/2.0 | 1.0/2.0 | 1.0/2.0 | 12% | 0.9 | 0.1 s (0) | 378 | 1.0 | 3.0 | n/a |")
    assert "failed: subprocess exited with 1" in lines[3]


def test_tenant_layouts_bench_times_both_layouts_on_the_same_lists(tmp_path):
    """bench/tenants.py on 300 SYNTHETIC chunks: six tenants drawn independently of the year, both layouts built
    and timed, the same lists in both (exact at this size), the floor row at ×1.0, one README row per query."""
    from bench.tenants import TENANTS, compare_layouts, with_tenants
    from bench.tenants import markdown as tenants_markdown
    from retrieval.ingest.corpus import chunk_documents, load_corpus

    chunks = with_tenants(chunk_documents(load_corpus(synthetic_corpus(tmp_path / "c.jsonl", 300)), 120, 30))
    assert chunks == with_tenants(chunks) and {c.metadata["tenant"] for c in chunks} == {f"t{i}" for i in range(TENANTS)}
    assert len({(c.metadata["tenant"], c.metadata["year"]) for c in chunks}) > 30  # not tied to the year
    out = compare_layouts(300, queries=12, rounds=1, cache=tmp_path)
    assert out["layouts"]["per tenant"]["collections"] == TENANTS and out["layouts"]["one collection"]["collections"] == 1
    assert out["same_list_tenant"] == 1.0 and out["rows"]["tenant (per tenant)"]["recall"] == 1.0
    assert out["rows"]["floor: tenant's collection, unfiltered (Chroma alone)"]["x_floor_p50"] == 1.0
    table = tenants_markdown({"sizes": [out]}).strip().splitlines()
    assert len(table) == 2 + len(out["rows"]) and table[2].startswith("| 300 (1/6) |")

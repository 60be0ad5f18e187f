"""Traces built by hand as the pipeline builds them: a real :class:`~retrieval.pipeline.trace.Trace` whose lists,
gate and answer a test sets, written out by ``to_dict()`` (the trace JSON the app, the reports and the
explanations read)."""

from __future__ import annotations

from typing import Any

from retrieval.core.reasons import raw
from retrieval.core.types import FinalItem, Query, RankedList, ScoredItem
from retrieval.pipeline.trace import Trace
from retrieval.stages.answer import Answer

K = 60
QUESTION = "Quando o PX-7 é ativado após o pagamento?"


def item(cid: str, rank: int, score: float, **extra) -> dict:
    """One item of a trace's list as the trace JSON writes it (its parent is the id before ``#``)."""
    return {"chunk_id": cid, "parent_id": cid.split("#")[0], "rank": rank, "score": score, **extra}


def _scored(cid: str, rank: int, score: float, **extra) -> ScoredItem:
    return ScoredItem(cid, cid.split("#")[0], rank, score, **extra)


def grid_trace() -> dict[str, Any]:
    """BM25 finds a#0, b#0, d#0, e#0; dense finds a#1, b#0, a#0, c#0. The fusion takes both lists except e#0's
    (as if its list had weight 0). The learned ranker reads the fused top 4 (reranker_max_input = 4), lifts a#1
    over a#0 (same parent: a#0 is cut by the dedup), keeps b#0 and d#0; top_k = 2 keeps a#1 and b#0, and the
    gate (cosine ≥ 0.8) refuses b#0 (0.79). c#0 (fused #5) was never reranked. The answer cites a#1."""
    lexical = RankedList("lexical", "bm25", (
        _scored("a#0", 1, 5.0, terms={"px-7": 3.0, "ativado": 2.0}),
        _scored("b#0", 2, 3.0, terms={"ativado": 3.0}),
        _scored("d#0", 3, 2.0, terms={"pagamento": 2.0}),
        _scored("e#0", 4, 1.0, terms={"pagamento": 1.0})))
    dense = RankedList("dense", "cosine", (
        _scored("a#1", 1, 0.93), _scored("b#0", 2, 0.79), _scored("a#0", 3, 0.78), _scored("c#0", 4, 0.70)))
    fused = RankedList("fused", "rrf", (
        _scored("a#0", 1, 1 / (K + 1) + 1 / (K + 3), contributions={"bm25": 1 / (K + 1), "dense": 1 / (K + 3)},
                ranks={"bm25": 1, "dense": 3}),
        _scored("b#0", 2, 1 / (K + 2) + 1 / (K + 2), contributions={"bm25": 1 / (K + 2), "dense": 1 / (K + 2)},
                ranks={"bm25": 2, "dense": 2}),
        _scored("a#1", 3, 1 / (K + 1), contributions={"dense": 1 / (K + 1)}, ranks={"dense": 1}),
        _scored("d#0", 4, 1 / (K + 3), contributions={"bm25": 1 / (K + 3)}, ranks={"bm25": 3}),
        _scored("c#0", 5, 1 / (K + 4), contributions={"dense": 1 / (K + 4)}, ranks={"dense": 4})))
    reranked = RankedList("reranked", "ltr", (
        _scored("a#1", 1, 1.0, fused_rank=3,
                feature_contributions={"cov_chunk": 0.9, "dense_cos": 0.3, "bm25_norm": -0.1, "bias": -0.1}),
        _scored("b#0", 2, 0.6, fused_rank=2,
                feature_contributions={"cov_chunk": 0.2, "dense_cos": 0.1, "bm25_norm": 0.4, "bias": -0.1}),
        _scored("a#0", 3, 0.2, fused_rank=1,
                feature_contributions={"cov_chunk": 0.1, "dense_cos": 0.0, "bm25_norm": 0.2, "bias": -0.1}),
        _scored("d#0", 4, 0.1, fused_rank=4,
                feature_contributions={"cov_chunk": 0.1, "dense_cos": 0.0, "bm25_norm": 0.1, "bias": -0.1})))
    trace = Trace(
        question=QUESTION,
        settings={"top_k": 2, "rrf_k": K, "fusion": "rrf", "dedup": "parent", "reranker_max_input": 4,
                  "mmr_lambda": None},
        models={"reranker": "ltr", "reranker_kind": "ltr", "reranker_status": "loaded"},
        index_id="chunks-120-30",
        queries=[Query(QUESTION, "original")],
        filters={"tenant": "lumen"},
        tier="full",
        tier_why=raw("reranker loaded"),
        lexical=lexical, dense=dense, fused=fused, reranked=reranked,
        selected=(_scored("a#1", 1, 1.0), _scored("b#0", 2, 0.6)),
        final=[FinalItem("a#1", "a", 1, 1.0, 0.93, "…")],
        lost_by_reranker=[],
        gate={"kind": "cosine", "threshold": 0.8, "rejected": 1, "missing_codes": [], "reason": "ok"},
        answer=Answer("Abra um chamado [1].", [], ["a#1"], False, "extractive"),
        timings_ms={"total": 12.0},
        costs={},
    )
    return trace.to_dict()

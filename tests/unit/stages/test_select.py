"""Selection (retrieval/stages/select.py): dedup, top_k, MMR over stored vectors, and what the reranker lost."""

from __future__ import annotations

import numpy as np

from retrieval.core.types import RankedList, ScoredItem
from retrieval.stages.select import dedup, lost_by_reranker, select


def test_select_dedup_topk_mmr_and_lost_by_reranker():
    fused = RankedList("fused", "rrf", (ScoredItem("a#0", "a", 1, 0.9), ScoredItem("a#1", "a", 2, 0.8),
                                        ScoredItem("b#0", "b", 3, 0.7), ScoredItem("c#0", "c", 4, 0.1)))
    assert [i.chunk_id for i in dedup(fused.items, "parent")] == ["a#0", "b#0", "c#0"]
    plain = select(fused, "chunk", 2, 4, None, None)
    assert [i.chunk_id for i in plain.items] == ["a#0", "a#1"] and plain.note is None
    same = {"a#0": np.array([1.0, 0.0]), "a#1": np.array([1.0, 0.0]), "b#0": np.array([0.0, 1.0]),
            "c#0": np.array([0.0, 1.0])}

    class Stored:
        def vectors(self, ids):
            return {i: same[i] for i in ids}

    # λ = 0.5: after a#0, its twin a#1 is fully redundant, so b#0 comes next.
    diverse = select(fused, "chunk", 2, 4, 0.5, Stored())
    assert [i.chunk_id for i in diverse.items] == ["a#0", "b#0"] and diverse.note is None
    reranked = RankedList("reranked", "x", (ScoredItem("c#0", "c", 1, 1.0, fused_rank=4),
                                            ScoredItem("a#0", "a", 2, 0.5, fused_rank=1)))
    assert lost_by_reranker(fused, reranked, "parent", 2) == [
        {"chunk_id": "b#0", "parent_id": "b", "fused_rank": 3, "reranked_rank": None, "reader": None}]
    assert lost_by_reranker(fused, RankedList("reranked", "none"), "parent", 2) == []
    # What the judge's reader read comes with the lost entry; when the reranker is the reader, its own score.
    assert lost_by_reranker(fused, reranked, "parent", 2, {"b#0": 0.71234, "a#0": 0.9})[0]["reader"] == 0.7123
    by_reader = RankedList("reranked", "reader (MaxSim over e5 token states)",
                           (ScoredItem("c#0", "c", 1, 0.8, fused_rank=4), ScoredItem("a#0", "a", 2, 0.7, fused_rank=1),
                            ScoredItem("b#0", "b", 3, 0.6, fused_rank=3)))
    assert lost_by_reranker(fused, by_reader, "parent", 2) == [
        {"chunk_id": "b#0", "parent_id": "b", "fused_rank": 3, "reranked_rank": 3, "reader": 0.6}]

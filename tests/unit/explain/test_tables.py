"""The fused → reranked movement chart's statuses read the final list (after the dedup by parent and the gate),
so they agree with the chunks the answer used."""

from __future__ import annotations

from retrieval.explain import tables
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict


def _item(chunk_id: str, rank: int, **extra):
    return {"chunk_id": chunk_id, "parent_id": chunk_id.split("#")[0], "rank": rank, "score": 1.0 / rank, **extra}


def _trace(final_ids, dedup="parent"):
    fused = ["a#0", "a#1", "b#0", "c#0", "d#0"]
    reranked = ["a#1", "a#0", "b#0", "d#0", "c#0"]  # a's second chunk outranks its first; b keeps raw rank 3
    return {
        "settings": {"top_k": 2, "dedup": dedup},
        "fused": {"score_kind": "rrf", "items": [_item(c, n) for n, c in enumerate(fused, start=1)]},
        "reranked": {"score_kind": "ltr", "items": [_item(c, n, fused_rank=fused.index(c) + 1)
                                                    for n, c in enumerate(reranked, start=1)]},
        "final": [_item(c, n) for n, c in enumerate(final_ids, start=1)],
        "lost_by_reranker": [],
    }


def _status(trace):
    rows = tables.movement_rows(view(trace))
    assert len(rows) == 2 * len(trace["reranked"]["items"])
    return {r["chunk_id"]: r["status"] for r in rows}


def test_statuses_follow_the_deduplicated_final_list() -> None:
    # dedup by parent: fused keeps a#0 and b#0; the reranked list keeps a#1 (a#0 is its parent's second chunk) and b#0
    trace = _trace(["a#1", "b#0"])
    assert _status(trace) == {
        "a#1": "moved in",    # in the final list; the fused top_k held a's other chunk
        "a#0": "fell out",    # reranked #2 ≤ top_k, but dedup kept its parent's better chunk a#1
        "b#0": "stayed in",   # raw ranks 3 → 3 > top_k, yet second in both deduplicated lists: the answer used it
        "d#0": "stayed out",
        "c#0": "stayed out",
    }
    rows = tables.movement_rows(view(trace))
    inside = {r["chunk_id"] for r in rows if r["status"] in ("stayed in", "moved in")}
    assert inside == {f["chunk_id"] for f in trace["final"]}
    assert {r["chunk_id"]: r["final_rank"] for r in rows if r["stage"] == "reranked"} == {
        "a#1": 1, "a#0": None, "b#0": 2, "d#0": None, "c#0": None}


def test_a_chunk_the_gate_dropped_is_out() -> None:
    assert _status(_trace(["a#1"]))["b#0"] == "fell out"
    refused = _status(_trace([]))  # a refusal: nothing reached the answer
    assert set(refused.values()) == {"fell out", "stayed out"} and refused["a#0"] == refused["b#0"] == "fell out"


def test_dedup_by_chunk_reads_raw_ranks() -> None:
    # dedup by chunk: the fused top_k is a#0, a#1 and the final list the reranked top two
    assert _status(_trace(["a#1", "a#0"], dedup="chunk")) == {
        "a#1": "stayed in", "a#0": "stayed in", "b#0": "stayed out", "d#0": "stayed out", "c#0": "stayed out"}

"""What the property-based tests share: the example budget, and the invariants every trace must hold (their
embedder is :class:`helpers.fakes.HashEmbedder`)."""

from __future__ import annotations

import os
from typing import Any, Iterable

#: ``HYPOTHESIS_PROFILE=fuzz`` (``make fuzz``) multiplies every test's example budget by this factor.
FUZZ_FACTOR = 20
FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"


def budget(examples: int) -> int:
    """The test's example count: ``examples`` in the default run, ``FUZZ_FACTOR`` times that in ``make fuzz``."""
    return examples * FUZZ_FACTOR if FUZZ else examples


def typed(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def trace_chunk_ids(data: dict[str, Any]) -> list[str]:
    """Every chunk id a trace names: the four lists, every variant's lists, the final list and the citations."""
    ids = []
    for name in ("lexical", "dense", "fused", "reranked"):
        ids += [i["chunk_id"] for i in data[name]["items"]]
    for variant in data["variants"]:
        for side in ("lexical", "dense"):
            ids += [i["chunk_id"] for i in (variant.get(side) or {}).get("items", [])]
    ids += [f["chunk_id"] for f in data["final"]]
    ids += list(data["answer"].get("citations") or [])
    for sentence in data["answer"].get("sentences") or []:
        ids += list(sentence.get("citations") or [])
    return ids


def assert_trace_invariants(trace: Any, chunk_by_id: dict[str, Any], filters: dict[str, Iterable[Any]]) -> None:
    """The tier is one of the five; every chunk the trace names exists and satisfies every filter exactly
    (value and type: no item of another tenant anywhere); citations name only final chunks."""
    from retrieval.stages.tiers import TIERS

    data = trace.to_dict()
    assert data["tier"] in TIERS, data["tier"]
    wanted = {key: {typed(v) for v in values} for key, values in filters.items()}
    for cid in trace_chunk_ids(data):
        chunk = chunk_by_id[cid]
        for key, allowed in wanted.items():
            assert key in chunk.metadata and typed(chunk.metadata[key]) in allowed, (cid, key, chunk.metadata)
    final = {f["chunk_id"] for f in data["final"]}
    assert set(data["answer"].get("citations") or []) <= final


def lists_of(trace: Any) -> dict[str, list[tuple[str, float]]]:
    """The ranked lists of a trace as (chunk id, rounded score) pairs, for NFC = NFD comparisons."""
    data = trace.to_dict()
    out = {name: [(i["chunk_id"], round(i["score"], 6)) for i in data[name]["items"]]
           for name in ("lexical", "dense", "fused", "reranked")}
    out["final"] = [(f["chunk_id"], round(f["score"], 6)) for f in data["final"]]
    return out

"""What-if re-fusion on one question, and manual rankings (the lab's fixture exercises as a tool).

Pure functions over plain ranked id lists: nothing is searched. :func:`what_if` drops a document from one
ranker's list or injects one at a chosen rank, re-fuses with :func:`~retrieval.stages.fusion.rrf` (or its weighted
form), and reports each item's rank and score before and after. A document absent from every list never
appears in a fusion: injecting it is the only way it enters, which is the lab's point about coverage.

:func:`manual_fusion` fuses rankings typed by a user (e.g. the lab fixture ``d1,d3,d2`` / ``d2,d1,d4``),
after removing from every list the documents a tenant filter excludes. Its output is fixture data, not a
benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..core.defaults import RRF_K
from ..core.types import RankedList
from ..stages.fusion import rrf, weighted_rrf

FIXTURE_LABEL = "fixture data typed by hand: a demonstration of the fusion, not a benchmark"


@dataclass(frozen=True)
class Edit:
    """One change to the generators' lists.

    Attributes:
        action: ``"drop"`` (remove ``doc`` from ``ranker``'s list) or ``"inject"`` (insert ``doc`` into
            ``ranker``'s list at 1-based ``rank``; a rank past the end appends).
    """

    action: str
    ranker: str
    doc: str
    rank: int = 1


def parse_ranking(text: str) -> list[str]:
    """``"d1, d3 d2"`` → ``["d1", "d3", "d2"]`` (commas, spaces or new lines separate ids).

    Raises:
        ValueError: an id listed twice.
    """
    ids = [t for t in text.replace(",", " ").split() if t]
    seen = set()
    for i in ids:
        if i in seen:
            raise ValueError(f"'{i}' is listed twice in one ranking")
        seen.add(i)
    return ids


def parse_mapping(text: str) -> dict[str, str]:
    """``"d1=A, d2=A, d3=B"`` → ``{"d1": "A", "d2": "A", "d3": "B"}``.

    Raises:
        ValueError: an entry without ``=``.
    """
    out = {}
    for entry in text.replace("\n", ",").split(","):
        if not entry.strip():
            continue
        doc, sep, value = entry.partition("=")
        if not sep or not doc.strip() or not value.strip():
            raise ValueError(f"'{entry.strip()}' is not doc=value")
        out[doc.strip()] = value.strip()
    return out


def apply_edits(lists: Mapping[str, Sequence[str]], edits: Sequence[Edit]) -> dict[str, list[str]]:
    """New lists with ``edits`` applied in order (the inputs are not changed).

    Raises:
        ValueError: an unknown action or ranker, a rank < 1, or injecting a document already in that list.
    """
    out = {name: list(ids) for name, ids in lists.items()}
    for edit in edits:
        if edit.ranker not in out:
            raise ValueError(f"unknown ranker '{edit.ranker}' (lists: {', '.join(out)})")
        ids = out[edit.ranker]
        if edit.action == "drop":
            out[edit.ranker] = [i for i in ids if i != edit.doc]
        elif edit.action == "inject":
            if edit.rank < 1:
                raise ValueError("ranks start at 1")
            if edit.doc in ids:
                raise ValueError(f"'{edit.doc}' is already in the {edit.ranker} list")
            out[edit.ranker] = ids[: edit.rank - 1] + [edit.doc] + ids[edit.rank - 1 :]
        else:
            raise ValueError(f"unknown action '{edit.action}' (drop or inject)")
    return out


def _fuse(lists: Mapping[str, Sequence[str]], k: int, weights: Mapping[str, float] | None,
          parents: Mapping[str, str] | None) -> RankedList:
    plain = {name: list(ids) for name, ids in lists.items()}
    if weights:
        return weighted_rrf(plain, k=k, weights=weights, parents=parents)
    return rrf(plain, k=k, parents=parents)


def what_if(lists: Mapping[str, Sequence[str]], edits: Sequence[Edit], k: int = RRF_K,
            weights: Mapping[str, float] | None = None, parents: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Fuse the lists as they are and after ``edits``; compare.

    Args:
        lists: ranker name → ranked ids, best first (e.g. a trace's lexical and dense chunk ids).
        edits: drops and injections, applied in order.
        k: RRF constant; weights: optional per-ranker weights (weighted RRF).
        parents: chunk id → parent id (defaults to the id itself).

    Returns:
        ``{"before": RankedList, "after": RankedList, "lists": edited lists, "rows": [{"id", "rank_before",
        "rank_after", "score_before", "score_after", "movement"}]}``; ``movement`` is
        ``rank_before − rank_after`` (positive = moved up), ``None`` when absent on one side.
    """
    edited = apply_edits(lists, edits)
    before = _fuse(lists, k, weights, parents)
    after = _fuse(edited, k, weights, parents)
    b = {i.chunk_id: i for i in before.items}
    a = {i.chunk_id: i for i in after.items}
    rows = []
    for cid in list(dict.fromkeys([*a, *b])):
        rb, ra = (b[cid].rank if cid in b else None), (a[cid].rank if cid in a else None)
        rows.append({"id": cid, "rank_before": rb, "rank_after": ra,
                     "score_before": b[cid].score if cid in b else None,
                     "score_after": a[cid].score if cid in a else None,
                     "movement": rb - ra if rb is not None and ra is not None else None})
    rows.sort(key=lambda r: (r["rank_after"] is None, r["rank_after"] or 0, r["rank_before"] or 0))
    return {"before": before, "after": after, "lists": edited, "rows": rows}


def manual_fusion(lists: Mapping[str, Sequence[str]], k: int = RRF_K, top_k: int | None = None,
                  weights: Mapping[str, float] | None = None, doc_values: Mapping[str, str] | None = None,
                  allowed: str | None = None) -> dict[str, Any]:
    """Fuse hand-typed rankings, with the filter applied inside every list before the fusion.

    Args:
        lists: ranker name → ranked ids.
        doc_values: doc → value of the filtered field (e.g. its tenant); ``allowed``: the value to keep.
            A doc without a value is excluded when a filter is set (a missing field never matches).
        top_k: cut of the fused list (``None`` keeps all).

    Returns:
        ``{"label", "filtered": {ranker: [kept ids]}, "removed": {ranker: [ids]}, "fused": RankedList,
        "rows": [{"rank", "id", "score", "<ranker> rank", "<ranker> contribution", …}]}``.
    """
    filtered: dict[str, list[str]] = {}
    removed: dict[str, list[str]] = {}
    for name, ids in lists.items():
        if allowed is None:
            filtered[name], removed[name] = list(ids), []
        else:
            values = doc_values or {}
            filtered[name] = [i for i in ids if values.get(i) == allowed]
            removed[name] = [i for i in ids if values.get(i) != allowed]
    fused = _fuse(filtered, k, weights, None)
    items = fused.items[:top_k] if top_k else fused.items
    rows = []
    for item in items:
        row: dict[str, Any] = {"rank": item.rank, "id": item.chunk_id, "score": item.score}
        for name in lists:
            row[f"{name} rank"] = (item.ranks or {}).get(name)
            row[f"{name} contribution"] = (item.contributions or {}).get(name)
        rows.append(row)
    return {"label": FIXTURE_LABEL, "filtered": filtered, "removed": removed, "fused": fused, "rows": rows}

"""The rank grid of one trace: one row per chunk found by any list (the union of ``lexical``, ``dense``,
``fused`` and ``reranked``): its rank and score in each, its RRF shares, its move in the rerank, and its final
position or why it was cut before the answer (:data:`FATES`).

The provenance card of one chunk is :mod:`.card`; why one chunk ranks above another, :mod:`.why`. Like every
module of :mod:`retrieval.explain`, it reads the typed view of a trace dict (:class:`~retrieval.pipeline.view.
TraceView`), returns plain values,
never re-scores and never imports streamlit. Texts shown to people are the interface's: this module returns
codes and numbers.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.reasons import Reason
from ..pipeline.view import Final, Item, TraceView
from ..stages.gate import BM25, COSINE
from ..stages.select import MMR_NOT_APPLIED
from .tables import dedup_key, relevance_of

#: Why a chunk of the grid is not in the final list (``fate``), in pipeline order; ``final`` when it is.
#:
#: * ``not_fused`` — a generator found it but the fusion did not take that list (a weight of 0, a decomposed
#:   question fusing its parts);
#: * ``window`` — fused, but ranked below the reranker's window (``reranker_max_input``), so never reranked, and
#:   not needed to fill the top_k (the fused tail fills it when the window holds fewer: ``fate_detail["tail"]``);
#: * ``dedup`` — another chunk of its parent ranked better (dedup by parent); ``fate_detail["kept"]`` names it,
#:   and ``fate_detail["context"]`` its position in the answer's context where ``context_siblings`` added it there;
#: * ``top_k`` — deduplicated but below the first ``top_k``;
#: * ``mmr`` — not picked by MMR among the first candidates;
#: * ``gate`` — read by the gate and refused (its cosine, or BM25, below the threshold; or the whole request
#:   refused by the code identity or the learned support gate: ``fate_detail["reason"]``).
FATES = ("final", "not_fused", "window", "dedup", "top_k", "mmr", "gate")

_LISTS = ("lexical", "dense", "fused", "reranked")


def items_of(trace: TraceView, name: str) -> list[Item]:
    """The items of the ranked list ``name``, by rank."""
    return sorted(trace.ranked(name).items, key=lambda i: i.rank)


def by_id(trace: TraceView, name: str) -> dict[str, Item]:
    """Chunk id → its item in the ranked list ``name``."""
    return {item.chunk_id: item for item in items_of(trace, name)}


def mmr_ran(trace: TraceView) -> bool:
    """MMR was asked for and no note says it fell back to the plain top_k."""
    if trace.settings.mmr_lambda is None:
        return False
    notes = [Reason.from_dict(n.note.code) for n in trace.notes]
    return not any(n is not None and n.mentions(MMR_NOT_APPLIED.code) for n in notes)


def final_stage(trace: TraceView) -> str:
    """``reranked`` when the rerank produced a list (the selection reads it), else ``fused``."""
    return "reranked" if trace.reranked.items else "fused"


def selection_source(trace: TraceView) -> list[Item]:
    """The list the selection read, in its order: the final stage's items, then, when the selection took some
    from the fused tail (items of ``selected`` marked ``fused_tail``), the fused items the rerank did not hold."""
    stage = final_stage(trace)
    items = items_of(trace, stage)
    if stage == "reranked" and any(i.fused_tail for i in trace.selected):
        held = {i.chunk_id for i in items}
        items = items + [i for i in items_of(trace, "fused") if i.chunk_id not in held]
    return items


def shares(contributions: Mapping[str, float] | None) -> dict[str, float]:
    """Each ranker's share of an item's fused score, in [0, 1] (they sum to 1); ``{}`` without contributions."""
    total = sum((contributions or {}).values())
    if not contributions or total <= 0:
        return {}
    return {ranker: value / total for ranker, value in contributions.items()}


def fates(trace: TraceView) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every chunk of the four lists → ``(fate, detail)`` (:data:`FATES`), replaying the selection the trace
    records: the final stage's list deduplicated as the request was (``settings.dedup``), cut to the ``selected``
    chunks (``top_k`` or MMR), then the gate's ``final``.

    ``detail``: ``{"position": n}`` (final, 1-based), ``{"kept": chunk_id}`` (dedup; with ``"context": n`` where
    the chunk is in the answer's context beside it), ``{"top_k": n}``,
    ``{"max_input": n}`` (window), ``{"kind": "cosine"|"bm25", "value": v or None, "threshold": t}`` or
    ``{"reason": code or text}`` (gate; the latter when the whole request was refused: the recorded reason's
    code where the trace has one, rendered by the page in its language).
    """
    settings = trace.settings
    final = {item.chunk_id: item.rank for item in trace.gated}
    context = {item.chunk_id: item.rank for item in trace.final if item.chunk_id not in final}
    selected = {item.chunk_id for item in trace.selected}
    tail = {item.chunk_id for item in trace.selected if item.fused_tail}
    source = selection_source(trace)
    in_source = {item.chunk_id for item in source}
    fused = {item.chunk_id for item in items_of(trace, "fused")}
    kept_for: dict[str, str] = {}
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    gate = trace.gate
    gate_kind = BM25.name if str(gate.kind or "").startswith(BM25.name) else COSINE.name
    dense = by_id(trace, "dense")
    lexical = by_id(trace, "lexical")
    for item in source:
        cid, key = item.chunk_id, dedup_key(trace, item)
        if cid in final:
            out[cid] = ("final", {"position": final[cid], **({"tail": True} if cid in tail else {})})
        elif key in kept_for and kept_for[key] != cid:
            out[cid] = ("dedup", {"kept": kept_for[key], **({"context": context[cid]} if cid in context else {})})
        elif cid not in selected:
            out[cid] = ("mmr", {}) if mmr_ran(trace) else ("top_k", {"top_k": settings.top_k})
        elif not final:  # the whole request was refused: one reason for every chunk the gate read
            out[cid] = ("gate", {"reason": gate.reason.value or trace.tier_reason.value or ""})
        else:
            read = (dense if gate_kind == COSINE.name else lexical).get(cid)
            out[cid] = ("gate", {"kind": gate_kind, "value": read.score if read is not None else None,
                                 "threshold": gate.threshold, **({"tail": True} if cid in tail else {})})
        kept_for.setdefault(key, cid)
    for name in _LISTS:
        for item in items_of(trace, name):
            cid = item.chunk_id
            if cid in out:
                continue
            if cid in fused and cid not in in_source:
                out[cid] = ("window", {"max_input": settings.reranker_max_input})
            else:
                out[cid] = ("not_fused", {})
    return out


def _rank(item: Item | None) -> int | None:
    return None if item is None else item.rank


def _score(item: Item | None) -> float | None:
    return None if item is None else item.score


def movement(fused_rank: int | None, reranked_rank: int | None) -> int | None:
    """``fused_rank − reranked_rank``: positive moved up in the rerank, negative down; ``None`` when not reranked."""
    if fused_rank is None or reranked_rank is None:
        return None
    return fused_rank - reranked_rank


def grid_rows(trace: TraceView, relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The rank grid: one row per chunk of any of the four lists (their union), best final position first.

    Each row: ``chunk_id``, ``parent_id``, ``relevance`` (:func:`retrieval.explain.views.relevance_of`: ``None`` for an
    unlabeled question), ``bm25_rank``/``bm25`` (BM25, unbounded), ``dense_rank``/``cosine`` (cosine in [-1, 1]
    from the dense list, else the gate's read of the chunk's vector, ``cosine_from`` says which), ``fused_rank``/
    ``rrf`` (the fused score: RRF by default, the ``settings.fusion`` method otherwise), ``shares`` (ranker →
    share of ``rrf``), ``rerank_rank``/``rerank`` (the reranker's score, its own scale), ``move``
    (:func:`movement`), ``final`` (1-based position in the final list, else ``None``), ``fate`` and
    ``fate_detail`` (:func:`fates`), ``where`` (the chunk's place in its source as its trace items carry it:
    :func:`retrieval.ingest.location.location`, ``{}`` where it has none). A rank or score is ``None`` where the list
    does not hold the chunk.

    Sorted by final position, then fused rank, then reranked, BM25 and dense rank, then chunk id.
    """
    lists = {name: by_id(trace, name) for name in _LISTS}
    final = {item.chunk_id: item for item in trace.final}
    fate_of = fates(trace)
    order: list[str] = []
    for name in _LISTS:
        order.extend(cid for cid in lists[name] if cid not in order)
    rows = []
    for cid in order:
        lex, den, fus, rer = (lists[name].get(cid) for name in _LISTS)
        parent = next(i.parent_id for i in (lex, den, fus, rer) if i is not None)
        kept: Final | None = final.get(cid)
        where = next((dict(i.where) for i in (fus, rer, lex, den, kept) if i is not None and i.where), {})
        cosine, source = (den.score, "dense") if den is not None else (None, None)
        if cosine is None and kept is not None and kept.similarity is not None:
            cosine, source = kept.similarity, "gate"
        fate, detail = fate_of[cid]
        fused_rank = fus.rank if fus is not None else None
        rows.append({
            "chunk_id": cid, "parent_id": parent, "relevance": relevance_of(parent, relevant, graded),
            "bm25_rank": _rank(lex), "bm25": _score(lex),
            "dense_rank": _rank(den), "cosine": cosine, "cosine_from": source,
            "fused_rank": fused_rank, "rrf": _score(fus), "shares": shares(fus.contributions if fus else None),
            "rerank_rank": _rank(rer), "rerank": _score(rer),
            "move": movement(fused_rank if rer is None or rer.fused_rank is None else rer.fused_rank, _rank(rer)),
            "final": detail["position"] if fate == "final" else None, "fate": fate, "fate_detail": detail,
            "where": where,
        })

    def key(row: Mapping[str, Any]) -> tuple:
        far = float("inf")
        return tuple(far if row[k] is None else row[k] for k in ("final", "fused_rank", "rerank_rank", "bm25_rank",
                                                                 "dense_rank")) + (row["chunk_id"],)

    return sorted(rows, key=key)












#: The longest chunk label the grid shows; a longer id is cut to what tells it apart from the others.
LABEL_WIDTH = 24


def distinct_labels(ids: Sequence[str], width: int = LABEL_WIDTH) -> dict[str, str]:
    """A short label per chunk id that still tells the ids apart: an id that fits in ``width`` is shown whole;
    a longer one keeps its end and its ``#n`` (``reference__react__useLayoutEffect#10`` →
    ``…useLayoutEffect#10``), where ids of one site differ; where two labels would read alike, the whole ids
    are kept. The card and the selection box name the whole id."""
    unique = list(dict.fromkeys(ids))
    labels = {}
    for cid in unique:
        if len(cid) <= width:
            labels[cid] = cid
            continue
        parent, sep, n = cid.rpartition("#")
        tail, body = (f"#{n}", parent) if sep else ("", cid)
        room = max(1, width - len(tail) - 1)
        labels[cid] = "…" + body[-room:] + tail
    if len(set(labels.values())) < len(unique):  # two would read alike: the whole ids
        return {cid: cid for cid in unique}
    return labels
